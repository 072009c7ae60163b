import { describe, expect, it } from 'vitest';
import {
  eiaDemandForecastIssuedAt,
  eiaDemandIssuedAt,
  entsoeDayAheadIssuedAt,
  marketDayStartOf,
  nesoForecastIssuedAt,
} from './forecast-issue.js';

const T = (text: string) => Date.parse(text) / 1000;

describe('issue-time rules', () => {
  it('ENTSO-E day-ahead: six hours before the market day, or the fetch if earlier', () => {
    // An archive fetched years later: the nominal publication the afternoon before.
    expect(entsoeDayAheadIssuedAt(T('2016-01-01T23:00Z'), T('2022-08-10T10:04Z'))).toBe(
      T('2016-01-01T17:00Z'),
    );
    // Summer day (CEST): the day starts 22:00Z, so 16:00Z.
    expect(entsoeDayAheadIssuedAt(T('2024-06-30T22:00Z'), T('2024-07-05T00:00Z'))).toBe(
      T('2024-06-30T16:00Z'),
    );
    // Fetched before the nominal time (the upstream already had it): the fetch time.
    expect(entsoeDayAheadIssuedAt(T('2024-02-09T23:00Z'), T('2024-02-09T12:30Z'))).toBe(
      T('2024-02-09T12:30Z'),
    );
  });

  it('the market day of a point is its Period start when the Period is one day (23-25 h)', () => {
    const start = T('2016-10-29T22:00Z');
    const end = T('2016-10-30T23:00Z'); // 25 h, the autumn DST day
    expect(marketDayStartOf(start, end, T('2016-10-30T22:00Z'))).toBe(start);
    expect(
      marketDayStartOf(T('2016-03-26T23:00Z'), T('2016-03-27T22:00Z'), T('2016-03-27T21:00Z')),
    ).toBe(T('2016-03-26T23:00Z'));
  });

  it('a Period spanning weeks (compressed A03): the latest day start a DST shift allows', () => {
    const start = T('2025-01-01T23:00Z');
    const end = T('2025-03-17T23:00Z');
    // 10:00Z on 1 March: the day started 23:00Z on 28 February at the latest (00:00Z is the
    // +1 h alignment, which is later and has started, so it is taken: never too early).
    expect(marketDayStartOf(start, end, T('2025-03-01T10:00Z'))).toBe(T('2025-03-01T00:00Z'));
    // 23:30Z: a day aligned on 23:00Z started half an hour ago, and that is the latest.
    expect(marketDayStartOf(start, end, T('2025-03-01T23:30Z'))).toBe(T('2025-03-01T23:00Z'));
    // Never before the Period's own start.
    expect(marketDayStartOf(start, end, T('2025-01-01T23:15Z'))).toBe(start);
  });

  it('EIA: DF six hours ahead of its hour or the fetch; D at the end of its hour', () => {
    expect(eiaDemandForecastIssuedAt(T('2025-04-22T03:00Z'), T('2025-04-21T21:00Z'))).toBe(
      T('2025-04-21T21:00Z'),
    );
    expect(eiaDemandForecastIssuedAt(T('2025-04-21T23:00Z'), T('2025-04-21T21:00Z'))).toBe(
      T('2025-04-21T17:00Z'),
    );
    expect(eiaDemandIssuedAt(T('2025-04-21T19:00Z'))).toBe(T('2025-04-21T20:00Z'));
  });

  it('NESO fw48h: the fetch time floored to the half hour', () => {
    expect(nesoForecastIssuedAt(T('2023-03-14T12:01Z'))).toBe(T('2023-03-14T12:00Z'));
    expect(nesoForecastIssuedAt(T('2023-03-14T12:59:59Z'))).toBe(T('2023-03-14T12:30Z'));
  });
});
