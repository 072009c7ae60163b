/**
 * Statistics of a window (extensions §12), from one zone's published points in tenths of
 * gCO2eq/kWh as served. Every point of a zone has the zone's resolution, so the time weights of
 * the mean and quantiles are equal and they reduce to the plain mean and the linear-interpolation
 * quantile (Hyndman-Fan type 7) of the values.
 */

import { round1, round3 } from './units.js';

export interface WindowPoints {
  /** Interval starts, epoch seconds, ascending, all in `[from, to)`. */
  readonly ts: ArrayLike<number>;
  /** Values in tenths, one per ts. */
  readonly tenths: ArrayLike<number>;
}

export interface WindowStats {
  readonly count: number;
  /** Covered duration over window duration, 0-1, 3 decimals. */
  readonly coverage: number;
  readonly mean: number | null;
  readonly min: number | null;
  readonly max: number | null;
  readonly p10: number | null;
  readonly p50: number | null;
  readonly p90: number | null;
  readonly byHourUtc: (number | null)[];
  /** Only when energy was given: that energy spread evenly over the window, times the mean. */
  readonly emissionsG?: number | null;
}

/**
 * Tenths to gCO2eq/kWh at 1 decimal, halves up. A mean or quantile of tenths is rounded in
 * tenths, where a half is exact, rather than after dividing by 10, where it is not.
 */
const fromTenths = (tenths: number): number => Math.round(tenths) / 10;

/** The widest span of values (in tenths) counted in bins rather than sorted: 256 kB of counts. */
const MAX_BINS = 1 << 16;

/**
 * The values at `ranks` (0-based, any order: a small window's quantiles share ranks) of the
 * values sorted ascending. A zone's values span a few thousand tenths, so they are counted into
 * one bin per tenth and the ranks read off the running counts: linear, where sorting 19,200
 * values was most of a 400-day window's time. Wider spans are sorted.
 */
function valuesAtRanks(
  tenths: ArrayLike<number>,
  min: number,
  max: number,
  ranks: readonly number[],
): number[] {
  if (max - min >= MAX_BINS) {
    const sorted = Int32Array.from(tenths).sort();
    return ranks.map((rank) => sorted[rank]!);
  }
  const bins = new Uint32Array(max - min + 1);
  for (let i = 0; i < tenths.length; i++) bins[tenths[i]! - min]!++;
  const valueAt = new Map<number, number>();
  let bin = 0;
  let below = bins[0]!;
  for (const rank of [...new Set(ranks)].sort((a, b) => a - b)) {
    while (below <= rank) below += bins[++bin]!;
    valueAt.set(rank, min + bin);
  }
  return ranks.map((rank) => valueAt.get(rank)!);
}

/** The linear-interpolation quantiles `qs` (0-1) of the values (Hyndman-Fan type 7). */
function quantiles(tenths: ArrayLike<number>, min: number, max: number, qs: readonly number[]) {
  const last = tenths.length - 1;
  const positions = qs.map((q) => last * q);
  const ranks = positions.flatMap((position) => [
    Math.floor(position),
    Math.min(Math.floor(position) + 1, last),
  ]);
  const values = valuesAtRanks(tenths, min, max, ranks);
  return positions.map((position, i) => {
    const below = values[2 * i]!;
    return below + (values[2 * i + 1]! - below) * (position - Math.floor(position));
  });
}

export function windowStats(
  points: WindowPoints,
  window: { readonly from: number; readonly to: number; readonly stepSeconds: number },
  energyKwh?: number,
): WindowStats {
  const count = points.ts.length;
  let covered = 0;
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  const hourSums = new Float64Array(24);
  const hourCounts = new Uint32Array(24);
  for (let i = 0; i < count; i++) {
    const ts = points.ts[i]!;
    const value = points.tenths[i]!;
    // An interval reaching past `to` covers the window only up to it.
    covered += Math.min(window.stepSeconds, window.to - ts);
    sum += value;
    if (value < min) min = value;
    if (value > max) max = value;
    const hour = Math.floor((((ts % 86_400) + 86_400) % 86_400) / 3600);
    hourSums[hour]! += value;
    hourCounts[hour]!++;
  }
  const coverage = round3(covered / (window.to - window.from));
  const byHourUtc = Array.from(hourSums, (total, hour) =>
    hourCounts[hour]! === 0 ? null : fromTenths(total / hourCounts[hour]!),
  );
  const energy = energyKwh === undefined ? {} : { emissionsG: null };
  if (count === 0) {
    return {
      count,
      coverage,
      mean: null,
      min: null,
      max: null,
      p10: null,
      p50: null,
      p90: null,
      byHourUtc,
      ...energy,
    };
  }
  const [p10, p50, p90] = quantiles(points.tenths, min, max, [0.1, 0.5, 0.9]);
  const mean = fromTenths(sum / count);
  return {
    count,
    coverage,
    mean,
    min: min / 10,
    max: max / 10,
    p10: fromTenths(p10!),
    p50: fromTenths(p50!),
    p90: fromTenths(p90!),
    byHourUtc,
    ...(energyKwh !== undefined && { emissionsG: round1(energyKwh * mean) }),
  };
}
