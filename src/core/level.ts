/**
 * Levels (extensions §11): where a value stands within its zone's own trailing 30 days, as a
 * mid-rank percentile and one word. Values are in tenths of gCO2eq/kWh, exactly as served, so a
 * value equal to a served one counts as equal.
 */

/** The one table of level bands: each word holds percentiles below its figure (and at or above the one before). */
export const LEVEL_THRESHOLDS = { 'very-low': 10, low: 30, moderate: 70, high: 90 } as const;

export const LEVELS = ['very-low', 'low', 'moderate', 'high', 'very-high'] as const;
export type Level = (typeof LEVELS)[number];

/** The reference window: 30 days ending with the zone's newest published reading. */
export const REFERENCE_DAYS = 30;
/** Fewer days than this in the reference window: no percentile. */
export const MIN_REFERENCE_DAYS = 7;

export function levelOf(percentile: number): Level {
  if (percentile < LEVEL_THRESHOLDS['very-low']) return 'very-low';
  if (percentile < LEVEL_THRESHOLDS.low) return 'low';
  if (percentile < LEVEL_THRESHOLDS.moderate) return 'moderate';
  if (percentile < LEVEL_THRESHOLDS.high) return 'high';
  return 'very-high';
}

/** The values of a reference window, sorted once, to place any number of values in. */
export class LevelReference {
  private readonly sorted: Int32Array;

  constructor(tenths: ArrayLike<number>) {
    this.sorted = Int32Array.from(tenths).sort();
  }

  get count(): number {
    return this.sorted.length;
  }

  /**
   * `100 * (count(x < v) + 0.5 * count(x == v)) / n`, rounded to 1 decimal (halves up, from the
   * exact ratio of integers); null for an empty reference.
   */
  percentile(tenths: number): number | null {
    const n = this.sorted.length;
    if (n === 0) return null;
    const below = this.firstAtLeast(tenths);
    const equal = this.firstAtLeast(tenths + 1) - below;
    return Math.round((1000 * (2 * below + equal)) / (2 * n)) / 10;
  }

  /** Index of the first value >= `tenths` (values are integers, so `tenths + 1` bounds equals). */
  private firstAtLeast(tenths: number): number {
    let low = 0;
    let high = this.sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.sorted[middle]! < tenths) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

/**
 * The reference window `[from, to)` of a zone whose newest published reading starts at
 * `newestTs`: the 30 days of intervals ending with that one (720 hours; GB 1440 half hours).
 */
export function referenceWindow(
  newestTs: number,
  stepSeconds: number,
): { from: number; to: number } {
  const to = newestTs + stepSeconds;
  return { from: to - REFERENCE_DAYS * 86_400, to };
}

/** Whether a reference of `count` intervals of `stepSeconds` covers enough days for a percentile. */
export function referenceIsEnough(count: number, stepSeconds: number): boolean {
  return count * stepSeconds >= MIN_REFERENCE_DAYS * 86_400;
}
