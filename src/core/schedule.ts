/**
 * Where and when to run a job of a given length so that the intensity it runs on is lowest
 * (extensions §5, `GET /v1/schedule`). Pure: no I/O, no clock; the HTTP layer builds the series.
 *
 * Alignment (docs/api.md, `GET /v1/schedule`):
 * - A job runs in whole intervals of a zone's grid: its duration rounds up to
 *   `k = ceil(duration / step)` intervals of that zone (a 45-minute job takes one hour in an hourly
 *   zone and two half hours in GB).
 * - An interval is usable only when it lies entirely inside `[earliest, deadline)`. When `earliest`
 *   falls inside an interval, that partly-past interval is NOT used: the first possible start is
 *   the next boundary of the zone's grid. Likewise an interval that ends after `deadline` is not
 *   used. (Counting a part-interval as a whole one would charge the job for time it cannot use, or
 *   report a start before `earliest`.)
 * - An interval without a value (NaN) cannot be used: a contiguous window that holds one is not a
 *   candidate, and an interruptible job never picks it.
 *
 * Means are compared exactly as `sum / k`, cross-multiplied, so that equal means are real ties
 * when the values are integers (the HTTP layer passes tenths of gCO2eq/kWh, as served).
 * Ties: the earliest start wins, then the zone listed first. For an interruptible job, intervals of
 * equal value are taken earliest first (which also gives the earliest possible first slot).
 */

/** One zone's intervals: `values[i]` is the interval starting at `startTs + i * stepSeconds`. */
export interface ScheduleSeries {
  readonly zone: string;
  /** Start of `values[0]`, epoch seconds; on the zone's grid (the grid is `startTs + j * step`). */
  readonly startTs: number;
  readonly stepSeconds: number;
  /** NaN: no value for that interval. */
  readonly values: ArrayLike<number>;
}

export interface ScheduleProblem {
  /** In the caller's order: ties go to the zone listed first, `now` is in `series[0]`. */
  readonly series: readonly ScheduleSeries[];
  /** How long the job runs, in seconds (> 0). */
  readonly durationSeconds: number;
  /** The window the job must run entirely inside, `[earliest, deadline)`, epoch seconds. */
  readonly earliest: number;
  readonly deadline: number;
  /** True: the job may run in any set of intervals (the lowest ones), not one stretch. */
  readonly interruptible: boolean;
}

interface ScheduledSlot {
  readonly ts: number;
  readonly value: number;
}

/** A job placed in one zone. */
export interface ScheduledWindow {
  readonly zone: string;
  /** Index of the zone in `ScheduleProblem.series`. */
  readonly zoneIndex: number;
  /** Start of the first interval used, epoch seconds. */
  readonly start: number;
  /** End of the last interval used. */
  readonly end: number;
  /** Sum of the values of the intervals used, and how many: `mean = sum / intervals`. */
  readonly sum: number;
  readonly intervals: number;
  readonly mean: number;
  /** Interruptible jobs only: the intervals used, in time order. */
  readonly slots?: readonly ScheduledSlot[];
}

/** Why a zone has no window. */
type Unscheduled = 'no-room' | 'no-values';

export interface ScheduleResult {
  /** The best window of every zone that has one, ascending by mean (ties as above). */
  readonly options: readonly ScheduledWindow[];
  /** `options[0]`, or undefined when no zone has a window. */
  readonly best: ScheduledWindow | undefined;
  /**
   * The job started as soon as possible in `series[0]`, in one stretch (even when interruptible):
   * at the first boundary of its grid at or after `earliest`. Undefined when that stretch does
   * not fit before `deadline` or holds an interval without a value.
   */
  readonly now: ScheduledWindow | undefined;
  /**
   * The zones without a window, in the order listed: `no-room` when the window holds fewer whole
   * intervals of the zone's grid than the job needs, `no-values` when no stretch (or, for an
   * interruptible job, not enough intervals) inside it has values.
   */
  readonly unscheduled: readonly { readonly zone: string; readonly reason: Unscheduled }[];
}

