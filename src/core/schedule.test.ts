import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  schedule,
  type ScheduledWindow,
  type ScheduleProblem,
  type ScheduleResult,
  type ScheduleSeries,
} from './schedule.js';

/**
 * The scheduler against a brute-force oracle written independently: every candidate start is
 * tried by its timestamp, every interval looked up by its own ts, and the lowest intervals of an
 * interruptible job found by a full sort. Plus small cases worked out by hand.
 */

const H = 3600;
const HALF = 1800;
/** A UTC midnight: every hourly and half-hourly grid has a boundary here. */
const T0 = Date.UTC(2026, 10, 21) / 1000;

interface Plain {
  zone: string;
  start: number;
  end: number;
  sum: number;
  intervals: number;
  slots?: { ts: number; value: number }[];
}

const plain = (window: ScheduledWindow | undefined): Plain | undefined =>
  window && {
    zone: window.zone,
    start: window.start,
    end: window.end,
    sum: window.sum,
    intervals: window.intervals,
    ...(window.slots && { slots: window.slots.map((slot) => ({ ...slot })) }),
  };

/** What the oracle computes, in the same shape. */
interface Expected {
  options: Plain[];
  now: Plain | undefined;
  unscheduled: { zone: string; reason: string }[];
}

const observed = (result: ScheduleResult): Expected => ({
  options: result.options.map((window) => plain(window)!),
  now: plain(result.now),
  unscheduled: result.unscheduled.map((entry) => ({ ...entry })),
});

function oracle(problem: ScheduleProblem): Expected {
  const { earliest, deadline, durationSeconds, interruptible } = problem;
  const candidates: (Plain & { zoneIndex: number })[] = [];
  const unscheduled: { zone: string; reason: string }[] = [];
  const valueAt = (series: ScheduleSeries, ts: number): number | undefined => {
    const index = (ts - series.startTs) / series.stepSeconds;
    if (!Number.isInteger(index) || index < 0 || index >= series.values.length) return undefined;
    const value = series.values[index]!;
    return Number.isNaN(value) ? undefined : value;
  };
  // Every interval of the grid lying entirely inside [earliest, deadline), by its ts.
  const gridInside = (series: ScheduleSeries): number[] => {
    const step = series.stepSeconds;
    const starts: number[] = [];
    // Walk the grid from far before the window: no arithmetic shortcut shared with the code.
    let ts = series.startTs - Math.ceil((series.startTs - earliest) / step + 2) * step;
    while (ts < earliest) ts += step;
    for (; ts + step <= deadline; ts += step) starts.push(ts);
    return starts;
  };
  problem.series.forEach((series, zoneIndex) => {
    const step = series.stepSeconds;
    let k = 0;
    while (k * step < durationSeconds) k++;
    const grid = gridInside(series);
    if (grid.length < k) {
      unscheduled.push({ zone: series.zone, reason: 'no-room' });
      return;
    }
    let best: Plain | undefined;
    if (interruptible) {
      const known = grid
        .map((ts) => ({ ts, value: valueAt(series, ts) }))
        .filter((slot): slot is { ts: number; value: number } => slot.value !== undefined);
      if (known.length >= k) {
        const chosen = [...known]
          .sort((a, b) => a.value - b.value || a.ts - b.ts)
          .slice(0, k)
          .sort((a, b) => a.ts - b.ts);
        best = {
          zone: series.zone,
          start: chosen[0]!.ts,
          end: chosen.at(-1)!.ts + step,
          sum: chosen.reduce((total, slot) => total + slot.value, 0),
          intervals: k,
          slots: chosen,
        };
      }
    } else {
      for (let i = 0; i + k <= grid.length; i++) {
        const values = grid.slice(i, i + k).map((ts) => valueAt(series, ts));
        if (values.some((value) => value === undefined)) continue;
        const sum = values.reduce((total: number, value) => total + value!, 0);
        if (!best || sum < best.sum) {
          best = {
            zone: series.zone,
            start: grid[i]!,
            end: grid[i]! + k * step,
            sum,
            intervals: k,
          };
        }
      }
    }
    if (best) candidates.push({ ...best, zoneIndex });
    else unscheduled.push({ zone: series.zone, reason: 'no-values' });
  });
  candidates.sort(
    (a, b) =>
      a.sum * b.intervals - b.sum * a.intervals || a.start - b.start || a.zoneIndex - b.zoneIndex,
  );
  // Now: one stretch from the first grid boundary at or after earliest, in the first zone.
  let now: Plain | undefined;
  const home = problem.series[0];
  if (home) {
    let k = 0;
    while (k * home.stepSeconds < durationSeconds) k++;
    const grid = gridInside(home);
    if (grid.length >= k) {
      const values = grid.slice(0, k).map((ts) => valueAt(home, ts));
      if (values.every((value) => value !== undefined)) {
        now = {
          zone: home.zone,
          start: grid[0]!,
          end: grid[0]! + k * home.stepSeconds,
          sum: values.reduce((total: number, value) => total + value!, 0),
          intervals: k,
        };
      }
    }
  }
  return {
    options: candidates.map(({ zoneIndex: _, ...window }) => window),
    now,
    unscheduled,
  };
}

