import { describe, expect, it } from 'vitest';
import { readFixture } from '../../../test/fixtures.js';
import { operatorReadings, type OperatorHalfHour } from '../../core/uk-operator.js';
import { parseIntensity, type IntensityResult } from './parse.js';

const T = (text: string) => Date.parse(text) / 1000;

function halfHoursOf(result: IntensityResult): readonly OperatorHalfHour[] {
  if (result.kind !== 'half-hours') throw new Error(`expected half-hours, got ${result.kind}`);
  return result.halfHours;
}

const pastDay = parseIntensity(
  readFixture('uk-operator', 'neso_national_pt24h_2023-03-13T1200Z_to_2023-03-14T1200Z.json'),
);
const nextTwoDays = parseIntensity(
  readFixture('uk-operator', 'neso_national_fw48h_2023-03-14T1200Z_to_2023-03-16T1200Z.json'),
);
// Both were requested at 12:01Z (SOURCES.md).
const requestedAt = T('2023-03-14T12:01Z');

describe('parseIntensity on recorded payloads', () => {
  it('pt24h: 48 settled half-hours become 48 actual readings, values unchanged', () => {
    expect(pastDay).toMatchObject({ kind: 'half-hours', dropped: [] });
    expect(halfHoursOf(pastDay)).toHaveLength(48);
    const { readings, quality } = operatorReadings('GB', halfHoursOf(pastDay), requestedAt);
    expect(quality).toMatchObject({ pointsStored: 48, incompleteHours: 0 });
    expect(readings.every(({ method }) => method === 'upstream:uk-operator:actual')).toBe(true);
    expect(readings.every(({ complete, mix }) => complete && mix === null)).toBe(true);
    expect(readings[0]).toEqual({
      zone: 'GB',
      ts: T('2023-03-13T12:00Z'),
      value: 54, // forecast 47
      method: 'upstream:uk-operator:actual',
      complete: true,
      mix: null,
    });
    expect(readings[1]).toMatchObject({ ts: T('2023-03-13T12:30Z'), value: 55 });
    expect(readings.at(-1)).toMatchObject({ ts: T('2023-03-14T11:30Z'), value: 97 });
  });

  it('fw48h: all forecasts; only the half-hour in progress becomes a forecast reading', () => {
    expect(halfHoursOf(nextTwoDays)).toHaveLength(96);
    expect(halfHoursOf(nextTwoDays).every(({ actual }) => actual === null)).toBe(true);
    const { readings } = operatorReadings('GB', halfHoursOf(nextTwoDays), requestedAt);
    expect(readings).toEqual([
      {
        zone: 'GB',
        ts: T('2023-03-14T12:00Z'),
        value: 93,
        method: 'upstream:uk-operator:forecast',
        complete: true,
        mix: null,
      },
    ]);
  });

  it('pt24h and fw48h together: the settled day plus one forecast for the current half-hour', () => {
    const { readings } = operatorReadings(
      'GB',
      [...halfHoursOf(pastDay), ...halfHoursOf(nextTwoDays)],
      requestedAt,
    );
    expect(readings).toHaveLength(49);
    expect(readings.filter(({ method }) => method === 'upstream:uk-operator:forecast')).toEqual([
      expect.objectContaining({ ts: T('2023-03-14T12:00Z'), value: 93 }),
    ]);
  });

  it('an hour later, the forecast moves to the new current half-hour (13:00Z, 89)', () => {
    const { readings } = operatorReadings('GB', halfHoursOf(nextTwoDays), T('2023-03-14T13:10Z'));
    expect(readings.map(({ ts, value }) => [ts, value])).toEqual([[T('2023-03-14T13:00Z'), 89]]);
  });
});

describe('parseIntensity on other replies', () => {
  const entry = (from: string, to: string, forecast: unknown, actual: unknown) => ({
    from,
    to,
    intensity: { forecast, actual, index: 'low' },
  });

  it('drops and lists unusable entries, keeps the rest', () => {
    const result = parseIntensity(
      JSON.stringify({
        data: [
          entry('2023-03-14T12:00Z', '2023-03-14T12:30Z', 93, null),
          entry('2023-03-14T12:30Z', '2023-03-14T13:30Z', 93, null),
          entry('2023-03-14T12:15Z', '2023-03-14T12:45Z', 93, null),
          entry('yesterday', '2023-03-14T12:30Z', 93, null),
          entry('2023-03-14T13:00Z', '2023-03-14T13:30Z', '93', null),
          entry('2023-03-14T13:30Z', '2023-03-14T14:00Z', null, null),
          { from: '2023-03-14T14:00Z', to: '2023-03-14T14:30Z' },
          entry('2023-03-14T14:30Z', '2023-03-14T15:00Z', 80, 82),
        ],
      }),
    );
    expect(result.kind === 'half-hours' && result.dropped).toEqual([
      'entry 1: 2023-03-14T12:30Z–2023-03-14T13:30Z is not a half-hour',
      'entry 2: 2023-03-14T12:15Z–2023-03-14T12:45Z is not a half-hour',
      'entry 3: unreadable from/to',
      'entry 4: forecast/actual not a number or null',
      'entry 5: neither forecast nor actual',
      'entry 6: no intensity',
    ]);
    expect(halfHoursOf(result)).toEqual([
      { start: T('2023-03-14T12:00Z'), forecast: 93, actual: null },
      { start: T('2023-03-14T14:30Z'), forecast: 80, actual: 82 },
    ]);
  });

  it('the error body is a tagged upstream error', () => {
    const body = { error: { code: '400 Bad Request', message: 'Please enter a valid date.' } };
    expect(parseIntensity(JSON.stringify(body))).toEqual({
      kind: 'upstream-error',
      code: '400 Bad Request',
      message: 'Please enter a valid date.',
    });
  });

  it.each([
    ['an HTML error page', '<html><body><h1>502 Bad Gateway</h1></body></html>'],
    ['a truncated body', '{"data":[{"from":"2023-03-14T12:00Z",'],
    ['an empty body', ''],
    ['no data list', '{"data":{}}'],
  ])('%s is an invalid payload', (_name, body) => {
    expect(parseIntensity(body).kind).toBe('invalid-payload');
  });
});
