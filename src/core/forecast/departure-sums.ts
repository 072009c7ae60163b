import type { DepartureFit } from './departure-fit.js';
import type { TrainingBlock } from './forecast-model.js';
import { NormalEquations } from './linalg.js';

/**
 * The sums a departure regression's fit is solved from, carried from one fit to the next of the
 * same bucket, variant and time of day (the backtest's weekly refits share all but a week of
 * their year of rows): updated by the rows that enter and leave, and rebuilt from the rows every
 * REBUILD_EVERY updates so that rounding cannot pile up.
 */

/** Per training row: two (column, value) pairs of per-hour features, column -1 when unused. */
export const SPARSE_STRIDE = 4;

/** One past issue's training rows of one bucket (forecast-model.ts `forEachTrainingBlock`). */
export interface DepartureBlock extends TrainingBlock {
  readonly dense: Float64Array;
  readonly sparse: Float64Array;
  /** What the daily base missed. */
  readonly residuals: Float64Array;
  readonly slotsOfWeek: Int32Array;
}

/** One past issue's rows in a fit: its block and how many of them (the published ones). */
export interface IncludedRows {
  readonly block: DepartureBlock;
  readonly rows: number;
}

/**
 * Updates before the sums are rebuilt from their rows: each update adds and removes a week of
 * a year of rows, and a rebuild costs as much as a fit from scratch (26 updates' worth). After 32
 * the fits of DE's 240-day real history still differ from fits from scratch by rounding only
 * (at most 5e-13 relative in any number of its backtest, as after 8).
 */
const REBUILD_EVERY = 32;

export class DepartureSums {
  /**
   * The normal equations without the offset column (the hour of the week's mean miss, each row's
   * own residual left out): that column depends on every row of its hour of the week, and is
   * made from the per-hour-of-week sums below when the fit is solved.
   */
  private readonly gram: Float64Array;
  private readonly moment: Float64Array;
  private rows = 0;
  /** Per slot of the week: residuals' count, sum and sum of squares. */
  private readonly counts: Float64Array;
  private readonly sums: Float64Array;
  private readonly squares: Float64Array;
  /** Per slot of the week and column: the column's sum, and its sum times the residual. */
  private readonly columnSums: Float64Array;
  private readonly residualColumnSums: Float64Array;
  /**
   * The rows summed, by past issue time, newest first: the map `moveTo` was given, kept rather
   * than copied (each fit builds a new one and reads it only).
   */
  private included: ReadonlyMap<number, IncludedRows> = new Map();
  /** When the fit of the rows summed was made (NaN before any). */
  fitTs = Number.NaN;
  private updates = 0;

  constructor(
    private readonly width: number,
    private readonly denseCount: number,
    private readonly slotsPerWeek: number,
  ) {
    this.gram = new Float64Array(width * width);
    this.moment = new Float64Array(width);
    this.counts = new Float64Array(slotsPerWeek);
    this.sums = new Float64Array(slotsPerWeek);
    this.squares = new Float64Array(slotsPerWeek);
    this.columnSums = new Float64Array(slotsPerWeek * width);
    this.residualColumnSums = new Float64Array(slotsPerWeek * width);
  }

  /** The rows summed, by past issue time, newest first. */
  get held(): ReadonlyMap<number, IncludedRows> {
    return this.included;
  }

  /** The sums of exactly `wanted` (by past issue time), from the rows they differ by. */
  moveTo(wanted: ReadonlyMap<number, IncludedRows>): void {
    // The maps walked with forEach: a for-of loop allocates an entry per past issue, per fit.
    const included = this.included;
    let changed = 0;
    wanted.forEach((now, pastTs) => (changed += rowsChanged(included.get(pastTs), now)));
    included.forEach((held, pastTs) => {
      if (!wanted.has(pastTs)) changed += held.rows;
    });
    if (changed === 0) return;
    if (++this.updates >= REBUILD_EVERY || changed >= this.rows) {
      this.rebuild(wanted);
      return;
    }
    included.forEach((held, pastTs) => {
      const now = wanted.get(pastTs);
      if (!now || now.block !== held.block) this.apply(held.block, 0, held.rows, -1);
      else if (now.rows < held.rows) this.apply(held.block, now.rows, held.rows, -1);
    });
    wanted.forEach((now, pastTs) => {
      const held = included.get(pastTs);
      if (!held || held.block !== now.block) this.apply(now.block, 0, now.rows, 1);
      else if (now.rows > held.rows) this.apply(now.block, held.rows, now.rows, 1);
    });
    this.included = wanted;
  }

