import { DAY_SECONDS, HORIZON_HOURS } from './series.js';

/**
 * The band's error pools (backtest.ts), carried from one refresh to the next: per hour ahead,
 * the sorted errors of the issues of the last BAND_DAYS whose intervals were published by then,
 * pooled with the neighbouring hours. A week's refresh adds the errors published since and drops
 * those that aged out, merged into the sorted pools: the same sorted numbers as sorting anew.
 */

/** Days of issues whose errors make the band of the next one. */
export const BAND_DAYS = 90;
/** Hours either side pooled into one horizon's band. */
const BAND_POOL_HOURS = 2;

export interface ScoredError {
  readonly issue: number;
  /** When the interval scored ended (its value was published a lag later). */
  readonly end: number;
  readonly error: number;
}

export class ErrorPools {
  private pools: Float64Array[] = Array.from({ length: HORIZON_HOURS }, () => new Float64Array(0));
  /** Per hour ahead, whether each of its errors is in the pools, by index. */
  private readonly pooled: Uint8Array[] = Array.from(
    { length: HORIZON_HOURS },
    () => new Uint8Array(0),
  );
  /** Per hour ahead, the index of its oldest error in the pools (its length when none is). */
  private readonly oldest = new Array<number>(HORIZON_HOURS).fill(0);

  /** Errors by hour ahead (index hours - 1), in issue order; the scoring appends to them. */
  constructor(private readonly errors: readonly (readonly ScoredError[])[]) {}

  /**
   * The pools of the errors of the issues of the last BAND_DAYS before issue `beforeIssue`
   * (`issueTimes` of every issue) whose intervals ended by `knownBy`.
   */
  at(issueTimes: readonly number[], beforeIssue: number, knownBy: number): Float64Array[] {
    const lastTs = beforeIssue > 0 ? issueTimes[beforeIssue - 1]! : Number.NEGATIVE_INFINITY;
    const sinceTs = lastTs - BAND_DAYS * DAY_SECONDS;
    const entering: number[][] = [];
    const leaving: number[][] = [];
    this.errors.forEach((list, hour) => {
      const into: number[] = [];
      const out: number[] = [];
      let pooled = this.pooled[hour]!;
      if (pooled.length < list.length) {
        const grown = new Uint8Array(Math.max(list.length, 2 * pooled.length));
        grown.set(pooled);
        this.pooled[hour] = pooled = grown;
      }
      let oldest = list.length;
      // Newest first, down to the oldest error pooled or the first too old to be.
      for (let k = list.length - 1; k >= 0; k--) {
        const entry = list[k]!;
        const recent = issueTimes[entry.issue]! >= sinceTs;
        if (!recent && k < this.oldest[hour]!) break;
        const wanted = recent && entry.issue < beforeIssue && entry.end <= knownBy;
        if (wanted) oldest = k;
        if (wanted === (pooled[k] === 1)) continue;
        (wanted ? into : out).push(entry.error);
        pooled[k] = wanted ? 1 : 0;
      }
      this.oldest[hour] = oldest;
      entering.push(into);
      leaving.push(out);
    });
    this.pools = this.pools.map((pool, hour) => {
      const from = Math.max(0, hour - BAND_POOL_HOURS);
      const to = Math.min(HORIZON_HOURS - 1, hour + BAND_POOL_HOURS);
      const into = entering.slice(from, to + 1).flat();
      const out = leaving.slice(from, to + 1).flat();
      return into.length === 0 && out.length === 0
        ? pool
        : mergeSorted(pool, Float64Array.from(into).sort(), Float64Array.from(out).sort());
    });
    return this.pools;
  }
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
  for (const value of sorted) {
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
