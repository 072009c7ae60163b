import { describe, expect, it } from 'vitest';
import { readFixture } from '../../../test/fixtures.js';
import {
  operatorMixes,
  operatorReadings,
  type OperatorHalfHour,
  type OperatorMixHalfHour,
} from '../../core/uk-operator.js';
import {
  parseGeneration,
  parseIntensity,
  type GenerationResult,
  type IntensityResult,
} from './parse.js';

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
      lifecycle: null,
      direct: null,
    });
    expect(readings[1]).toMatchObject({ ts: T('2023-03-13T12:30Z'), value: 55 });
    expect(readings.at(-1)).toMatchObject({ ts: T('2023-03-14T11:30Z'), value: 97 });
  });

  it('fw48h: all forecasts; only the half-hour in progress is kept, as a forecast', () => {
    expect(halfHoursOf(nextTwoDays)).toHaveLength(96);
    expect(halfHoursOf(nextTwoDays).every(({ actual }) => actual === null)).toBe(true);
    const { readings, forecasts } = operatorReadings('GB', halfHoursOf(nextTwoDays), requestedAt);
    expect(readings).toEqual([]);
    expect(forecasts).toEqual([
      {
        zone: 'GB',
        ts: T('2023-03-14T12:00Z'),
        kind: 'uk-operator:intensity',
        issuedAt: requestedAt,
        value: 93,
      },
    ]);
  });

  it('pt24h and fw48h together: the settled day plus one forecast for the current half-hour', () => {
    const { readings, forecasts } = operatorReadings(
      'GB',
      [...halfHoursOf(pastDay), ...halfHoursOf(nextTwoDays)],
      requestedAt,
    );
    expect(readings).toHaveLength(48);
    expect(readings.every(({ method }) => method === 'upstream:uk-operator:actual')).toBe(true);
    expect(forecasts).toEqual([expect.objectContaining({ ts: T('2023-03-14T12:00Z'), value: 93 })]);
  });

  it('an hour later, the forecast moves to the new current half-hour (13:00Z, 89)', () => {
    const { forecasts } = operatorReadings('GB', halfHoursOf(nextTwoDays), T('2023-03-14T13:10Z'));
    expect(forecasts?.map(({ ts, value }) => [ts, value])).toEqual([[T('2023-03-14T13:00Z'), 89]]);
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

  it('no data list is an invalid payload', () => {
    expect(parseIntensity('{"data":{}}').kind).toBe('invalid-payload');
  });
});

function mixHalfHoursOf(result: GenerationResult): readonly OperatorMixHalfHour[] {
  if (result.kind !== 'mix-half-hours') throw new Error(`expected mixes, got ${result.kind}`);
  return result.halfHours;
}

// Fetched three days after the half-hour of `currentMix` (SOURCES.md), asked from 2026-06-26T00:00Z.
const mixRange = parseGeneration(
  readFixture(
    'uk-operator',
    'neso_generation_range_2026-06-25T2330Z_to_2026-07-03T0000Z_7days.json',
  ),
);
// `/generation` at about 2026-06-30T12:00Z: the provisional mix of the half-hour in progress.
const currentMix = parseGeneration(
  readFixture('uk-operator', 'neso_generation_current_2026-06-30T1200Z.json'),
);

/*
 * GB on each basis, by hand (docs/method.md, "Great Britain"; extensions.md §1): imports left out,
 * wind booked as onshore, intensity = sum(share x factor) / sum(included shares).
 * Lifecycle: biomass 230, coal 820, gas 490, hydro 24, nuclear 12, other 700, solar 48, wind 11.
 * Direct: coal 760, gas 370, other 575, every other fuel 0.
 */
