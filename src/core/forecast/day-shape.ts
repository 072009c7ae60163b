import { blendHandOvers } from './hand-over.js';
import { DAY_SECONDS, HOUR_SECONDS } from './series.js';

/**
 * The next day's shape, fitted for placing a job. A job placed within the next 24 hours needs the
 * order of those hours, not their level; the candidates' weighted mean (backtest.ts `combine`)
 * weighs each by its whole error, level included. Here the forecast's mean over the next day is
 * kept and its shape within the day is the mix of the candidates' own shapes (each less its mean
 * over the day) that best fitted the published days' shapes: non-negative least squares, walk-
 * forward over the issues of the last WEIGHT_DAYS whose day had been published by then, a small
 * ridge against candidates that move together. (Weights from each candidate's shape error alone,
 * as the mix weighs whole errors, were tried and moved savings captured by less than a point
 * either way: docs/forecast.md.)
 */

/** The hours whose order is fitted: the job window of the backtest's savings captured. */
const DAY_SHAPE_HOURS = 24;
/**
 * Days of earlier issues the weights are fitted on: the days' shapes follow the season. Over the
 * mix's 180 days, savings captured moved a few tenths of a point either way (docs/forecast.md).
 */
const WEIGHT_DAYS = 60;
/**
 * Ridge, relative to the mean squared shape of a candidate. Chosen on the real history between
 * 0.01 and 0.1 (the larger did better in five zones, worse in three; docs/forecast.md).
 */
const RIDGE = 0.1;
/** At least this many published days before the shape is fitted; until then the mix serves. */
const MIN_DAYS = 20;
/** Coordinate-descent sweeps at most; a handful of candidates settle in tens. */
const NNLS_SWEEPS = 200;

/** What the day-shape fit needs of a zone: its grid, its values and their publication lag. */
export interface DayShapeZone {
  readonly series: {
    readonly startTs: number;
    readonly step: number;
    readonly values: Float64Array;
  };
  readonly inputs: { readonly publicationLagSeconds: number };
}

export interface DayShapeIssue {
  readonly issueTs: number;
  /** The first slot the forecasts' arrays hold. */
  readonly visibleEnd: number;
}

/**
 * Where the next day lies in an issue's forecast arrays (index of its first slot, the first
 * starting at or after the issue time) and how many slots it has; null when it starts before the
 * first forecast slot.
 */
export function dayWindow(
  zone: DayShapeZone,
  issue: DayShapeIssue,
): { offset: number; slots: number } | null {
  const { startTs, step } = zone.series;
  const first = Math.ceil((issue.issueTs - startTs) / step);
  if (first < issue.visibleEnd) return null;
  return {
    offset: first - issue.visibleEnd,
    slots: Math.ceil((DAY_SHAPE_HOURS * HOUR_SECONDS) / step),
  };
}

/** `values[from, from + length)` less its mean; null when any is missing. */
function shapeOf(values: ArrayLike<number>, from: number, length: number): Float64Array | null {
  if (from < 0 || from + length > values.length) return null;
  const shape = new Float64Array(length);
  let mean = 0;
  for (let k = 0; k < length; k++) {
    const value = values[from + k]!;
    if (!Number.isFinite(value)) return null;
    shape[k] = value;
    mean += value / length;
  }
  for (let k = 0; k < length; k++) shape[k]! -= mean;
  return shape;
}

/**
 * One issue's published next day: its shapes' normal equations, the gram's lower triangle row by
 * row (symmetric: the upper is the same numbers) then the moment, `daySumsWidth` numbers; a
 * rerun's stored state keeps 60 days of them per zone-basis.
 */
export interface DayShapeSums {
  /** When the day's last value was published. */
  readonly publishedAt: number;
  readonly sums: Float64Array;
}

/** Numbers in a day's sums of `count` sources. */
const daySumsWidth = (count: number): number => (count * (count + 1)) / 2 + count;

/**
 * The normal equations of an issue's next day (the sources' shapes against the outcome's), or
 * null where the day is not wholly published or forecast. `sources`: the issue's candidate
 * forecasts, in one order throughout.
 */
