import { afterIssue, countBelow, DAY_SECONDS, HORIZON_HOURS, minutesAfterIssue } from './series.js';

/**
 * The band's error pools (backtest.ts), carried from one refresh to the next: per hour ahead,
 * the sorted errors of the issues of the last BAND_DAYS whose intervals were published by then,
 * pooled with the neighbouring hours. A week's refresh adds the errors published since and drops
 * those that aged out, merged into the sorted pools: the same sorted numbers as sorting anew.
 * Errors older than every pooled one are let go, so that the errors held (what a daily rerun
 * stores, walk-forward.ts) stay the band's days' worth.
 */

/** Days of issues whose errors make the band of the next one. */
export const BAND_DAYS = 90;
/** Hours either side pooled into one horizon's band. */
const BAND_POOL_HOURS = 2;

/**
 * Numbers appended at the end and dropped from the start, in a typed buffer that doubles when
 * full: a resumed state's columns are copied in and out whole, not number by number.
 */
class Column {
  private buffer: Float64Array;
  private size: number;

  constructor(initial: ArrayLike<number> = []) {
    this.buffer = Float64Array.from(initial);
    this.size = initial.length;
  }

  get length(): number {
    return this.size;
  }

  /** The numbers held, as a view (valid until the next change). */
  get values(): Float64Array {
    return this.buffer.subarray(0, this.size);
  }

  push(value: number): void {
    if (this.size === this.buffer.length) {
      const grown = new Float64Array(Math.max(64, 2 * this.size));
      grown.set(this.buffer);
      this.buffer = grown;
    }
    this.buffer[this.size++] = value;
  }

  dropFirst(count: number): void {
    this.buffer.copyWithin(0, count, this.size);
    this.size -= count;
  }
}

/** One hour ahead's errors in issue order (so their ends ascend too), and whether each is pooled. */
interface HourErrors {
  /** The issue's index among every issue of the walk-forward. */
  readonly issue: Column;
  /** When the interval scored ended (its value was published a lag later). */
  readonly end: Column;
  readonly error: Column;
  /** 1 where pooled, else 0. */
  readonly pooled: Column;
}

/**
 * What the pools hold, as plain data: every hour's errors one after the other, hour `h`'s at
 * `offsets[h]` to `offsets[h + 1]` (a few typed arrays: a stored state is quick to copy and read).
 * Each error's issue is `firstIssue` plus its `issue` (the pools span the band's days of issues,
 * a few hundred), its interval's end `endMinutes` after that issue's time (slots end on whole
 * minutes, at most a few days after their issue): 4 bytes an error where epoch seconds and issue
 * indices took 8 (issue 38: the pools were half of a daily rerun's stored state, 42 of 87 MB).
 */
export interface ErrorPoolsData {
  readonly offsets: Uint32Array;
  readonly firstIssue: number;
  readonly issue: Uint16Array;
  readonly endMinutes: Uint16Array;
  readonly error: Float64Array;
  readonly pooled: Uint8Array;
}

export class ErrorPools {
  private readonly hours: HourErrors[];
  private pools: Float64Array[];

  /** `resumed`: pools' data, and every issue's time so far (its issues index them). */
  constructor(resumed?: { readonly data: ErrorPoolsData; readonly issueTimes: readonly number[] }) {
    this.hours = Array.from({ length: HORIZON_HOURS }, (_, hour) => {
      if (!resumed) {
        return {
          issue: new Column(),
          end: new Column(),
          error: new Column(),
          pooled: new Column(),
        };
      }
      const { data, issueTimes } = resumed;
      const [from, to] = [data.offsets[hour]!, data.offsets[hour + 1]!];
      const issue = new Float64Array(to - from);
      const end = new Float64Array(to - from);
      for (let k = from; k < to; k++) {
        issue[k - from] = data.firstIssue + data.issue[k]!;
        end[k - from] = afterIssue(data.endMinutes[k]!, issueTimes[issue[k - from]!]!);
      }
      return {
        issue: new Column(issue),
        end: new Column(end),
        error: new Column(data.error.subarray(from, to)),
        pooled: new Column(data.pooled.subarray(from, to)),
      };
    });
    // Each hour's pooled errors sorted once; each pool is then the one before it, less the hour
    // that left its reach and with the hour that entered, in one merge. Sorting each pool anew
    // sorted every error five times; merging its five hours, four merges a pool.
    const sorted = this.hours.map((hour): Float64Array => {
      const error = hour.error.values;
      const pooled = hour.pooled.values;
      let size = 0;
      for (let k = 0; k < pooled.length; k++) size += pooled[k]!;
      const own = new Float64Array(size);
      let at = 0;
      for (let k = 0; k < error.length; k++) if (pooled[k] === 1) own[at++] = error[k]!;
      return own.sort();
    });
    const none = new Float64Array(0);
    let pool = sorted
      .slice(0, BAND_POOL_HOURS)
      .reduce((merged, own) => mergeSorted(merged, own, none), none);
    this.pools = sorted.map((_, hour) => {
      const entering = sorted[hour + BAND_POOL_HOURS] ?? none;
      const leaving = sorted[hour - BAND_POOL_HOURS - 1] ?? none;
      pool = mergeSorted(pool, entering, leaving);
      return pool;
    });
  }