const HAND = {
  // 2026-06-25T23:30Z, the range's first row (night, no solar):
  // biomass 5.9, coal 0, imports 0.3 (out), gas 44, nuclear 11.2, other 1.6, hydro 3.5, solar 0,
  // wind 33.6. Included: 5.9 + 0 + 44 + 11.2 + 1.6 + 3.5 + 0 + 33.6 = 99.8.
  // Lifecycle: 1357 + 0 + 21560 + 134.4 + 1120 + 84 + 0 + 369.6 = 24625 → 24625 / 99.8.
  // Direct: gas 44 x 370 = 16280, other 1.6 x 575 = 920 → 17200 / 99.8.
  night: { lifecycle: 246.743486973948, direct: 172.344689378758 },
  // 2026-06-27T12:00Z, midday with the most solar in the week's noons:
  // biomass 2.1, coal 0, imports 14 (out), gas 6.9, nuclear 8.7, other 2.5, hydro 0.4,
  // solar 34.6, wind 30.8. Included: 2.1 + 0 + 6.9 + 8.7 + 2.5 + 0.4 + 34.6 + 30.8 = 86.
  // Lifecycle: 483 + 0 + 3381 + 104.4 + 1750 + 9.6 + 1660.8 + 338.8 = 7727.6 → 7727.6 / 86.
  // Direct: gas 6.9 x 370 = 2553, other 2.5 x 575 = 1437.5 → 3990.5 / 86.
  sunny: { lifecycle: 89.855813953488, direct: 46.401162790698 },
  // 2026-06-30T12:00Z as the range has it (revised):
  // biomass 5.2, coal 0, imports 11.4 (out), gas 35.1, nuclear 8.6, other 1.2, hydro 0.5,
  // solar 26.4, wind 11.5. Included: 5.2 + 0 + 35.1 + 8.6 + 1.2 + 0.5 + 26.4 + 11.5 = 88.5.
  // Lifecycle: 1196 + 0 + 17199 + 103.2 + 840 + 12 + 1267.2 + 126.5 = 20743.9 → 20743.9 / 88.5.
  // Direct: gas 35.1 x 370 = 12987, other 1.2 x 575 = 690 → 13677 / 88.5.
  revised: { lifecycle: 234.394350282486, direct: 154.542372881356 },
  // The same half-hour from `/generation`, provisional:
  // biomass 5.4, coal 0, imports 12 (out), gas 35.1, nuclear 9, other 0, hydro 0, solar 25.9,
  // wind 12.6. Included: 5.4 + 0 + 35.1 + 9 + 0 + 0 + 25.9 + 12.6 = 88.
  // Lifecycle: 1242 + 0 + 17199 + 108 + 0 + 0 + 1243.2 + 138.6 = 19930.8 → 19930.8 / 88.
  // Direct: gas 35.1 x 370 = 12987 → 12987 / 88.
  provisional: { lifecycle: 226.486363636364, direct: 147.579545454545 },
};

describe('parseGeneration on recorded payloads', () => {
  it('range: 337 half-hours, the first one ending at the `from` asked (2026-06-26T00:00Z)', () => {
    expect(mixRange).toMatchObject({ kind: 'mix-half-hours', dropped: [] });
    const starts = mixHalfHoursOf(mixRange).map(({ start }) => start);
    expect(starts).toHaveLength(7 * 48 + 1);
    expect(starts[0]).toBe(T('2026-06-26T00:00Z') - 1800);
    expect(starts.at(-1)).toBe(T('2026-07-02T23:30Z'));
    expect(
      starts.every((start, index) => index === 0 || start - (starts[index - 1] ?? 0) === 1800),
    ).toBe(true);
  });

  it('range: shares keyed by fuel as published, ints and floats, imports kept', () => {
    const row = mixHalfHoursOf(mixRange).find(({ start }) => start === T('2026-06-30T12:00Z'));
    expect(Object.fromEntries(row?.shares ?? [])).toEqual({
      biomass: 5.2,
      coal: 0,
      imports: 11.4,
      gas: 35.1,
      nuclear: 8.6,
      other: 1.2,
      hydro: 0.5,
      solar: 26.4,
      wind: 11.5,
    });
  });

  it('range: GB lifecycle and direct of three half-hours, as computed by hand', () => {
    const { mixes, unknownCodes } = operatorMixes('GB', mixHalfHoursOf(mixRange));
    expect(unknownCodes).toEqual([]);
    expect(mixes).toHaveLength(337);
    const at = (instant: string) => mixes.find(({ ts }) => ts === T(instant));
    for (const [instant, hand] of [
      ['2026-06-25T23:30Z', HAND.night],
      ['2026-06-27T12:00Z', HAND.sunny],
      ['2026-06-30T12:00Z', HAND.revised],
    ] as const) {
      const mix = at(instant);
      expect(mix?.lifecycle).toBeCloseTo(hand.lifecycle, 9);
      expect(mix?.direct).toBeCloseTo(hand.direct, 9);
    }
    // The stored mix: categories only, imports out, wind as onshore.
    expect(at('2026-06-27T12:00Z')).toMatchObject({
      zone: 'GB',
      mix: {
        biomass: 2.1,
        coal: 0,
        gas: 6.9,
        nuclear: 8.7,
        other: 2.5,
        hydro: 0.4,
        solar: 34.6,
        'wind-onshore': 30.8,
      },
    });
  });

  it('current: `data` is one object; its provisional mix differs from the revised one', () => {
    expect(currentMix).toMatchObject({ kind: 'mix-half-hours', dropped: [] });
    const { mixes } = operatorMixes('GB', mixHalfHoursOf(currentMix));
    expect(mixes.map(({ ts }) => ts)).toEqual([T('2026-06-30T12:00Z')]);
    expect(mixes[0]?.lifecycle).toBeCloseTo(HAND.provisional.lifecycle, 9);
    expect(mixes[0]?.direct).toBeCloseTo(HAND.provisional.direct, 9);
    // Fetched later, the range's revision of the same half-hour wins.
    const { mixes: both } = operatorMixes('GB', [
      ...mixHalfHoursOf(currentMix),
      ...mixHalfHoursOf(mixRange).filter(({ start }) => start === T('2026-06-30T12:00Z')),
    ]);
    expect(both).toHaveLength(1);
    expect(both[0]?.lifecycle).toBeCloseTo(HAND.revised.lifecycle, 9);
  });
});

