import type { ForecastColumns } from '../reading.js';
/**
 * The regular grids the forecast models work on: a zone's values slot by slot at its resolution
 * (NaN where nothing is published), and upstream forecasts on the same grid with every issue kept,
 * so that a model at any issue time sees exactly what had been issued by then.
 */

const MINUTE_SECONDS = 60;
export const HOUR_SECONDS = 3600;
export const DAY_SECONDS = 86_400;
export const WEEK_SECONDS = 7 * DAY_SECONDS;
/**
 * `ts` as whole minutes after `issueTs`, in 16 bits: how a stored backtest state keeps when a
 * scored slot ended (after its issue, on a whole minute, hours later). Throws for anything else.
 */
export function minutesAfterIssue(ts: number, issueTs: number): number {
  const minutes = (ts - issueTs) / MINUTE_SECONDS;
  if (!Number.isInteger(minutes) || minutes < 0 || minutes > 0xffff) {
    throw new Error(`${ts} is not a whole number of minutes within 2^16 after issue ${issueTs}`);
  }
  return minutes;
}

/** `minutesAfterIssue`'s inverse. */
export const afterIssue = (minutes: number, issueTs: number): number =>
  issueTs + minutes * MINUTE_SECONDS;

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

  /** `fromColumns` of rows (tests, benches). */
  static build(
    forecasts: readonly {
      readonly ts: number;
      readonly issuedAt: number;
      readonly value: number;
    }[],
    grid: Grid,
  ): IssuedSeries {
    return IssuedSeries.fromColumns(
      {
        ts: Float64Array.from(forecasts, (row) => row.ts),
        issuedAt: Float64Array.from(forecasts, (row) => row.issuedAt),
        value: Float64Array.from(forecasts, (row) => row.value),
      },
      grid,
    );
  }

  /**
   * The series of the forecasts issued by `issuedBy` (default: all). A slot's forecasts are
   * summed per issue in the order given (the store gives them by interval, so a slot's come
   * together: otherwise they are gathered, in order, first).
   */
  static fromColumns(
    forecasts: ForecastColumns,
    grid: Grid,
    issuedBy = Number.POSITIVE_INFINITY,
  ): IssuedSeries {
    const { ts, issuedAt, value } = forecasts;
    const stepOf = sourceSteps(forecasts, grid, issuedBy);
    const order = slotOrder(ts, grid);
    const offsets = new Int32Array(grid.length + 1);
    const issued = new Float64Array(ts.length);
    const values = new Float64Array(ts.length);
    let entries = 0;
    let slot = -1;
    const cells = new SlotCells();
    const flush = () => {
      const inOrder = cells.isByIssue();
      if (!inOrder) cells.orderByIssue();
      for (let n = 0; n < cells.count; n++) {
        const cell = inOrder ? n : cells.order[n]!;
        // An issue that covers only part of the slot is left out there.
        if (cells.seconds[cell]! < grid.step) continue;
        issued[entries] = cells.issued[cell]!;
        values[entries++] = cells.sum[cell]! / cells.seconds[cell]!;
        offsets[slot + 1]! += 1;
      }
      cells.count = 0;
    };
    for (let row = 0; row < ts.length; row++) {
      const k = order ? order[row]! : row;
      const issue = issuedAt[k]!;
      const forecast = value[k]!;
      const rowSlot = slotOf(grid, ts[k]!);
      if (issue > issuedBy || rowSlot < 0 || rowSlot >= grid.length) continue;
      if (!Number.isFinite(forecast)) continue;
      if (rowSlot !== slot) {
        if (slot >= 0) flush();
        slot = rowSlot;
      }
      const seconds = stepOf.get(sinceGridStart(issue, grid))!;
      cells.add(issue, forecast * seconds, seconds);
    }
    if (slot >= 0) flush();
    for (let i = 0; i < grid.length; i++) offsets[i + 1]! += offsets[i]!;
    return new IssuedSeries(grid, offsets, issued.slice(0, entries), values.slice(0, entries));
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
 * One slot's forecasts summed per issue (IssuedSeries.fromColumns): value-seconds and seconds
 * covered, in typed arrays kept from one slot to the next (a year of quarter hours has tens of
 * thousands of slots).
 */
class SlotCells {
  issued = new Float64Array(16);
  sum = new Float64Array(16);
  seconds = new Float64Array(16);
  /** The cells by issue time, once `orderByIssue` has run. */
  order = new Int32Array(16);
  count = 0;
  private last = -1;

  add(issue: number, valueSeconds: number, seconds: number): void {
    const found = this.find(issue);
    if (found >= 0) {
      this.sum[found]! += valueSeconds;
      this.seconds[found]! += seconds;
      this.last = found;
      return;
    }
    if (this.count === this.issued.length) this.grow();
    this.issued[this.count] = issue;
    this.sum[this.count] = valueSeconds;
    this.seconds[this.count] = seconds;
    this.last = this.count++;
  }

  /** Whether the cells are by issue time as they were added. */
  isByIssue(): boolean {
    for (let cell = 1; cell < this.count; cell++) {
      if (this.issued[cell - 1]! >= this.issued[cell]!) return false;
    }
    return true;
  }

  /** Fills `order` with the cells by issue time. */
  orderByIssue(): void {
    const cells = Array.from({ length: this.count }, (_, cell) => cell);
    cells.sort((a, b) => this.issued[a]! - this.issued[b]!);
    this.order.set(cells);
  }

  /**
   * The issue's cell, or -1: looked for from the one after the last added to (a slot's
   * forecasts come by interval, then issue: each interval's in the cells' order).
   */
  private find(issue: number): number {
    let cell = this.last;
    for (let n = 0; n < this.count; n++) {
      cell = cell + 1 < this.count ? cell + 1 : 0;
      if (this.issued[cell] === issue) return cell;
    }
    return -1;
  }

  private grow(): void {
    const grown = (column: Float64Array) => {
      const bigger = new Float64Array(2 * column.length);
      bigger.set(column);
      return bigger;
    };
    this.issued = grown(this.issued);
    this.sum = grown(this.sum);
    this.seconds = grown(this.seconds);
    this.order = new Int32Array(2 * this.order.length);
  }
}

/**
 * The order to read forecasts in so that each slot's come together, each slot's in the order
 * given; null when they already do (ascending intervals, as the store gives them).
 */
function slotOrder(ts: Float64Array, grid: Grid): Int32Array | null {
  let ascending = true;
  for (let k = 1; k < ts.length && ascending; k++) ascending = ts[k - 1]! <= ts[k]!;
  if (ascending) return null;
  // Array sorts are stable: within a slot, the order given.
  const rows = Array.from(ts, (_, k) => k).sort(
    (a, b) => slotOf(grid, ts[a]!) - slotOf(grid, ts[b]!),
  );
  return Int32Array.from(rows);
}

/**
 * The interval length of each issue: the smallest gap between its intervals, at most the grid
 * step (an issue of one interval counts as a whole slot), of those issued by `issuedBy`.
 */
function sourceSteps(
  { ts, issuedAt }: ForecastColumns,
  grid: Grid,
  issuedBy: number,
): Map<number, number> {
  const last = new Map<number, number>();
  const steps = new Map<number, number>();
  for (let k = 0; k < ts.length; k++) {
    if (issuedAt[k]! > issuedBy) continue;
    const issue = sinceGridStart(issuedAt[k]!, grid);
    const start = sinceGridStart(ts[k]!, grid);
    const previous = last.get(issue);
    const gap = previous === undefined ? grid.step : Math.abs(start - previous);
    if (gap > 0) steps.set(issue, Math.min(steps.get(issue) ?? grid.step, gap));
    last.set(issue, start);
  }
  return steps;
}

/**
 * Epoch seconds as seconds from the grid's start, exactly (whole numbers): the Maps above are
 * keyed by them, small integers that V8 keeps without allocating, where an epoch second (past
 * 2^30) is a number allocated at every lookup (a year of quarter hours: millions).
 */
const sinceGridStart = (ts: number, grid: Grid): number => ts - grid.startTs;
