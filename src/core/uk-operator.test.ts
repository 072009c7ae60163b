import { describe, expect, it } from 'vitest';
import { operatorReadings, type OperatorHalfHour } from './uk-operator.js';

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
