import type { Method, Reading } from '../core/reading.js';
import { METHODS } from '../core/reading.js';
import { PROVISIONAL_METHOD, toTenths } from '../core/units.js';

/** One published change to apply to a cached series: a reading to set, or a ts to remove. */
export interface SeriesChange {
  readonly ts: number;
  /** The reading to serve at `ts`, or null when `ts` is no longer published. */
  readonly reading: { readonly value: number; readonly method: Method } | null;
}

const METHOD_INDEX = new Map(METHODS.map((method, index) => [method, index]));
const PROVISIONAL_INDEX = METHOD_INDEX.get(PROVISIONAL_METHOD)!;

/**
 * The published readings of one zone, held column-wise (13 bytes a point) so that 3.2M points
 * fit in about 45 MB. Values are kept in tenths, exactly as served (1 decimal).
 */
export class ZoneSeries {
  private tsColumn: Float64Array;
  private tenthsColumn: Int32Array;
  private methodColumn: Uint8Array;
  length = 0;

  constructor(readings: readonly Reading[] = []) {
    const capacity = Math.max(16, readings.length);
    this.tsColumn = new Float64Array(capacity);
    this.tenthsColumn = new Int32Array(capacity);
    this.methodColumn = new Uint8Array(capacity);
    for (const reading of readings) this.push(reading.ts, reading.value, reading.method);
  }

  ts(index: number): number {
    return this.tsColumn[index]!;
  }

  /** The served value: rounded to 1 decimal by the rule of core/units.ts. */
  value(index: number): number {
    return this.tenthsColumn[index]! / 10;
  }

  /** The served value in whole tenths, as held. */
  tenths(index: number): number {
    return this.tenthsColumn[index]!;
  }

  /** Whether the point is the GB operator's provisional reading (a forecast, not a settled value). */
  provisional(index: number): boolean {
    return this.methodColumn[index] === PROVISIONAL_INDEX;
  }

  method(index: number): Method {
    return METHODS[this.methodColumn[index]!]!;
  }

  /** Index of the first point with ts >= `ts` (binary search). */
  lowerBound(ts: number): number {
    let low = 0;
    let high = this.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.tsColumn[middle]! < ts) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /**
   * A copy of points `start` to `end - 1`: stays as it is while this series takes changes, for a
   * reader that hands the points out over time (an export).
   */
  slice(start: number, end: number): ZoneSeries {
    const copy = new ZoneSeries();
    const length = Math.max(0, end - start);
    copy.tsColumn = this.tsColumn.slice(start, start + length);
    copy.tenthsColumn = this.tenthsColumn.slice(start, start + length);
    copy.methodColumn = this.methodColumn.slice(start, start + length);
    copy.length = length;
    return copy;
  }

  /**
   * Views (no copy) of the times and tenths of points `start` to `end - 1`, `end` at most
   * `length`. They stay as they are while this series takes changes: points below `length` are
   * never written in place (appends go after them, anything else into new columns).
   */
  view(start: number, end: number): { ts: Float64Array; tenths: Int32Array } {
    return {
      ts: this.tsColumn.subarray(start, end),
      tenths: this.tenthsColumn.subarray(start, end),
    };
  }

  /**
   * Applies changes (any order). Appending after the newest point, the hourly case, is done in
   * place; anything else is merged into new columns in one pass.
   */
  apply(changes: readonly SeriesChange[]): void {
    const sorted = [...changes].sort((a, b) => a.ts - b.ts);
    const newest = this.length === 0 ? -Infinity : this.tsColumn[this.length - 1]!;
    const appendsOnly = sorted.every(
      (change, i) => change.reading && change.ts > (i === 0 ? newest : sorted[i - 1]!.ts),
    );
    if (appendsOnly) {
      for (const change of sorted)
        this.push(change.ts, change.reading!.value, change.reading!.method);
      return;
    }
    const merged = new ZoneSeries();
    merged.reserve(this.length + sorted.length);
    let index = 0;
    for (let c = 0; c < sorted.length; c++) {
      const change = sorted[c]!;
      // The last change for a ts wins when a batch holds several.
      if (sorted[c + 1]?.ts === change.ts) continue;
      while (index < this.length && this.tsColumn[index]! < change.ts)
        merged.copyFrom(this, index++);
      if (index < this.length && this.tsColumn[index] === change.ts) index++;
      if (change.reading) merged.push(change.ts, change.reading.value, change.reading.method);
    }
    while (index < this.length) merged.copyFrom(this, index++);
    this.tsColumn = merged.tsColumn;
    this.tenthsColumn = merged.tenthsColumn;
    this.methodColumn = merged.methodColumn;
    this.length = merged.length;
  }

  private push(ts: number, value: number, method: Method): void {
    this.reserve(this.length + 1);
    this.tsColumn[this.length] = ts;
    this.tenthsColumn[this.length] = toTenths(value);
    this.methodColumn[this.length] = METHOD_INDEX.get(method)!;
    this.length++;
  }

  private copyFrom(other: ZoneSeries, index: number): void {
    this.reserve(this.length + 1);
    this.tsColumn[this.length] = other.tsColumn[index]!;
    this.tenthsColumn[this.length] = other.tenthsColumn[index]!;
    this.methodColumn[this.length] = other.methodColumn[index]!;
    this.length++;
  }

  private reserve(capacity: number): void {
    if (capacity <= this.tsColumn.length) return;
    const size = Math.max(capacity, Math.ceil(this.tsColumn.length * 1.5));
    const grow = <T extends Float64Array | Int32Array | Uint8Array>(
      column: T,
      make: (n: number) => T,
    ) => {
      const next = make(size);
      next.set(column.subarray(0, this.length));
      return next;
    };
    this.tsColumn = grow(this.tsColumn, (n) => new Float64Array(n));
    this.tenthsColumn = grow(this.tenthsColumn, (n) => new Int32Array(n));
    this.methodColumn = grow(this.methodColumn, (n) => new Uint8Array(n));
  }
}
