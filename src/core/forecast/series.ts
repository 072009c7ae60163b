/**
 * The regular grids the forecast models work on: a zone's values slot by slot at its resolution
 * (NaN where nothing is published), and upstream forecasts on the same grid with every issue kept,
 * so that a model at any issue time sees exactly what had been issued by then.
 */

export const HOUR_SECONDS = 3600;
export const DAY_SECONDS = 86_400;
export const WEEK_SECONDS = 7 * DAY_SECONDS;
/** How far ahead every forecast reaches (docs/forecast.md). */
export const HORIZON_HOURS = 72;

/** The horizon buckets of the skill table, in hours ahead of the issue time. */
export const HORIZON_BUCKETS = [
  { label: '1-6', first: 1, last: 6 },
  { label: '7-24', first: 7, last: 24 },
  { label: '25-48', first: 25, last: 48 },
  { label: '49-72', first: 49, last: 72 },
] as const;
export type BucketLabel = (typeof HORIZON_BUCKETS)[number]['label'];

/**
 * Hours ahead of `issueTs` of the interval starting at `ts`: 1 for the interval that ends within
 * the first hour. Zero or less for intervals already under way or past (a nowcast of a value the
 * upstream has not published yet).
 */
export function horizonHours(ts: number, stepSeconds: number, issueTs: number): number {
  return Math.ceil((ts + stepSeconds - issueTs) / HOUR_SECONDS);
}

/**
 * The hours ahead a served interval counts as: nowcasts as 1, and a prepared forecast's last
 * hour (it reaches one recompute past 72 h) as 72.
 */
export const servedHours = (hours: number): number => Math.min(HORIZON_HOURS, Math.max(1, hours));

/**
 * How many of the ascending `sorted` are below `value` (with `inclusive`, at most `value`), by
 * bisection.
 */
export function countBelow(sorted: ArrayLike<number>, value: number, inclusive = false): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]! < value || (inclusive && sorted[middle] === value)) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * `countBelow` of slots, ascending (a training block's: bisected a million times a backtest).
 * Its own function so that the bisection reads one kind of array, not every kind the others pass.
 */
export function countSlotsBelow(slots: Int32Array, slot: number): number {
  let low = 0;
  let high = slots.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (slots[middle]! < slot) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Index into HORIZON_BUCKETS; nowcasts count with the first bucket; -1 beyond 72 h. */
export function bucketIndex(hours: number): number {
  if (hours <= 6) return 0;
  if (hours <= 24) return 1;
  if (hours <= 48) return 2;
  return hours <= HORIZON_HOURS ? 3 : -1;
}

/** A zone's values on a regular grid: slot i is the interval starting `startTs + i * step`. */
export interface RegularSeries {
  readonly startTs: number;
  readonly step: number;
  /** NaN where no value is published. */
  readonly values: Float64Array;
}

export interface Grid {
  readonly startTs: number;
  readonly step: number;
  readonly length: number;
}

/** The slot holding `ts` (floored), which may lie outside the grid. */
const slotOf = (grid: Pick<Grid, 'startTs' | 'step'>, ts: number): number =>
  Math.floor((ts - grid.startTs) / grid.step);

export function regularSeries(
  points: readonly { readonly ts: number; readonly value: number }[],
  grid: Grid,
): RegularSeries {
  const values = new Float64Array(grid.length).fill(Number.NaN);
  for (const { ts, value } of points) {
    const slot = slotOf(grid, ts);
    if (slot >= 0 && slot < grid.length && Number.isFinite(value)) values[slot] = value;
  }
  return { startTs: grid.startTs, step: grid.step, values };
}

/**
 * An upstream forecast on a zone's grid, every issue kept. Finer intervals (ENTSO-E PT15M) are
 * averaged into the slot per issue; an issue that covers only part of a slot is left out there.
 */
export class IssuedSeries {
  private constructor(
    private readonly grid: Grid,
    /** Entries of slot i are offsets[i] .. offsets[i+1]-1, issue times ascending. */
    private readonly offsets: Int32Array,
    private readonly issued: Float64Array,
    private readonly values: Float64Array,
  ) {}

  static build(
    forecasts: readonly {
      readonly ts: number;
      readonly issuedAt: number;
      readonly value: number;
    }[],
    grid: Grid,
  ): IssuedSeries {
    const stepOf = sourceSteps(forecasts, grid.step);
    // (slot, issuedAt) -> value-seconds and seconds covered; a numeric key (issue times are
    // epoch seconds, far below 1e10) keeps this fast on a year of quarter hours.
    const cells = new Map<
      number,
      { slot: number; issuedAt: number; sum: number; seconds: number }
    >();
    for (const { ts, issuedAt, value } of forecasts) {
      const slot = slotOf(grid, ts);
      if (slot < 0 || slot >= grid.length || !Number.isFinite(value)) continue;
      const key = slot * 1e10 + issuedAt;
      const seconds = stepOf.get(issuedAt)!;
      const cell = cells.get(key);
      if (cell) {
        cell.sum += value * seconds;
        cell.seconds += seconds;
      } else cells.set(key, { slot, issuedAt, sum: value * seconds, seconds });
    }
    const complete = [...cells.values()]
      .filter((cell) => cell.seconds >= grid.step)
      .sort((a, b) => a.slot - b.slot || a.issuedAt - b.issuedAt);
    const offsets = new Int32Array(grid.length + 1);
    for (const cell of complete) offsets[cell.slot + 1]! += 1;
    for (let i = 0; i < grid.length; i++) offsets[i + 1]! += offsets[i]!;
    const issued = new Float64Array(complete.length);
    const values = new Float64Array(complete.length);
    complete.forEach((cell, index) => {
      issued[index] = cell.issuedAt;
      values[index] = cell.sum / cell.seconds;
    });
    return new IssuedSeries(grid, offsets, issued, values);
  }

  get size(): number {
    return this.issued.length;
  }

  /** The series as plain data (typed arrays: a worker receives it by structured clone). */
  toData(): IssuedSeriesData {
    return { grid: this.grid, offsets: this.offsets, issued: this.issued, values: this.values };
  }

  static fromData(data: IssuedSeriesData): IssuedSeries {
    return new IssuedSeries(data.grid, data.offsets, data.issued, data.values);
  }

  /** The value of `slot` as last issued before `asOf` (strictly); NaN when none was. */
  valueAt(slot: number, asOf: number): number {
    if (slot < 0 || slot >= this.grid.length) return Number.NaN;
    const first = this.offsets[slot]!;
    for (let entry = this.offsets[slot + 1]! - 1; entry >= first; entry--) {
      if (this.issued[entry]! < asOf) return this.values[entry]!;
    }
    return Number.NaN;
  }
}

/** An IssuedSeries as plain data (IssuedSeries.toData). */
export interface IssuedSeriesData {
  readonly grid: Grid;
  readonly offsets: Int32Array;
  readonly issued: Float64Array;
  readonly values: Float64Array;
}

/**
 * The interval length of each issue: the smallest gap between its intervals, at most the grid
 * step (an issue of one interval counts as a whole slot).
 */
function sourceSteps(
  forecasts: readonly { readonly ts: number; readonly issuedAt: number }[],
  gridStep: number,
): Map<number, number> {
  const last = new Map<number, number>();
  const steps = new Map<number, number>();
  for (const { ts, issuedAt } of forecasts) {
    const previous = last.get(issuedAt);
    const gap = previous === undefined ? gridStep : Math.abs(ts - previous);
    if (gap > 0) steps.set(issuedAt, Math.min(steps.get(issuedAt) ?? gridStep, gap));
    last.set(issuedAt, ts);
  }
  return steps;
}
