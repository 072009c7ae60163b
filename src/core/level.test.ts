import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  LEVEL_THRESHOLDS,
  LevelReference,
  levelOf,
  referenceIsEnough,
  referenceWindow,
} from './level.js';

/** The §11 formula, term by term, over an unsorted array: the oracle. */
function bruteForcePercentile(values: readonly number[], v: number): number {
  const below = values.filter((x) => x < v).length;
  const equal = values.filter((x) => x === v).length;
  // Tenths of a percent, rounded half up in integers: floor((2 * num + den) / (2 * den)).
  const numerator = 1000 * (2 * below + equal);
  const denominator = 2 * values.length;
  return Math.floor((2 * numerator + denominator) / (2 * denominator)) / 10;
}

describe('levels', () => {
  it('places any value as the mid-rank formula over the same reference does', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 12_000 }), { minLength: 1, maxLength: 800 }),
        fc.integer({ min: -10, max: 12_010 }),
        (values, v) => {
          const reference = new LevelReference(values);
          expect(reference.count).toBe(values.length);
          expect(reference.percentile(v)).toBe(bruteForcePercentile(values, v));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('handles ties: a constant reference puts its own value at 50', () => {
    const reference = new LevelReference(new Array(720).fill(2345));
    expect(reference.percentile(2345)).toBe(50);
    expect(reference.percentile(2344)).toBe(0);
    expect(reference.percentile(2346)).toBe(100);
    expect(new LevelReference([]).percentile(1)).toBeNull();
  });

  it('names the bands of the one thresholds table, edges included', () => {
    expect(LEVEL_THRESHOLDS).toEqual({ 'very-low': 10, low: 30, moderate: 70, high: 90 });
    expect([0, 9.9, 10, 29.9, 30, 69.9, 70, 89.9, 90, 100].map(levelOf)).toEqual([
      'very-low',
      'very-low',
      'low',
      'low',
      'moderate',
      'moderate',
      'high',
      'high',
      'very-high',
      'very-high',
    ]);
  });

  it('ends the 30-day window with the newest interval, and wants 7 days of it', () => {
    const newest = Date.UTC(2026, 10, 21, 13) / 1000;
    const hourly = referenceWindow(newest, 3600);
    expect((hourly.to - hourly.from) / 3600).toBe(720);
    expect(hourly.to).toBe(newest + 3600);
    expect((hourly.to - hourly.from) / 1800).toBe(1440);
    expect(referenceIsEnough(168, 3600)).toBe(true);
    expect(referenceIsEnough(167, 3600)).toBe(false);
    expect(referenceIsEnough(336, 1800)).toBe(true);
    expect(referenceIsEnough(335, 1800)).toBe(false);
  });
});
