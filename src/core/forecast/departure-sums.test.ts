import { describe, expect, it } from 'vitest';
import {
  type DepartureBlock,
  DepartureSums,
  type IncludedRows,
  SPARSE_STRIDE,
} from './departure-sums.js';
import { NormalEquations } from './linalg.js';

const DENSE = 3;
/** Dense columns, the offset column, then four per-hour columns. */
const WIDTH = DENSE + 1 + 4;
const SLOTS_PER_WEEK = 5;

/** A pseudo-random block of `rows` rows (a fixed sequence per seed). */
function block(seed: number, rows: number): DepartureBlock {
  let state = seed;
  const next = () => {
    state = (state * 48271) % 2147483647;
    return state / 2147483647 - 0.5;
  };
  const sparse = new Float64Array(rows * SPARSE_STRIDE);
  const slotsOfWeek = new Int32Array(rows);
  for (let r = 0; r < rows; r++) {
    sparse[r * SPARSE_STRIDE] = DENSE + 1 + (r % 2);
    sparse[r * SPARSE_STRIDE + 1] = next();
    sparse[r * SPARSE_STRIDE + 2] = r % 3 === 0 ? DENSE + 3 + (r % 2) : -1;
    sparse[r * SPARSE_STRIDE + 3] = next();
    slotsOfWeek[r] = (r + seed) % SLOTS_PER_WEEK;
  }
  return {
    slots: Int32Array.from({ length: rows }, (_, r) => r),
    dense: Float64Array.from({ length: rows * DENSE }, (_, k) => (k % DENSE === 0 ? 1 : next())),
    sparse,
    residuals: Float64Array.from({ length: rows }, () => 3 * next() + 1),
    slotsOfWeek,
  };
}

/** The fit as the rows define it: each row's offset with its own residual left out. */
function rowByRow(included: readonly IncludedRows[]): Float64Array {
  const sums = new Float64Array(SLOTS_PER_WEEK);
  const counts = new Float64Array(SLOTS_PER_WEEK);
  for (const { block: rowsOf, rows } of included) {
    for (let r = 0; r < rows; r++) {
      sums[rowsOf.slotsOfWeek[r]!]! += rowsOf.residuals[r]!;
      counts[rowsOf.slotsOfWeek[r]!]! += 1;
    }
  }
  const equations = new NormalEquations(WIDTH);
  const x = new Float64Array(WIDTH);
  for (const { block: rowsOf, rows } of included) {
    for (let r = 0; r < rows; r++) {
      x.fill(0);
      for (let c = 0; c < DENSE; c++) x[c] = rowsOf.dense[r * DENSE + c]!;
      const residual = rowsOf.residuals[r]!;
      const week = rowsOf.slotsOfWeek[r]!;
      x[DENSE] = counts[week]! > 1 ? (sums[week]! - residual) / (counts[week]! - 1) : 0;
      for (let k = 0; k < 2; k++) {
        const index = rowsOf.sparse[r * SPARSE_STRIDE + 2 * k]!;
        if (index >= 0) x[index] = rowsOf.sparse[r * SPARSE_STRIDE + 2 * k + 1]!;
      }
      equations.add(x, residual);
    }
  }
  return equations.solve()!;
}

describe('the departure regression carried from fit to fit', () => {
  it('solves what the rows define, updated by the rows that enter and leave as when built anew', () => {
    const blocks = Array.from({ length: 12 }, (_, k) => block(k + 7, 20 + k));
    // Fits a "week" apart: the oldest blocks leave, new ones enter, the newest grows.
    const windows = [
      [0, 1, 2, 3, 4, 5, 6, 7],
      [1, 2, 3, 4, 5, 6, 7, 8],
      [3, 4, 5, 6, 7, 8, 9, 10],
      [4, 5, 6, 7, 8, 9, 10, 11],
    ];
    const carried = new DepartureSums(WIDTH, DENSE, SLOTS_PER_WEEK);
    windows.forEach((window, fit) => {
      const wanted = new Map<number, IncludedRows>(
        window.map((k, i) => [
          k,
          // The newest block is partly published, and entirely at the next fit.
          { block: blocks[k]!, rows: i === window.length - 1 ? 10 + fit : blocks[k]!.slots.length },
        ]),
      );
      carried.moveTo(wanted);
      const fresh = new DepartureSums(WIDTH, DENSE, SLOTS_PER_WEEK);
      fresh.moveTo(wanted);
      const expected = rowByRow([...wanted.values()]);
      for (const sums of [carried, fresh]) {
        const { coefficients, offsets } = sums.solve()!;
        coefficients.forEach((value, c) => expect(value).toBeCloseTo(expected[c]!, 10));
        expect(offsets.some((offset) => offset !== 0)).toBe(true);
      }
    });
  });
});