export function dayShapeSums(
  zone: DayShapeZone,
  issue: DayShapeIssue,
  sources: readonly Float64Array[],
): DayShapeSums | null {
  const { startTs, step, values } = zone.series;
  const window = dayWindow(zone, issue);
  if (!window) return null;
  const first = issue.visibleEnd + window.offset;
  const outcome = shapeOf(values, first, window.slots);
  const shapes = sources.map((source) => shapeOf(source, window.offset, window.slots));
  if (!outcome || shapes.some((shape) => shape === null)) return null;
  const count = shapes.length;
  const sums = new Float64Array(daySumsWidth(count));
  const moments = daySumsWidth(count) - count;
  let at = 0;
  for (let a = 0; a < count; a++) {
    for (let b = 0; b <= a; b++) {
      let sum = 0;
      for (let k = 0; k < window.slots; k++) sum += shapes[a]![k]! * shapes[b]![k]!;
      sums[at++] = sum;
    }
    let moment = 0;
    for (let k = 0; k < window.slots; k++) moment += shapes[a]![k]! * outcome[k]!;
    sums[moments + a] = moment;
  }
  return {
    publishedAt: startTs + (first + window.slots) * step + zone.inputs.publicationLagSeconds,
    sums,
  };
}

/** `IssueDays` as plain data: its issues' times, publication times and sums, in order. */
export interface IssueDaysData {
  readonly issueTs: Float64Array;
  readonly publishedAt: Float64Array;
  readonly sums: Float64Array;
}

/**
 * Issues in order and their next day's sums (`dayShapeSums`), `daySumsWidth` numbers each, one
 * after the other in a typed buffer per field (a day's object each scattered what the weights
 * read at every issue); the publication time NaN, the sums zero, where an issue had no day. The
 * issues held are `[start, end)` of the buffers: appended, and the stale let go, by an index.
 */
export class IssueDays {
  private readonly width: number;
  private issueTs = new Float64Array(0);
  private publishedAt = new Float64Array(0);
  private sums = new Float64Array(0);
  private start = 0;
  private end = 0;

  /** `count`: the sources (candidates) of every day; `from`: the days to start with. */
  constructor(
    private readonly count: number,
    from?: IssueDaysData,
  ) {
    this.width = daySumsWidth(count);
    const held = from?.issueTs.length ?? 0;
    this.moveToFront(Math.max(64, 2 * held));
    if (from) {
      this.issueTs.set(from.issueTs);
      this.publishedAt.set(from.publishedAt);
      this.sums.set(from.sums);
      this.end = held;
    }
  }

  /** The buffers of `capacity` issues, the issues held at their front. */
  private moveToFront(capacity: number): void {
    const { start, end, width } = this;
    const grown = (values: Float64Array, per: number) => {
      const buffer = new Float64Array(capacity * per);
      buffer.set(values.subarray(start * per, end * per));
      return buffer;
    };
    this.issueTs = grown(this.issueTs, 1);
    this.publishedAt = grown(this.publishedAt, 1);
    this.sums = grown(this.sums, width);
    this.start = 0;
    this.end = end - start;
  }

  /** Appends an issue and its day's sums (null: it had no day). */
  push(issueTs: number, day: DayShapeSums | null): void {
    if (this.end === this.issueTs.length) {
      this.moveToFront(Math.max(this.issueTs.length, 2 * (this.end - this.start + 1)));
    }
    const k = this.end++;
    this.issueTs[k] = issueTs;
    this.publishedAt[k] = day ? day.publishedAt : Number.NaN;
    if (day) this.sums.set(day.sums, k * this.width);
    else this.sums.fill(0, k * this.width, (k + 1) * this.width);
  }

  /** Lets go of the issues before `keptFrom`. */
  dropBefore(keptFrom: number): void {
    while (this.start < this.end && this.issueTs[this.start]! < keptFrom) this.start++;
  }

  /** A copy of the issues held, as plain data. */
  data(): IssueDaysData {
    const { start, end, width } = this;
    return {
      issueTs: this.issueTs.slice(start, end),
      publishedAt: this.publishedAt.slice(start, end),
      sums: this.sums.slice(start * width, end * width),
    };
  }