describe('parseGeneration on other replies', () => {
  const mixEntry = (from: string, to: string, generationmix: unknown) => ({
    from,
    to,
    generationmix,
  });
  const fuels = (...pairs: [unknown, unknown][]) => pairs.map(([fuel, perc]) => ({ fuel, perc }));

  it('keys on fuel, not position, and drops and lists unusable entries', () => {
    const result = parseGeneration(
      JSON.stringify({
        data: [
          mixEntry('2026-06-30T12:00Z', '2026-06-30T12:30Z', fuels(['wind', 40], ['gas', 59.9])),
          mixEntry('2026-06-30T12:30Z', '2026-06-30T13:30Z', fuels(['gas', 100])),
          mixEntry('noon', '2026-06-30T13:00Z', fuels(['gas', 100])),
          mixEntry('2026-06-30T13:00Z', '2026-06-30T13:30Z', fuels(['gas', '100'])),
          mixEntry('2026-06-30T13:30Z', '2026-06-30T14:00Z', fuels(['gas', 50], ['gas', 50])),
          mixEntry('2026-06-30T14:00Z', '2026-06-30T14:30Z', []),
          mixEntry('2026-06-30T14:30Z', '2026-06-30T15:00Z', { gas: 100 }),
          mixEntry('2026-06-30T15:00Z', '2026-06-30T15:30Z', fuels([null, 100])),
          mixEntry('2026-06-30T15:30Z', '2026-06-30T16:00Z', ['gas']),
          'text',
          mixEntry('2026-06-30T16:00Z', '2026-06-30T16:30Z', fuels(['solar', 12], ['gas', 0])),
        ],
      }),
    );
    expect(result.kind === 'mix-half-hours' && result.dropped).toEqual([
      'entry 1: 2026-06-30T12:30Z–2026-06-30T13:30Z is not a half-hour',
      'entry 2: unreadable from/to',
      'entry 3: gas: perc is not a number',
      'entry 4: gas listed twice',
      'entry 5: empty generationmix',
      'entry 6: no generationmix list',
      'entry 7: a generationmix item has no fuel',
      'entry 8: a generationmix item is not an object',
      'entry 9: not an object',
    ]);
    expect(
      mixHalfHoursOf(result).map(({ start, shares }) => [start, Object.fromEntries(shares)]),
    ).toEqual([
      [T('2026-06-30T12:00Z'), { wind: 40, gas: 59.9 }],
      [T('2026-06-30T16:00Z'), { solar: 12, gas: 0 }],
    ]);
  });

  it.each([
    ['no data', '{"generationmix":[]}'],
    ['data of another type', '{"data":"2026-06-30T12:00Z"}'],
    ['null data', '{"data":null}'],
  ])('%s is an invalid payload', (_name, body) => {
    expect(parseGeneration(body).kind).toBe('invalid-payload');
  });

  it('an empty list is an empty answer, not an error', () => {
    expect(parseGeneration('{"data":[]}')).toEqual({
      kind: 'mix-half-hours',
      halfHours: [],
      dropped: [],
    });
  });
});

// What any NESO route may answer instead of its data.
describe.each([
  ['parseIntensity', parseIntensity, '{"data":[{"from":"2023-03-14T12:00Z",'],
  ['parseGeneration', parseGeneration, '{"data":[{"from":"2026-06-30T12:00Z",'],
] as const)('%s on replies of any route', (_parser, parse, truncated) => {
  it('the error body is a tagged upstream error', () => {
    const body = { error: { code: '400 Bad Request', message: 'Please enter a valid date.' } };
    expect(parse(JSON.stringify(body))).toEqual({
      kind: 'upstream-error',
      code: '400 Bad Request',
      message: 'Please enter a valid date.',
    });
  });

  it.each([
    ['an HTML error page', '<html><body><h1>502 Bad Gateway</h1></body></html>'],
    ['a truncated body', truncated],
    ['an empty body', ''],
  ])('%s is an invalid payload', (_name, body) => {
    expect(parse(body).kind).toBe('invalid-payload');
  });
});