/** The whole intervals of a zone's grid inside `[earliest, deadline)`: indexes `[first, end)`. */
function usableIntervals(
  series: Pick<ScheduleSeries, 'startTs' | 'stepSeconds'>,
  earliest: number,
  deadline: number,
): { first: number; end: number } {
  const { startTs, stepSeconds } = series;
  return {
    first: Math.ceil((earliest - startTs) / stepSeconds),
    end: Math.floor((deadline - startTs) / stepSeconds),
  };
}

/** Intervals a job of `durationSeconds` takes on a grid of `stepSeconds`. */
const intervalsFor = (durationSeconds: number, stepSeconds: number): number =>
  Math.ceil(durationSeconds / stepSeconds);

/** Whether the mean `sumA / nA` is below `sumB / nB` (both counts > 0), exactly for integers. */
const lower = (sumA: number, nA: number, sumB: number, nB: number) => sumA * nB < sumB * nA;

/** Whether window `a` ranks before window `b`: lower mean, then earlier start, then listed first. */
function ranksBefore(a: ScheduledWindow, b: ScheduledWindow): boolean {
  if (lower(a.sum, a.intervals, b.sum, b.intervals)) return true;
  if (lower(b.sum, b.intervals, a.sum, a.intervals)) return false;
  if (a.start !== b.start) return a.start < b.start;
  return a.zoneIndex < b.zoneIndex;
}

export function schedule(problem: ScheduleProblem): ScheduleResult {
  const { series, durationSeconds, earliest, deadline, interruptible } = problem;
  const options: ScheduledWindow[] = [];
  const unscheduled: { zone: string; reason: Unscheduled }[] = [];
  let scratch = new Float64Array(0);
  for (let zoneIndex = 0; zoneIndex < series.length; zoneIndex++) {
    const zone = series[zoneIndex]!;
    const k = intervalsFor(durationSeconds, zone.stepSeconds);
    const grid = usableIntervals(zone, earliest, deadline);
    if (grid.end - grid.first < k) {
      unscheduled.push({ zone: zone.zone, reason: 'no-room' });
      continue;
    }
    // Only the intervals the series has values for can be used.
    const first = Math.max(0, grid.first);
    const end = Math.min(zone.values.length, grid.end);
    const search: ZoneSearch = { zone, zoneIndex, first, end, k };
    let window: ScheduledWindow | undefined;
    if (interruptible) {
      if (scratch.length < end - first) scratch = new Float64Array(end - first);
      window = lowestIntervals(search, scratch);
    } else {
      window = lowestStretch(search);
    }
    if (window) options.push(window);
    else unscheduled.push({ zone: zone.zone, reason: 'no-values' });
  }
  // One option per zone served (45 by default; ZONES=all adds the served nodes): an insertion
  // sort keeps the comparison exact and allocation-free.
  for (let i = 1; i < options.length; i++) {
    const current = options[i]!;
    let j = i - 1;
    while (j >= 0 && ranksBefore(current, options[j]!)) {
      options[j + 1] = options[j]!;
      j--;
    }
    options[j + 1] = current;
  }
  return { options, best: options[0], now: startNow(problem), unscheduled };
}

/** The job in one stretch from the first boundary at or after `earliest` in `series[0]`. */
function startNow(problem: ScheduleProblem): ScheduledWindow | undefined {
  const zone = problem.series[0];
  if (!zone) return undefined;
  const k = intervalsFor(problem.durationSeconds, zone.stepSeconds);
  const grid = usableIntervals(zone, problem.earliest, problem.deadline);
  const first = grid.first;
  if (first < 0 || first + k > Math.min(grid.end, zone.values.length)) return undefined;
  let sum = 0;
  for (let i = first; i < first + k; i++) {
    const value = zone.values[i]!;
    if (Number.isNaN(value)) return undefined;
    sum += value;
  }
  return windowOf(zone, 0, first, k, sum);
}