  private rebuild(wanted: ReadonlyMap<number, IncludedRows>): void {
    for (const sums of [
      this.gram,
      this.moment,
      this.counts,
      this.sums,
      this.squares,
      this.columnSums,
      this.residualColumnSums,
    ]) {
      sums.fill(0);
    }
    this.rows = 0;
    this.updates = 0;
    wanted.forEach(({ block, rows }) => this.apply(block, 0, rows, 1));
    this.included = wanted;
  }

  /** Adds (`sign` 1) or removes (-1) the block's rows `[from, to)`. */
  private apply(block: DepartureBlock, from: number, to: number, sign: 1 | -1): void {
    const { gram, moment, width, denseCount } = this;
    const { dense, sparse, residuals, slotsOfWeek } = block;
    for (let r = from; r < to; r++) {
      const x = r * denseCount;
      const residual = residuals[r]!;
      const week = slotsOfWeek[r]!;
      const columns = week * width;
      for (let a = 0; a < denseCount; a++) {
        const value = sign * dense[x + a]!;
        moment[a]! += value * residual;
        for (let b = 0; b <= a; b++) gram[a * width + b]! += value * dense[x + b]!;
        this.columnSums[columns + a]! += value;
        this.residualColumnSums[columns + a]! += value * residual;
      }
      // The row's per-hour features (the others are zero), past the dense ones and in order.
      const at = r * SPARSE_STRIDE;
      for (let k = 0; k < 2; k++) {
        const index = sparse[at + 2 * k]!;
        if (index < 0) continue;
        const value = sign * sparse[at + 2 * k + 1]!;
        moment[index]! += value * residual;
        for (let b = 0; b < denseCount; b++) gram[index * width + b]! += value * dense[x + b]!;
        if (k === 1) gram[index * width + sparse[at]!]! += value * sparse[at + 1]!;
        gram[index * width + index]! += value * sparse[at + 2 * k + 1]!;
        this.columnSums[columns + index]! += value;
        this.residualColumnSums[columns + index]! += value * residual;
      }
      this.counts[week]! += sign;
      this.sums[week]! += sign * residual;
      this.squares[week]! += sign * residual * residual;
      this.rows += sign;
    }
  }

  /**
   * The fit: the offset column's entries summed per slot of the week (a row's offset is
   * (S - r) / (C - 1) of its slot's count C and sum S, its own residual r left out, 0 with
   * C < 2), then the normal equations solved as a fit from scratch solves them.
   */
  solve(): DepartureFit | undefined {
    const { width, denseCount: offsetColumn } = this;
    const equations = new NormalEquations(width);
    equations.gram.set(this.gram);
    equations.moment.set(this.moment);
    equations.rows = this.rows;
    const { gram, moment } = equations;
    const offsets = new Float64Array(this.slotsPerWeek);
    for (let week = 0; week < this.slotsPerWeek; week++) {
      const count = this.counts[week]!;
      if (count < 2) continue;
      const sum = this.sums[week]!;
      const squares = this.squares[week]!;
      offsets[week] = sum / count;
      const columns = week * width;
      // Sum over the slot's rows of (S - r) / (C - 1) times each other column.
      const crossed = (column: number) =>
        (sum * this.columnSums[columns + column]! - this.residualColumnSums[columns + column]!) /
        (count - 1);
      for (let b = 0; b < offsetColumn; b++) gram[offsetColumn * width + b]! += crossed(b);
      for (let a = offsetColumn + 1; a < width; a++) gram[a * width + offsetColumn]! += crossed(a);
      gram[offsetColumn * width + offsetColumn]! +=
        ((count - 2) * sum * sum + squares) / ((count - 1) * (count - 1));
      moment[offsetColumn]! += (sum * sum - squares) / (count - 1);
    }
    const coefficients = equations.solve();
    return coefficients && { coefficients, offsets };
  }
}

/** How many rows differ between a past issue's rows held and wanted. */
function rowsChanged(held: IncludedRows | undefined, now: IncludedRows): number {
  if (!held) return now.rows;
  return held.block === now.block ? Math.abs(now.rows - held.rows) : held.rows + now.rows;
}
