/**
 * Statistics of a window (extensions §12), from one zone's published points in tenths of
 * gCO2eq/kWh as served. Every point of a zone has the zone's resolution, so the time weights of
 * the mean and quantiles are equal and they reduce to the plain mean and the linear-interpolation
 * quantile (Hyndman-Fan type 7) of the values.
 */

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

const round1 = (value: number): number => Number(value.toFixed(1));
/**
 * Tenths to gCO2eq/kWh at 1 decimal, halves up. A mean or quantile of tenths is rounded in
 * tenths, where a half is exact, rather than after dividing by 10, where it is not.
 */
const fromTenths = (tenths: number): number => Math.round(tenths) / 10;

/** The linear-interpolation quantile `q` (0-1) of ascending values. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.min(below + 1, sorted.length - 1);
  const fraction = position - below;
  return sorted[below]! + (sorted[above]! - sorted[below]!) * fraction;
}

export function windowStats(
  points: WindowPoints,
  window: { readonly from: number; readonly to: number; readonly stepSeconds: number },
  energyKwh?: number,
): WindowStats {
  const count = points.ts.length;
  let covered = 0;
  let sum = 0;
  const hourSums = new Float64Array(24);
  const hourCounts = new Uint32Array(24);
  for (let i = 0; i < count; i++) {
    const ts = points.ts[i]!;
    const value = points.tenths[i]!;
    // An interval reaching past `to` covers the window only up to it.
    covered += Math.min(window.stepSeconds, window.to - ts);
    sum += value;
    const hour = Math.floor((((ts % 86_400) + 86_400) % 86_400) / 3600);
    hourSums[hour]! += value;
    hourCounts[hour]!++;
  }
  const coverage = Number((covered / (window.to - window.from)).toFixed(3));
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
  const sorted = Float64Array.from(points.tenths).sort();
  const mean = fromTenths(sum / count);
  return {
    count,
    coverage,
    mean,
    min: sorted[0]! / 10,
    max: sorted[count - 1]! / 10,
    p10: fromTenths(quantile(sorted, 0.1)),
    p50: fromTenths(quantile(sorted, 0.5)),
    p90: fromTenths(quantile(sorted, 0.9)),
    byHourUtc,
    ...(energyKwh !== undefined && { emissionsG: round1(energyKwh * mean) }),
  };
}
