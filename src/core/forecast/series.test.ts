import { describe, expect, it } from 'vitest';
import { H, START } from '../../../test/support/forecast-zones.js';
import { bucketIndex, horizonHours, IssuedSeries, type Grid } from './series.js';

describe('horizon buckets', () => {
  it('counts hours ahead from the issue time, the interval ending in the first hour being 1', () => {
    expect(horizonHours(START, H, START)).toBe(1);
    expect(horizonHours(START + 5 * H, H, START)).toBe(6);
    expect(horizonHours(START + 6 * H, H, START)).toBe(7);
    expect(horizonHours(START - H, H, START)).toBe(0);
    expect(horizonHours(START + 1800, 1800, START)).toBe(1);
    expect(horizonHours(START + 3600, 1800, START)).toBe(2);
    expect([0, 1, 6, 7, 24, 25, 48, 49, 72, 73].map(bucketIndex)).toEqual([
      0, 0, 0, 1, 1, 2, 2, 3, 3, -1,
    ]);
  });
});

describe('IssuedSeries', () => {
  const grid: Grid = { startTs: START, step: H, length: 4 };

  it('gives the value last issued at or before the time asked, averaging finer intervals', () => {
    const series = IssuedSeries.build(
      [
        // Issued at START - 10 h, in quarter hours: slot 0 averages 100, 110, 120, 130.
        ...[100, 110, 120, 130].map((value, k) => ({
          ts: START + k * 900,
          issuedAt: START - 10 * H,
          value,
        })),
        // Re-issued at START - 2 h, hourly.
        { ts: START, issuedAt: START - 2 * H, value: 200 },
        // Only half of slot 1 in quarter hours: not a value of the slot.
        { ts: START + H, issuedAt: START - 10 * H, value: 7 },
        { ts: START + H + 900, issuedAt: START - 10 * H, value: 9 },
      ],
      grid,
    );
    // Issued before the time asked, strictly: an issue at the very time is not yet known.
    expect(series.valueAt(0, START - 10 * H)).toBeNaN();
    expect(series.valueAt(0, START - 10 * H + 1)).toBe(115);
    expect(series.valueAt(0, START - 2 * H)).toBe(115);
    expect(series.valueAt(0, START)).toBe(200);
    expect(series.valueAt(1, START)).toBeNaN();
    expect(series.valueAt(9, START)).toBeNaN();
  });
});

describe('IssuedSeries from columns', () => {
  const grid: Grid = { startTs: START, step: H, length: 3 };
  // Two issues over three hours, the earlier in quarter hours, by interval then issue (as the
  // store gives them).
  const rows = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].flatMap((quarter) => [
    { ts: START + quarter * 900, issuedAt: START - 10 * H, value: 10 * quarter },
    ...(quarter % 4 === 0
      ? [{ ts: START + quarter * 900, issuedAt: START - 2 * H, value: 1000 + quarter }]
      : []),
  ]);
  const columnsOf = (of: typeof rows) => ({
    ts: Float64Array.from(of, (row) => row.ts),
    issuedAt: Float64Array.from(of, (row) => row.issuedAt),
    value: Float64Array.from(of, (row) => row.value),
  });

  it('makes the same series of rows in any order', () => {
    const inOrder = IssuedSeries.build(rows, grid).toData();
    expect(IssuedSeries.build([...rows].reverse(), grid).toData()).toEqual(inOrder);
    expect(Array.from(inOrder.offsets)).toEqual([0, 2, 4, 6]);
    expect(Array.from(inOrder.values)).toEqual([15, 1000, 55, 1004, 95, 1008]);
  });

  it('leaves out the forecasts issued after the time given, as if never stored', () => {
    const issuedBy = START - 5 * H;
    expect(IssuedSeries.fromColumns(columnsOf(rows), grid, issuedBy).toData()).toEqual(
      IssuedSeries.build(
        rows.filter((row) => row.issuedAt <= issuedBy),
        grid,
      ).toData(),
    );
    expect(IssuedSeries.fromColumns(columnsOf(rows), grid, issuedBy).size).toBe(3);
  });
});

describe('IssuedSeries sums', () => {
  it("sums a slot's finer intervals per issue in the order given, as the store gives them", () => {
    const grid: Grid = { startTs: START, step: H, length: 1 };
    const quarters = [0.1, 0.2, 0.001, 0.001];
    const rows = quarters.map((value, k) => ({
      ts: START + k * 900,
      issuedAt: START - H,
      value,
    }));
    // Floating-point sums depend on their order: each way round, the one given.
    const inOrder = (0.1 * 900 + 0.2 * 900 + 0.001 * 900 + 0.001 * 900) / 3600;
    const reversed = (0.001 * 900 + 0.001 * 900 + 0.2 * 900 + 0.1 * 900) / 3600;
    expect(inOrder).not.toBe(reversed);
    expect(IssuedSeries.build(rows, grid).valueAt(0, START)).toBe(inOrder);
    expect(IssuedSeries.build([...rows].reverse(), grid).valueAt(0, START)).toBe(reversed);
  });
});
