import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { windowStats } from './window-stats.js';

/**
 * The statistics against an oracle written from the §12 definitions: time-weighted mean with
 * each point's duration as weight, quantiles by linear interpolation on the weighted empirical
 * distribution (positions at cumulative-weight midpoints rescaled to 0-1, which for equal weights
 * is type 7), hour means grouped by a Date's UTC hour.
 */

const T0 = Date.UTC(2026, 0, 1) / 1000;
/** Rounded as printed (decisions.md, "Numbers"): the decimal point shifted in the printed form, halves up. */
const asPrinted = (x: number, digits: number) =>
  Math.round(Number(`${x}e${digits}`)) / 10 ** digits;
const round1 = (x: number) => asPrinted(x, 1);
/** The mean of integer tenths at 1 decimal, halves up, in integer arithmetic. */
const meanOfTenths = (tenths: number[]) =>
  Math.floor((2 * tenths.reduce((s, t) => s + t, 0) + tenths.length) / (2 * tenths.length)) / 10;

function weightedQuantile(values: number[], weights: number[], q: number): number {
  const order = values.map((v, i) => ({ v, w: weights[i]! })).sort((a, b) => a.v - b.v);
  const total = order.reduce((s, p) => s + p.w, 0);
  // Position of point k: (cumulative weight before k) / (total - weight of one point).
  let cumulative = 0;
  const positions = order.map((p) => {
    const at = cumulative;
    cumulative += p.w;
    return at / (total - order[0]!.w);
  });
  if (order.length === 1) return order[0]!.v;
  for (let k = 0; k < order.length - 1; k++) {
    if (q >= positions[k]! && q <= positions[k + 1]!) {
      const span = positions[k + 1]! - positions[k]!;
      const f = span === 0 ? 0 : (q - positions[k]!) / span;
      return order[k]!.v + (order[k + 1]!.v - order[k]!.v) * f;
    }
  }
  return order[order.length - 1]!.v;
}

describe('window statistics', () => {
  it('equals the brute-force definitions for random windows, hourly and half-hourly', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(3600, 1800),
        fc.integer({ min: 1, max: 400 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 30_000 }),
        fc.option(fc.double({ min: 0.001, max: 1e6, noNaN: true }), { nil: undefined }),
        // Values counted in bins (a zone's span) and values too spread for them (sorted).
        fc.constantFrom(9000, 200_000),
        (step, intervals, density, seed, energy, span) => {
          const from = T0 + (seed % 97) * 60;
          const to = from + intervals * step + (seed % 5) * 600;
          const ts: number[] = [];
          const tenths: number[] = [];
          let state = seed;
          for (let t = Math.ceil(from / step) * step; t < to; t += step) {
            state = (state * 1103515245 + 12345) % 2 ** 31;
            if (state / 2 ** 31 < density) {
              ts.push(t);
              tenths.push(state % span);
            }
          }
          const stats = windowStats({ ts, tenths }, { from, to, stepSeconds: step }, energy);
          const values = tenths.map((t) => t / 10);
          expect(stats.count).toBe(values.length);
          const covered = ts.reduce((s, t) => s + Math.min(t + step, to) - t, 0);
          expect(stats.coverage).toBe(asPrinted(covered / (to - from), 3));
          const byHour = Array.from({ length: 24 }, (_, h) => {
            const inHour = tenths.filter((_, i) => new Date(ts[i]! * 1000).getUTCHours() === h);
            return inHour.length === 0 ? null : meanOfTenths(inHour);
          });
          if (values.length === 0) {
            expect(stats).toMatchObject({ mean: null, min: null, max: null, p10: null });
            expect(stats.byHourUtc).toEqual(byHour);
            if (energy !== undefined) expect(stats.emissionsG).toBeNull();
            return;
          }
          const weights = values.map(() => step);
          // Equal weights (one resolution per zone): the weighted mean is the mean of the tenths.
          const mean = meanOfTenths(tenths);
          expect(stats.mean).toBe(mean);
          expect(stats.min).toBe(Math.min(...values));
          expect(stats.max).toBe(Math.max(...values));
          for (const [key, q] of [
            ['p10', 0.1],
            ['p50', 0.5],
            ['p90', 0.9],
          ] as const) {
            expect(
              Math.abs(stats[key]! - weightedQuantile(values, weights, q)),
            ).toBeLessThanOrEqual(0.05 + 1e-9);
          }
          expect(stats.byHourUtc).toEqual(byHour);
          if (energy !== undefined) expect(stats.emissionsG).toBe(round1(energy * mean));
          else expect(stats.emissionsG).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('works a small case out by hand', () => {
    const stats = windowStats(
      { ts: [T0, T0 + 3600, T0 + 7200, T0 + 10800], tenths: [1000, 2000, 3000, 4000] },
      { from: T0, to: T0 + 4 * 3600 + 1800, stepSeconds: 3600 },
      2,
    );
    expect(stats).toMatchObject({
      count: 4,
      coverage: 0.889,
      mean: 250,
      min: 100,
      max: 400,
      p10: 130,
      p50: 250,
      p90: 370,
      emissionsG: 500,
    });
    expect(stats.byHourUtc.slice(0, 5)).toEqual([100, 200, 300, 400, null]);
    // Two values: every quantile lies between the same two ranks.
    const two = windowStats(
      { ts: [T0, T0 + 3600], tenths: [7264, 2160] },
      { from: T0, to: T0 + 7200, stepSeconds: 3600 },
    );
    expect(two).toMatchObject({ min: 216, max: 726.4, p10: 267, p50: 471.2, p90: 675.4 });
  });
});