/** Random problems: 1-4 zones on 30- or 60-minute grids, small integer values (many ties). */
const problems = (withGaps: boolean) =>
  fc
    .record({
      zones: fc.array(
        fc.record({
          step: fc.constantFrom(HALF, H),
          offsetSteps: fc.integer({ min: -10, max: 10 }),
          values: fc.array(
            withGaps
              ? fc.oneof(
                  { weight: 6, arbitrary: fc.integer({ min: 0, max: 12 }) },
                  { weight: 1, arbitrary: fc.constant(Number.NaN) },
                )
              : fc.integer({ min: 0, max: 12 }),
            { maxLength: 60 },
          ),
        }),
        { minLength: 1, maxLength: 4 },
      ),
      // Minutes, so that earliest and deadline fall on and between boundaries.
      earliestMinutes: fc.integer({ min: -600, max: 1200 }),
      spanMinutes: fc.integer({ min: 1, max: 2400 }),
      durationMinutes: fc.integer({ min: 1, max: 600 }),
      interruptible: fc.boolean(),
    })
    .map(
      ({
        zones,
        earliestMinutes,
        spanMinutes,
        durationMinutes,
        interruptible,
      }): ScheduleProblem => {
        const earliest = T0 + earliestMinutes * 60;
        return {
          series: zones.map((zone, index) => ({
            zone: `Z${index}`,
            startTs: T0 + zone.offsetSteps * zone.step,
            stepSeconds: zone.step,
            values: Float64Array.from(zone.values),
          })),
          durationSeconds: durationMinutes * 60,
          earliest,
          deadline: earliest + spanMinutes * 60,
          interruptible,
        };
      },
    );

describe('schedule against a brute-force oracle', () => {
  it('gives the oracle’s options, best, now and unscheduled zones on random problems', () => {
    fc.assert(
      fc.property(problems(false), (problem) => {
        const result = schedule(problem);
        const expected = oracle(problem);
        expect(observed(result)).toEqual(expected);
        expect(plain(result.best)).toEqual(expected.options[0]);
      }),
      { numRuns: 3000 },
    );
  });

  it('skips intervals without a value exactly as the oracle does', () => {
    fc.assert(
      fc.property(problems(true), (problem) => {
        expect(observed(schedule(problem))).toEqual(oracle(problem));
      }),
      { numRuns: 2000 },
    );
  });

  it('never saves less than nothing: best is never above now', () => {
    fc.assert(
      fc.property(problems(false), (problem) => {
        const { best, now } = schedule(problem);
        if (best && now) expect(best.mean).toBeLessThanOrEqual(now.mean);
      }),
      { numRuns: 1000 },
    );
  });
});

const series = (zone: string, values: number[], step = H, startTs = T0): ScheduleSeries => ({
  zone,
  startTs,
  stepSeconds: step,
  values: Float64Array.from(values),
});

const problem = (
  zones: ScheduleSeries[],
  durationMinutes: number,
  earliest: number,
  deadline: number,
  interruptible = false,
): ScheduleProblem => ({
  series: zones,
  durationSeconds: durationMinutes * 60,
  earliest,
  deadline,
  interruptible,
});

