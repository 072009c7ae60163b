import { describe, expect, it } from 'vitest';
import { operatorMixes, operatorReadings, type OperatorHalfHour } from './uk-operator.js';

const T = (text: string) => Date.parse(text) / 1000;

const halfHour = (
  from: string,
  forecast: number | null,
  actual: number | null,
): OperatorHalfHour => ({ start: T(from), forecast, actual });

describe('operatorReadings (the GB rule of method.md)', () => {
  const halfHours = [
    halfHour('2025-01-01T11:00Z', 100, 104),
    halfHour('2025-01-01T11:30Z', 110, null), // not settled yet, and no longer the newest
    halfHour('2025-01-01T12:00Z', 120, null), // in progress at 12:10
    halfHour('2025-01-01T12:30Z', 130, null), // future
  ];

  it('republishes settled values, and keeps the forecast of the newest started half-hour apart', () => {
    const { readings, forecasts, quality } = operatorReadings(
      'GB',
      halfHours,
      T('2025-01-01T12:10Z'),
    );
    expect(readings).toEqual([
      {
        zone: 'GB',
        ts: T('2025-01-01T11:00Z'),
        value: 104,
        method: 'upstream:uk-operator:actual',
        complete: true,
        mix: null,
        lifecycle: null,
        direct: null,
      },
    ]);
    expect(forecasts).toEqual([
      {
        zone: 'GB',
        ts: T('2025-01-01T12:00Z'),
        kind: 'uk-operator:intensity',
        issuedAt: T('2025-01-01T12:10Z'),
        value: 120,
      },
    ]);
    expect(quality).toEqual({
      zone: 'GB',
      pointsStored: 1,
      incompleteHours: 0,
      clampedNegatives: 0,
      unknownCodes: [],
    });
  });

  it('gives no forecast from a reply that ends before the half-hour in progress', () => {
    // A backfill chunk, or a lagging reply: its last unsettled entry is in the past.
    const { readings, forecasts } = operatorReadings(
      'GB',
      halfHours.slice(0, 2),
      T('2025-01-01T12:10Z'),
    );
    expect(readings.map((reading) => reading.method)).toEqual(['upstream:uk-operator:actual']);
    expect(forecasts).toEqual([]);
  });

  it('counts a half-hour starting exactly now as started', () => {
    const { forecasts } = operatorReadings('GB', halfHours, T('2025-01-01T12:30Z'));
    expect(forecasts).toMatchObject([{ ts: T('2025-01-01T12:30Z'), value: 130 }]);
  });

  it('gives no forecast when the newest started half-hour is settled', () => {
    const settled = [...halfHours.slice(0, 2), halfHour('2025-01-01T12:00Z', 120, 118)];
    const { readings } = operatorReadings('GB', settled, T('2025-01-01T12:40Z'));
    expect(readings.map(({ value, method }) => [value, method])).toEqual([
      [104, 'upstream:uk-operator:actual'],
      [118, 'upstream:uk-operator:actual'],
    ]);
  });

  it('keeps the settled figure when overlapping fetches repeat a half-hour', () => {
    const repeated = [
      halfHour('2025-01-01T12:00Z', 120, 117),
      halfHour('2025-01-01T12:00Z', 121, null),
      halfHour('2025-01-01T11:30Z', 110, 109),
      halfHour('2025-01-01T11:30Z', 110, 111), // a later revision of the settled value
    ];
    const { readings } = operatorReadings('GB', repeated, T('2025-01-01T12:10Z'));
    expect(readings.map(({ ts, value, method }) => [ts, value, method])).toEqual([
      [T('2025-01-01T11:30Z'), 111, 'upstream:uk-operator:actual'],
      [T('2025-01-01T12:00Z'), 117, 'upstream:uk-operator:actual'],
    ]);
  });
});

describe('operatorMixes (GB from the generation mix)', () => {
  const mixAt = (from: string, shares: Record<string, number>) => ({
    start: T(from),
    shares: new Map(Object.entries(shares)),
  });

  it('keeps the later entry of a repeated start, in time order', () => {
    // Two stitched replies: the second starts one half-hour early, repeating 12:30.
    const { mixes } = operatorMixes('GB', [
      mixAt('2025-01-01T12:00Z', { gas: 100 }),
      mixAt('2025-01-01T12:30Z', { gas: 100 }),
      mixAt('2025-01-01T12:30Z', { gas: 50, wind: 50 }),
      mixAt('2025-01-01T13:00Z', { wind: 100 }),
    ]);
    expect(mixes.map(({ ts, mix }) => [ts, mix])).toEqual([
      [T('2025-01-01T12:00Z'), { gas: 100 }],
      [T('2025-01-01T12:30Z'), { gas: 50, 'wind-onshore': 50 }],
      [T('2025-01-01T13:00Z'), { 'wind-onshore': 100 }],
    ]);
    // Lifecycle (50 x 490 + 50 x 11) / 100; direct (50 x 370 + 50 x 0) / 100.
    expect(mixes[1]).toMatchObject({ lifecycle: 250.5, direct: 185 });
  });

  it('leaves imports out of both sums, books an unknown fuel as other and names it', () => {
    const { mixes, unknownCodes } = operatorMixes('GB', [
      mixAt('2025-01-01T12:00Z', { imports: 20, nuclear: 40, tidal: 40 }),
    ]);
    expect(unknownCodes).toEqual(['tidal']);
    expect(mixes[0]?.mix).toEqual({ nuclear: 40, other: 40 });
    // Lifecycle (40 x 12 + 40 x 700) / 80 = 356; direct (40 x 0 + 40 x 575) / 80 = 287.5.
    expect(mixes[0]).toMatchObject({ lifecycle: 356, direct: 287.5 });
  });

  it('publishes a half-hour whose included shares sum to 0 on no basis', () => {
    const { mixes } = operatorMixes('GB', [mixAt('2025-01-01T12:00Z', { imports: 100, gas: 0 })]);
    expect(mixes).toEqual([
      { zone: 'GB', ts: T('2025-01-01T12:00Z'), mix: { gas: 0 }, lifecycle: null, direct: null },
    ]);
  });
});
