import { describe, expect, it } from 'vitest';
import { toHourlySeries, type PowerInterval } from './generation.js';

const H0 = Date.UTC(2025, 0, 1, 0) / 1000;
const MIN = 60;

function steps(start: number, minutes: number, values: number[]): PowerInterval[] {
  return values.map((mw, index) => ({
    start: start + index * minutes * MIN,
    end: start + (index + 1) * minutes * MIN,
    mw,
  }));
}

describe('toHourlySeries', () => {
  it('keeps hourly values as they are', () => {
    expect([...toHourlySeries(steps(H0, 60, [10, 20]))]).toEqual([
      [H0, 10],
      [H0 + 3600, 20],
    ]);
  });

  it('averages the four quarters of PT15M and the two halves of PT30M', () => {
    expect(toHourlySeries(steps(H0, 15, [10, 20, 30, 41])).get(H0)).toBeCloseTo(25.25, 12);
    expect(toHourlySeries(steps(H0, 30, [10, 21])).get(H0)).toBeCloseTo(15.5, 12);
  });

  it('gives no value to an hour with a missing sub-interval (never three quarters)', () => {
    const quarters = steps(H0, 15, [10, 20, 30, 40, 50, 60, 70, 80]);
    quarters.splice(7, 1); // the 01:45 quarter is missing
    const hourly = toHourlySeries(quarters);
    expect(hourly.get(H0)).toBeCloseTo(25, 12);
    expect(hourly.has(H0 + 3600)).toBe(false);
  });

  it('gives no value to an hour covered twice', () => {
    const hourly = toHourlySeries([...steps(H0, 15, [1, 1, 1, 1]), ...steps(H0, 60, [1])]);
    expect(hourly.size).toBe(0);
  });

  it('splits an interval that straddles two hours', () => {
    const hourly = toHourlySeries([
      ...steps(H0, 30, [10]),
      { start: H0 + 30 * MIN, end: H0 + 90 * MIN, mw: 20 },
      ...steps(H0 + 90 * MIN, 30, [40]),
    ]);
    expect([...hourly]).toEqual([
      [H0, 15],
      [H0 + 3600, 30],
    ]);
  });
});
