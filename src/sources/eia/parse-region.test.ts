import { describe, expect, it } from 'vitest';
import { readFixture } from '../../../test/fixtures.js';
import { findZone, type Zone } from '../../core/zones.js';
import { eiaStoredForecasts } from './index.js';
import { parseRegionData, type RegionDataResult } from './parse-region.js';

/** Expected values read off the recorded reply by hand (rows of PJM and US48). */
const FILE =
  'eia_region-data_all-respondents_2025-04-20T20_to_2025-04-22T07_hourly_D-DF-NG-TI.json';
const T = (text: string) => Date.parse(text) / 1000;
const H = 3600;

function regionData(result: RegionDataResult) {
  if (result.kind !== 'region-data') throw new Error(`expected region-data, got ${result.kind}`);
  return result;
}

describe('parseRegionData on the recorded reply', () => {
  const result = regionData(parseRegionData(readFixture('us-agency', FILE)));
  const pjm = result.respondents.get('PJM');

  it('reads the envelope: string total, the paging warning, 5000 rows, nothing dropped', () => {
    expect(result).toMatchObject({ total: 15906247, rows: 5000, truncated: true, dropped: [] });
    expect(result.respondents.size).toBe(75);
  });

  it('keys rows on type, labels hours by their start, reads string values', () => {
    // `2025-04-21T03` (hour ending) is the hour starting 02:00Z.
    expect(pjm?.get('D')?.get(T('2025-04-21T02:00Z'))).toBe(76398);
    expect(pjm?.get('DF')?.get(T('2025-04-21T02:00Z'))).toBe(74023);
    expect(pjm?.get('D')?.get(T('2025-04-21T19:00Z'))).toBe(84962);
    expect(pjm?.get('DF')?.get(T('2025-04-21T19:00Z'))).toBe(86507);
    expect(result.respondents.get('US48')?.get('D')?.get(T('2025-04-21T02:00Z'))).toBe(424970);
  });

  it('gives each type its own frontier: DF reaches 8 hours past D for PJM', () => {
    const last = (type: string) => Math.max(...(pjm?.get(type)?.keys() ?? []));
    expect(last('NG')).toBe(T('2025-04-21T02:00Z'));
    expect(last('D')).toBe(T('2025-04-21T19:00Z'));
    expect(last('DF')).toBe(T('2025-04-22T03:00Z'));
    expect(pjm?.get('DF')?.get(T('2025-04-22T03:00Z'))).toBe(72917);
    expect(pjm?.get('D')?.size).toBe(24);
    expect(pjm?.get('DF')?.size).toBe(32);
  });

  it('as stored forecasts: DF issued 6 h ahead or at the fetch, D at the end of its hour', () => {
    const zone = findZone('US-PJM') as Zone;
    const fetchedAt = T('2025-04-21T21:00Z');
    const window = { fromTs: T('2025-04-21T00:00Z'), toTs: T('2025-04-23T00:00Z') };
    const stored = eiaStoredForecasts(zone, pjm, window, fetchedAt);
    const df = stored.filter(({ kind }) => kind === 'us-agency:demand-forecast');
    const demand = stored.filter(({ kind }) => kind === 'us-agency:demand');
    // DF rows from the hour starting 2025-04-21T00:00Z to 2025-04-22T03:00Z, in the window.
    expect(df).toHaveLength(28);
    expect(df.find(({ ts }) => ts === T('2025-04-21T19:00Z'))).toEqual({
      zone: 'US-PJM',
      ts: T('2025-04-21T19:00Z'),
      kind: 'us-agency:demand-forecast',
      issuedAt: T('2025-04-21T13:00Z'),
      value: 86507,
    });
    // Further ahead than 6 h: no earlier than the fetch.
    expect(df.at(-1)).toMatchObject({
      ts: T('2025-04-22T03:00Z'),
      issuedAt: fetchedAt,
      value: 72917,
    });
    expect(demand.at(-1)).toEqual({
      zone: 'US-PJM',
      ts: T('2025-04-21T19:00Z'),
      kind: 'us-agency:demand',
      issuedAt: T('2025-04-21T19:00Z') + H,
      value: 84962,
    });
    expect(stored.every(({ ts }) => ts >= window.fromTs && ts < window.toTs)).toBe(true);
  });
});

describe('parseRegionData on small and bad payloads', () => {
  const page = (data: unknown[], total: unknown = data.length) =>
    JSON.stringify({ response: { total, frequency: 'hourly', data } });

  it('tolerates nulls and numbers, drops bad rows one by one', () => {
    const result = regionData(
      parseRegionData(
        page([
          { period: '2025-04-21T03', respondent: 'PJM', type: 'DF', value: null },
          { period: '2025-04-21T03', respondent: 'PJM', type: 'D', value: 76398 },
          { period: '2025-04-21T04', respondent: 'PJM', type: 'D', value: 'n/a' },
          { period: '2025-04-21', respondent: 'PJM', type: 'D', value: '1' },
          { period: '2025-04-21T05', respondent: 'PJM', value: '1' },
        ]),
      ),
    );
    expect(result.respondents.get('PJM')?.get('D')).toEqual(
      new Map([[T('2025-04-21T02:00Z'), 76398]]),
    );
    expect(result.respondents.get('PJM')?.has('DF')).toBe(false);
    expect(result.dropped).toHaveLength(3);
  });

  it('an empty result is valid; malformed, foreign and error bodies are not data', () => {
    expect(regionData(parseRegionData(page([], '0')))).toMatchObject({ total: 0, rows: 0 });
    const recorded = readFixture('us-agency', FILE);
    expect(parseRegionData(recorded.slice(0, 1000)).kind).toBe('invalid-payload');
    expect(parseRegionData('<html>maintenance</html>').kind).toBe('invalid-payload');
    expect(parseRegionData('')).toMatchObject({ kind: 'invalid-payload' });
    expect(
      parseRegionData('{"error":{"code":"API_KEY_INVALID","message":"An invalid api_key"}}'),
    ).toMatchObject({ kind: 'upstream-error', code: 'API_KEY_INVALID' });
  });
});