describe('schedule, small cases', () => {
  it('picks the lowest 2-hour stretch, and the job started at earliest as now', () => {
    const result = schedule(problem([series('DE', [50, 40, 10, 20, 30])], 120, T0, T0 + 5 * H));
    expect(plain(result.best)).toEqual({
      zone: 'DE',
      start: T0 + 2 * H,
      end: T0 + 4 * H,
      sum: 30,
      intervals: 2,
    });
    expect(result.best!.mean).toBe(15);
    expect(plain(result.now)).toEqual({
      zone: 'DE',
      start: T0,
      end: T0 + 2 * H,
      sum: 90,
      intervals: 2,
    });
  });

  it('breaks a tie by the earliest start, then by the zone listed first', () => {
    // Within a zone: two equal stretches, the earlier wins.
    const within = schedule(problem([series('FR', [5, 1, 9, 1, 5])], 60, T0, T0 + 5 * H));
    expect(within.best!.start).toBe(T0 + H);
    // Across zones: equal means at the same start, the zone listed first wins.
    const across = schedule(
      problem([series('FR', [9, 3, 9]), series('DE', [9, 3, 9])], 60, T0, T0 + 3 * H),
    );
    expect(across.options.map((window) => window.zone)).toEqual(['FR', 'DE']);
    const swapped = schedule(
      problem([series('DE', [9, 3, 9]), series('FR', [9, 3, 9])], 60, T0, T0 + 3 * H),
    );
    expect(swapped.options.map((window) => window.zone)).toEqual(['DE', 'FR']);
    // Equal means at different starts: the earlier start wins over the order listed.
    const earlier = schedule(
      problem([series('FR', [9, 9, 3]), series('DE', [9, 3, 9])], 60, T0, T0 + 3 * H),
    );
    expect(earlier.best!.zone).toBe('DE');
    // A half-hourly zone with the same mean over its two half hours ties with an hourly one.
    const mixed = schedule(
      problem([series('DE', [8, 4]), series('GB', [8, 8, 2, 6], HALF)], 60, T0, T0 + 2 * H),
    );
    expect(mixed.options.map((window) => [window.zone, window.start, window.mean])).toEqual([
      ['DE', T0 + H, 4],
      ['GB', T0 + H, 4],
    ]);
  });

  it('fits a job into a window exactly its length, and nowhere else', () => {
    const result = schedule(problem([series('DE', [7, 3, 5, 1])], 120, T0 + H, T0 + 3 * H));
    expect(plain(result.best)).toEqual({
      zone: 'DE',
      start: T0 + H,
      end: T0 + 3 * H,
      sum: 8,
      intervals: 2,
    });
    expect(plain(result.now)).toEqual(plain(result.best));
  });

  it('reports a job that does not fit, and one without values, per zone', () => {
    // 61 minutes take two hours but one half hour more in GB: a 90-minute window holds 3 half
    // hours of GB (enough for 61 minutes) but only one whole hour of DE.
    const result = schedule(
      problem(
        [series('DE', [1, 1, 1]), series('GB', [4, 4, 4, 4, 4], HALF), series('FR', [], HALF)],
        61,
        T0,
        T0 + 1.5 * H,
      ),
    );
    expect(result.unscheduled).toEqual([
      { zone: 'DE', reason: 'no-room' },
      { zone: 'FR', reason: 'no-values' },
    ]);
    expect(plain(result.best)).toEqual({
      zone: 'GB',
      start: T0,
      end: T0 + 1.5 * H,
      sum: 12,
      intervals: 3,
    });
    expect(result.now).toBeUndefined();
  });

  it('does not use the interval earliest falls in, nor one ending after deadline', () => {
    // earliest 00:20, deadline 03:40: hours 01:00, 02:00 usable; 00:00 (lowest) and 03:00 not.
    const result = schedule(
      problem([series('DE', [0, 9, 8, 0])], 60, T0 + 20 * 60, T0 + 3 * H + 40 * 60),
    );
    expect(result.best!.start).toBe(T0 + 2 * H);
    expect(result.now!.start).toBe(T0 + H);
    // A half-hourly zone starts at the next half hour: 00:30.
    const gb = schedule(problem([series('GB', [0, 5, 6], HALF)], 30, T0 + 20 * 60, T0 + 2 * H));
    expect(gb.now!.start).toBe(T0 + HALF);
  });

  it('has no window where a stretch holds an interval without a value', () => {
    const result = schedule(problem([series('DE', [1, Number.NaN, 1, 9, 9])], 120, T0, T0 + 5 * H));
    expect(plain(result.best)).toMatchObject({ start: T0 + 2 * H, sum: 10 });
    expect(result.now).toBeUndefined();
  });

  it('runs an interruptible job in the lowest intervals, listed in time order', () => {
    const result = schedule(problem([series('DE', [6, 2, 9, 1, 2, 7])], 180, T0, T0 + 6 * H, true));
    // Values 1, 2, 2: the two 2s are both taken; slots in time order.
    expect(result.best!.slots).toEqual([
      { ts: T0 + H, value: 2 },
      { ts: T0 + 3 * H, value: 1 },
      { ts: T0 + 4 * H, value: 2 },
    ]);
    expect([result.best!.start, result.best!.end, result.best!.mean]).toEqual([
      T0 + H,
      T0 + 5 * H,
      5 / 3,
    ]);
    // Equal values: the earliest are taken.
    const ties = schedule(problem([series('DE', [3, 1, 3, 1, 3])], 180, T0, T0 + 5 * H, true));
    expect(ties.best!.slots!.map((slot) => slot.ts)).toEqual([T0, T0 + H, T0 + 3 * H]);
    // Now stays one stretch from earliest.
    expect(plain(ties.now)).toEqual({
      zone: 'DE',
      start: T0,
      end: T0 + 3 * H,
      sum: 7,
      intervals: 3,
    });
  });

  it('has no best and no now without zones', () => {
    const result = schedule(problem([], 60, T0, T0 + H));
    expect(result).toEqual({ options: [], best: undefined, now: undefined, unscheduled: [] });
  });
});
