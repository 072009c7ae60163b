/**
 * The linear algebra of the regressions (least squares with a ridge penalty) and of flow tracing
 * (one square system per hour, many right-hand sides): Gaussian elimination with partial
 * pivoting, kept as an LU factorization so a system is factored once and solved many times.
 */

/** The ridge penalty, relative to each feature's variance. */
const RIDGE = 1e-2;

/** The normal equations of a least-squares fit (their lower triangle), summed row by row. */
export class NormalEquations {
  readonly gram: Float64Array;
  readonly moment: Float64Array;
  rows = 0;

  constructor(readonly width: number) {
    this.gram = new Float64Array(width * width);
    this.moment = new Float64Array(width);
  }

  /** Adds a row whose first `x.length` columns are `x` (a caller adds any others), target `y`. */
  add(x: Float64Array, y: number): void {
    const { gram, moment, width } = this;
    for (let a = 0; a < x.length; a++) {
      moment[a]! += x[a]! * y;
      for (let b = 0; b <= a; b++) gram[a * width + b]! += x[a]! * x[b]!;
    }
    this.rows++;
  }

  /** `add` of the row whose first `count` columns are `values[offset, offset + count)`. */
  addFrom(values: Float64Array, offset: number, count: number, y: number): void {
    const { gram, moment, width } = this;
    for (let a = 0; a < count; a++) {
      const xa = values[offset + a]!;
      moment[a]! += xa * y;
      for (let b = 0; b <= a; b++) gram[a * width + b]! += xa * values[offset + b]!;
    }
    this.rows++;
  }

  /**
   * Adds the rows another's sums hold (of the same width), each column multiplied by `scale`'s
   * factor (by 1 without it).
   */
  addSums(other: NormalEquations, scale?: ColumnScale): void {
    const { gram, moment, width } = this;
    if (!scale) {
      for (let a = 0; a < width; a++) {
        moment[a]! += other.moment[a]!;
        for (let b = 0; b <= a; b++) gram[a * width + b]! += other.gram[a * width + b]!;
      }
    } else {
      const { factors, products } = scale;
      for (let a = 0; a < width; a++) {
        moment[a]! += other.moment[a]! * factors[a]!;
        for (let b = 0; b <= a; b++) {
          gram[a * width + b]! += other.gram[a * width + b]! * products[a * width + b]!;
        }
      }
    }
    this.rows += other.rows;
  }

  /** The coefficients, with the ridge penalty; undefined with too few rows to fit. */
  solve(): Float64Array | undefined {
    return solveRidge(this.gram, this.moment, this.width, this.rows);
  }
}

/**
 * Factors that multiply each column of a fit's rows (`NormalEquations.addSums`), with the product
 * of every pair of them made once: a fit adds dozens of sums at one scale.
 */
export class ColumnScale {
  /** Per entry of the gram's lower triangle, the product of its two columns' factors. */
  readonly products: Float64Array;

  constructor(readonly factors: Float64Array) {
    const width = factors.length;
    this.products = new Float64Array(width * width);
    for (let a = 0; a < width; a++) {
      for (let b = 0; b <= a; b++) this.products[a * width + b] = factors[a]! * factors[b]!;
    }
  }
}

/**
 * Solves the normal equations whose lower triangle `gram` holds, with the ridge penalty;
 * undefined with too few rows to fit.
 */
function solveRidge(
  gram: Float64Array,
  moment: Float64Array,
  width: number,
  rows: number,
): Float64Array | undefined {
  if (rows < 8 * width) return undefined;
  for (let a = 0; a < width; a++) {
    for (let b = 0; b < a; b++) gram[b * width + a] = gram[a * width + b]!;
  }
  // Ridge on everything but the intercept, relative to each feature's own variance (not its
  // second moment: that would shrink a feature with a large mean, the profile, towards the
  // intercept), and a floor so that a feature that is zero throughout (solar in the night hours
  // of a winter bucket) gets a weight of zero instead of a singular system.
  for (let a = 1; a < width; a++) {
    const spread = Math.max(0, gram[a * width + a]! - gram[a * width]! ** 2 / rows);
    gram[a * width + a] = gram[a * width + a]! + RIDGE * spread + 1e-9 * rows + 1e-12;
  }
  return solve(gram, moment, width);
}