function windowOf(
  zone: ScheduleSeries,
  zoneIndex: number,
  first: number,
  k: number,
  sum: number,
): ScheduledWindow {
  const start = zone.startTs + first * zone.stepSeconds;
  return {
    zone: zone.zone,
    zoneIndex,
    start,
    end: start + k * zone.stepSeconds,
    sum,
    intervals: k,
    mean: sum / k,
  };
}

/** Where a zone's job is placed: `k` intervals among `[first, end)` of the `zoneIndex`-th zone. */
interface ZoneSearch {
  readonly zone: ScheduleSeries;
  readonly zoneIndex: number;
  readonly first: number;
  readonly end: number;
  readonly k: number;
}

/**
 * The stretch of `k` intervals within `[first, end)` of lowest sum, the earliest of equal ones:
 * a sliding window with a running sum and a running count of intervals without a value, O(n).
 */
function lowestStretch(search: ZoneSearch): ScheduledWindow | undefined {
  const { zone, zoneIndex, first, end, k } = search;
  const values = zone.values;
  let sum = 0;
  let missing = 0;
  let bestSum = Infinity;
  let bestFirst = -1;
  for (let i = first; i < end; i++) {
    const entering = values[i]!;
    if (Number.isNaN(entering)) missing++;
    else sum += entering;
    const leavingIndex = i - k;
    if (leavingIndex >= first) {
      const leaving = values[leavingIndex]!;
      if (Number.isNaN(leaving)) missing--;
      else sum -= leaving;
    }
    // Strictly lower only: an equal later stretch keeps the earlier start.
    if (i - first + 1 >= k && missing === 0 && sum < bestSum) {
      bestSum = sum;
      bestFirst = i - k + 1;
    }
  }
  return bestFirst < 0 ? undefined : windowOf(zone, zoneIndex, bestFirst, k, bestSum);
}

/**
 * The `k` intervals of lowest value within `[first, end)`, equal values earliest first, listed
 * in time order. The k-th lowest value is found by selection (expected O(n)) in `scratch`, then
 * one pass in time order takes every lower value and the earliest of the equal ones.
 */
function lowestIntervals(search: ZoneSearch, scratch: Float64Array): ScheduledWindow | undefined {
  const { zone, zoneIndex, first, end, k } = search;
  const values = zone.values;
  let n = 0;
  for (let i = first; i < end; i++) {
    const value = values[i]!;
    if (!Number.isNaN(value)) scratch[n++] = value;
  }
  if (n < k) return undefined;
  const threshold = selectKth(scratch, n, k - 1);
  let below = 0;
  for (let i = 0; i < n; i++) if (scratch[i]! < threshold) below++;
  let equalsLeft = k - below;
  const slots: ScheduledSlot[] = [];
  let sum = 0;
  for (let i = first; i < end && slots.length < k; i++) {
    const value = values[i]!;
    if (Number.isNaN(value) || value > threshold) continue;
    if (value === threshold) {
      if (equalsLeft === 0) continue;
      equalsLeft--;
    }
    slots.push({ ts: zone.startTs + i * zone.stepSeconds, value });
    sum += value;
  }
  const start = slots[0]!.ts;
  return {
    zone: zone.zone,
    zoneIndex,
    start,
    end: slots[k - 1]!.ts + zone.stepSeconds,
    sum,
    intervals: k,
    mean: sum / k,
    slots,
  };
}

/**
 * The value of rank `rank` (0: the lowest) among `values[0..n)`, reordering them in place:
 * Hoare's selection with a middle pivot, expected O(n).
 */
function selectKth(values: Float64Array, n: number, rank: number): number {
  let low = 0;
  let high = n - 1;
  while (low < high) {
    const pivot = values[(low + high) >>> 1]!;
    let i = low;
    let j = high;
    while (i <= j) {
      while (values[i]! < pivot) i++;
      while (values[j]! > pivot) j--;
      if (i <= j) {
        const swap = values[i]!;
        values[i] = values[j]!;
        values[j] = swap;
        i++;
        j--;
      }
    }
    if (rank <= j) high = j;
    else if (rank >= i) low = i;
    else return values[rank]!;
  }
  return values[rank]!;
}