  /** A copy of the pools' errors as plain data (the pools themselves are rebuilt from them). */
  data(issueTimes: readonly number[]): ErrorPoolsData {
    const offsets = new Uint32Array(HORIZON_HOURS + 1);
    this.hours.forEach((hour, h) => (offsets[h + 1] = offsets[h]! + hour.error.length));
    const size = offsets[HORIZON_HOURS]!;
    // Each hour's errors come in issue order: the first issue of all is one of the hours' first.
    let firstIssue = Number.POSITIVE_INFINITY;
    for (const hour of this.hours) {
      if (hour.issue.length > 0) firstIssue = Math.min(firstIssue, hour.issue.values[0]!);
    }
    if (size === 0) firstIssue = 0;
    const issue = new Uint16Array(size);
    const endMinutes = new Uint16Array(size);
    const error = new Float64Array(size);
    const pooled = new Uint8Array(size);
    this.hours.forEach((hour, h) => {
      const at = offsets[h]!;
      const issues = hour.issue.values;
      const ends = hour.end.values;
      for (let k = 0; k < issues.length; k++) {
        const sinceFirst = issues[k]! - firstIssue;
        if (sinceFirst > 0xffff) throw new Error(`error pools: issue ${issues[k]} out of range`);
        issue[at + k] = sinceFirst;
        endMinutes[at + k] = minutesAfterIssue(ends[k]!, issueTimes[issues[k]!]!);
      }
      error.set(hour.error.values, at);
      pooled.set(hour.pooled.values, at);
    });
    return { offsets, firstIssue, issue, endMinutes, error, pooled };
  }

  /** The pools as the last `at` left them. */
  get current(): Float64Array[] {
    return this.pools;
  }

  /** Appends an error at `hours` ahead (1 to 72) of issue `issue`; issues come in order. */
  add(hours: number, issue: number, end: number, error: number): void {
    const list = this.hours[hours - 1]!;
    list.issue.push(issue);
    list.end.push(end);
    list.error.push(error);
    list.pooled.push(0);
  }

  /**
   * The pools of the errors of the issues of the last BAND_DAYS before issue `beforeIssue`
   * (`issueTimes` of every issue) whose intervals ended by `knownBy`.
   */
  at(issueTimes: readonly number[], beforeIssue: number, knownBy: number): Float64Array[] {
    const lastTs = beforeIssue > 0 ? issueTimes[beforeIssue - 1]! : Number.NEGATIVE_INFINITY;
    // The first issue of the last BAND_DAYS (issue times ascend).
    const sinceIssue = countBelow(issueTimes, lastTs - BAND_DAYS * DAY_SECONDS);
    const entering: number[][] = [];
    const leaving: number[][] = [];
    for (const list of this.hours) {
      const issue = list.issue.values;
      const pooled = list.pooled.values;
      const error = list.error.values;
      // An hour's errors come in issue order, their ends ascending: those wanted now (recent,
      // before the issue, published by `knownBy`) are one run of them, and so were those pooled
      // the last time. Only the errors between the two runs' edges change.
      const from = countBelow(issue, sinceIssue);
      const to = Math.max(
        from,
        Math.min(countBelow(issue, beforeIssue), countBelow(list.end.values, knownBy, true)),
      );
      const pooledFrom = pooled.indexOf(1);
      const pooledTo = pooledFrom < 0 ? pooledFrom : pooled.lastIndexOf(1) + 1;
      const into: number[] = [];
      const out: number[] = [];
      const mark = (start: number, stop: number, flag: 0 | 1) => {
        for (let k = start; k < stop; k++) {
          if (pooled[k] === flag) continue;
          (flag === 1 ? into : out).push(error[k]!);
          pooled[k] = flag;
        }
      };
      if (pooledFrom < 0) mark(from, to, 1);
      else {
        mark(pooledFrom, Math.min(pooledTo, from), 0);
        mark(Math.max(pooledFrom, to), pooledTo, 0);
        mark(from, Math.min(to, pooledFrom), 1);
        mark(Math.max(from, pooledTo), to, 1);
      }
      // Older than the oldest pooled: published earlier, so too old, and never pooled again.
      if (from < to && from > 0) {
        for (const column of [list.issue, list.end, list.error, list.pooled]) {
          column.dropFirst(from);
        }
      }
      entering.push(into);
      leaving.push(out);
    }
    this.pools = this.pools.map((pool, hour) => {
      const from = Math.max(0, hour - BAND_POOL_HOURS);
      const to = Math.min(HORIZON_HOURS - 1, hour + BAND_POOL_HOURS);
      const into = sortedErrors(entering, from, to);
      const out = sortedErrors(leaving, from, to);
      return into.length === 0 && out.length === 0 ? pool : mergeSorted(pool, into, out);
    });
    return this.pools;
  }
}

/** The errors of hours `from` to `to` (inclusive) of `byHour`, sorted as a typed array sorts. */
function sortedErrors(byHour: readonly number[][], from: number, to: number): Float64Array {
  let size = 0;
  for (let hour = from; hour <= to; hour++) size += byHour[hour]!.length;
  const errors = new Float64Array(size);
  let at = 0;
  for (let hour = from; hour <= to; hour++) {
    errors.set(byHour[hour]!, at);
    at += byHour[hour]!.length;
  }
  return errors.sort();
}

/**
 * `sorted` without the numbers of `out` and with those of `into` (all three sorted as a typed
 * array sorts: -0 before 0), sorted.
 */
function mergeSorted(sorted: Float64Array, into: Float64Array, out: Float64Array): Float64Array {
  const merged = new Float64Array(sorted.length + into.length - out.length);
  let at = 0;
  let k = 0;
  let o = 0;
  for (let s = 0; s < sorted.length; s++) {
    const value = sorted[s]!;
    if (o < out.length && Object.is(value, out[o]!)) {
      o++;
      continue;
    }
    while (k < into.length && before(into[k]!, value)) merged[at++] = into[k++]!;
    merged[at++] = value;
  }
  while (k < into.length) merged[at++] = into[k++]!;
  return merged;
}

/** Whether a typed array's sort puts `a` before `b` (-0 before 0). */
const before = (a: number, b: number): boolean => a < b || (a === 0 && b === 0 && Object.is(a, -0));