/** Solves the symmetric system by Gaussian elimination with partial pivoting. */
function solve(matrix: Float64Array, vector: Float64Array, size: number): Float64Array | undefined {
  return factorLu(matrix, size)?.solve(vector);
}

/** A square matrix factored as P A = L U (partial pivoting), solvable for any right-hand side. */
interface LuFactors {
  /** The x of A x = `vector`; undefined if it is not finite. */
  solve(vector: Float64Array): Float64Array | undefined;
}

/**
 * Factors the `size` x `size` row-major `matrix` (not modified); undefined when a pivot is below
 * 1e-12, that is when the matrix is singular or nearly so. Solving after it performs exactly the
 * operations, in the same order, of elimination with the right-hand side carried along, so a
 * result does not depend on whether the matrix was factored once or per right-hand side.
 */
function factorLu(matrix: Float64Array, size: number): LuFactors | undefined {
  const lu = Float64Array.from(matrix);
  const pivots = new Int32Array(size);
  if (!factorLuInPlace(lu, size, pivots)) return undefined;
  return {
    solve(vector: Float64Array): Float64Array | undefined {
      const x = new Float64Array(size);
      return solveLuInto(lu, pivots, size, Float64Array.from(vector), x) ? x : undefined;
    },
  };
}

/**
 * factorLu on buffers the caller keeps (flow tracing reuses them hour after hour): factors the
 * first `size` x `size` row-major entries of `lu` in place and fills `pivots`; false when a pivot
 * is below 1e-12.
 */
export function factorLuInPlace(lu: Float64Array, size: number, pivots: Int32Array): boolean {
  // U on and above the diagonal, L's multipliers below it; rows swapped whole, multipliers too.
  for (let column = 0; column < size; column++) {
    let pivot = column;
    for (let r = column + 1; r < size; r++) {
      if (Math.abs(lu[r * size + column]!) > Math.abs(lu[pivot * size + column]!)) pivot = r;
    }
    if (Math.abs(lu[pivot * size + column]!) < 1e-12) return false;
    pivots[column] = pivot;
    if (pivot !== column) {
      for (let c = 0; c < size; c++) {
        const held = lu[column * size + c]!;
        lu[column * size + c] = lu[pivot * size + c]!;
        lu[pivot * size + c] = held;
      }
    }
    for (let r = column + 1; r < size; r++) {
      const factor = lu[r * size + column]! / lu[column * size + column]!;
      lu[r * size + column] = factor;
      if (factor === 0) continue;
      for (let c = column + 1; c < size; c++) lu[r * size + c]! -= factor * lu[column * size + c]!;
    }
  }
  return true;
}

/**
 * The x of A x = b into `x`, A factored by factorLuInPlace; `b` is overwritten. False when x is
 * not finite.
 */
export function solveLuInto(
  lu: Float64Array,
  pivots: Int32Array,
  size: number,
  b: Float64Array,
  x: Float64Array,
): boolean {
  for (let column = 0; column < size; column++) {
    const pivot = pivots[column]!;
    const held = b[column]!;
    b[column] = b[pivot]!;
    b[pivot] = held;
  }
  for (let r = 1; r < size; r++) {
    for (let c = 0; c < r; c++) {
      const factor = lu[r * size + c]!;
      if (factor !== 0) b[r]! -= factor * b[c]!;
    }
  }
  let finite = true;
  for (let r = size - 1; r >= 0; r--) {
    let sum = b[r]!;
    for (let c = r + 1; c < size; c++) sum -= lu[r * size + c]! * x[c]!;
    x[r] = sum / lu[r * size + r]!;
    if (!Number.isFinite(x[r])) finite = false;
  }
  return finite;
}