  /**
   * The weight of each source's shape at time `at` (infinite: after the last issue, what serves
   * next), from the days of the issues held (those before, in order) published by then within
   * WEIGHT_DAYS; null where fewer than MIN_DAYS were.
   */
  weightsAt(at: number): Float64Array | null {
    const { count, width, issueTs, publishedAt } = this;
    const lastTs = this.end > this.start ? issueTs[this.end - 1]! : 0;
    const since = (Number.isFinite(at) ? at : lastTs + DAY_SECONDS) - WEIGHT_DAYS * DAY_SECONDS;
    const sums = new Float64Array(count * count + count);
    const moments = count * count;
    const dayMoments = width - count;
    let seen = 0;
    for (let k = this.end - 1; k >= this.start; k--) {
      if (issueTs[k]! < since) break;
      // NaN (no day) is not at or before `at` either.
      if (!(publishedAt[k]! <= at)) continue;
      // The gram is symmetric: its lower triangle summed, then mirrored.
      let from = k * width;
      for (let a = 0; a < count; a++) {
        for (let e = a * count; e <= a * count + a; e++) sums[e]! += this.sums[from++]!;
        sums[moments + a]! += this.sums[k * width + dayMoments + a]!;
      }
      seen++;
    }
    if (seen < MIN_DAYS) return null;
    for (let a = 0; a < count; a++) {
      for (let b = 0; b < a; b++) sums[b * count + a] = sums[a * count + b]!;
    }
    return nonNegativeRidge(sums, count);
  }
}

/** Days older than this before the newest issue weigh no later issue: a rerun keeps no more. */
export const DAY_SHAPE_KEPT_SECONDS = WEIGHT_DAYS * DAY_SECONDS;

/**
 * Per issue (and, last, once more for after the last issue: what serves next), the weight of each
 * source's shape, or null where too few published days precede it. `sources(index)` gives an
 * issue's candidate forecasts, in one order throughout.
 */
export function weighDayShapes(
  zone: DayShapeZone,
  issues: readonly DayShapeIssue[],
  sources: (index: number) => readonly Float64Array[],
): (Float64Array | null)[] {
  const days = new IssueDays(issues.length > 0 ? sources(0).length : 0);
  const weights = issues.map((issue, index) => {
    const atIssue = days.weightsAt(issue.issueTs);
    days.push(issue.issueTs, dayShapeSums(zone, issue, sources(index)));
    return atIssue;
  });
  return [...weights, days.weightsAt(Number.POSITIVE_INFINITY)];
}

/**
 * Minimises |y - X w|^2 + ridge |w|^2 over w >= 0, from the normal equations (gram, then moment),
 * by coordinate descent; ridge is RIDGE times the gram's mean diagonal.
 */
export function nonNegativeRidge(sums: Float64Array, count: number): Float64Array {
  let trace = 0;
  for (let a = 0; a < count; a++) trace += sums[a * count + a]! / count;
  const ridge = RIDGE * trace;
  const weights = new Float64Array(count).fill(1 / count);
  for (let sweep = 0; sweep < NNLS_SWEEPS; sweep++) {
    let moved = 0;
    for (let a = 0; a < count; a++) {
      let rest = sums[count * count + a]!;
      for (let b = 0; b < count; b++) if (b !== a) rest -= sums[a * count + b]! * weights[b]!;
      const next = Math.max(0, rest / (sums[a * count + a]! + ridge));
      moved = Math.max(moved, Math.abs(next - weights[a]!));
      weights[a] = next;
    }
    if (moved < 1e-9) break;
  }
  return weights;
}

/**
 * `forecast` with its next day's shape replaced by the weighted shapes of `sources` (its mean
 * over the day kept), the return to `forecast` after the day blended (hand-over.ts). Unchanged
 * where the day is not wholly forecast by every source of some weight.
 */
export function reshapeDay(
  zone: DayShapeZone,
  issue: DayShapeIssue,
  forecast: Float64Array,
  sources: readonly Float64Array[],
  weights: Float64Array,
): Float64Array {
  const window = dayWindow(zone, issue);
  if (!window) return forecast;
  const own = shapeOf(forecast, window.offset, window.slots);
  // A source of no weight (GB's operator forecast elsewhere than GB) need not reach the day.
  const shapes = sources.map((source, s) =>
    weights[s]! > 0 ? shapeOf(source, window.offset, window.slots) : new Float64Array(0),
  );
  if (!own || shapes.some((shape) => shape === null)) return forecast;
  const reshaped = Float64Array.from(forecast);
  const choice = new Uint8Array(forecast.length);
  for (let k = 0; k < window.slots; k++) {
    const i = window.offset + k;
    let value = forecast[i]! - own[k]!;
    shapes.forEach((shape, s) => {
      if (weights[s]! > 0) value += weights[s]! * shape![k]!;
    });
    reshaped[i] = value;
  }
  choice.fill(1, window.offset + window.slots);
  return blendHandOvers([reshaped, forecast], choice, HOUR_SECONDS / zone.series.step);
}
