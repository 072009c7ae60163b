import { describe, expect, it } from 'vitest';
import type { Reading } from '../core/reading.js';
import { type SeriesChange, ZoneSeries } from './zone-series.js';

const reading = (ts: number, value: number): Reading => ({ ts, value, method: 'computed:v1' });
const set = (ts: number, value: number): SeriesChange => ({
  ts,
  reading: { value, method: 'computed:v1' },
});
const points = (series: ZoneSeries) =>
  Array.from({ length: series.length }, (_, i) => [series.ts(i), series.value(i)]);

describe('ZoneSeries', () => {
  it('keeps values as served, rounded to one decimal like toFixed', () => {
    const series = new ZoneSeries([reading(0, 123.45), reading(1, 0.05), reading(2, 99.94999)]);
    expect(points(series)).toEqual([
      [0, Number((123.45).toFixed(1))],
      [1, 0.1],
      [2, 99.9],
    ]);
  });

  it('finds window bounds by binary search', () => {
    const series = new ZoneSeries([10, 20, 30, 40].map((ts) => reading(ts, ts)));
    expect([5, 10, 11, 40, 41].map((ts) => series.lowerBound(ts))).toEqual([0, 0, 1, 3, 4]);
  });

  it('appends newer points and grows past its first capacity', () => {
    const series = new ZoneSeries();
    for (let ts = 0; ts < 100; ts++) series.apply([set(ts, ts)]);
    expect(series.length).toBe(100);
    expect(series.ts(99)).toBe(99);
  });

  it('replaces, inserts and removes in one merge, the last change of a ts winning', () => {
    const series = new ZoneSeries([10, 20, 30, 40].map((ts) => reading(ts, 1)));
    series.apply([set(25, 5), { ts: 30, reading: null }, set(10, 2), set(10, 3), set(50, 9)]);
    expect(points(series)).toEqual([
      [10, 3],
      [20, 1],
      [25, 5],
      [40, 1],
      [50, 9],
    ]);
  });

  it('does not duplicate a ts given twice in an append', () => {
    const series = new ZoneSeries([reading(1, 1)]);
    series.apply([set(2, 1), set(2, 2)]);
    expect(points(series)).toEqual([
      [1, 1],
      [2, 2],
    ]);
  });

  it('gives views that stay as they were while the series takes appends, growth and merges', () => {
    const series = new ZoneSeries([10, 20, 30, 40].map((ts) => reading(ts, ts / 10)));
    const view = series.view(1, 4);
    // Appends in place, then past its capacity (new columns), then a merge that revises and
    // removes points.
    for (let ts = 50; ts < 300; ts += 10) series.apply([set(ts, 9)]);
    series.apply([set(20, 7), { ts: 30, reading: null }]);
    expect([...view.ts]).toEqual([20, 30, 40]);
    expect([...view.tenths]).toEqual([20, 30, 40]);
    expect(points(series).slice(0, 3)).toEqual([
      [10, 1],
      [20, 7],
      [40, 4],
    ]);
  });
});
