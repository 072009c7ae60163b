import { describe, expect, it } from 'vitest';
import { BAND_DAYS, ErrorPools } from './error-pools.js';
import { DAY_SECONDS, HORIZON_HOURS, HOUR_SECONDS } from './series.js';

describe("the band's error pools carried from refresh to refresh", () => {
  it('hold the same sorted errors as the pools sorted anew, as errors are published and age out, resumed from their data or not', () => {
    const issueTimes = Array.from({ length: 4 * (BAND_DAYS + 60) }, (_, k) => k * 6 * HOUR_SECONDS);
    const errors: { issue: number; end: number; error: number }[][] = Array.from(
      { length: HORIZON_HOURS },
      () => [],
    );
    let carried = new ErrorPools();
    // Errors that repeat (ties, -0 and 0 among them) and are published hours after their issue.
    const errorOf = (issue: number, hour: number) =>
      issue % 7 === 0 ? (hour % 2 ? 0 : -0) : ((issue * 31 + hour * 17) % 23) - 11;
    issueTimes.forEach((issueTs, index) => {
      if (index % 28 === 0) {
        const knownBy = issueTs - 3 * HOUR_SECONDS;
        const sinceTs = (issueTimes[index - 1] ?? -Infinity) - BAND_DAYS * DAY_SECONDS;
        // Every other refresh from its plain data, as a daily rerun resumes it.
        if (index % 56 === 0)
          carried = new ErrorPools({ data: structuredClone(carried.data(issueTimes)), issueTimes });
        const pools = carried.at(issueTimes, index, knownBy);
        for (let hour = 0; hour < HORIZON_HOURS; hour++) {
          const expected = errors
            .slice(Math.max(0, hour - 2), hour + 3)
            .flatMap((list) =>
              list.filter((entry) => issueTimes[entry.issue]! >= sinceTs && entry.end <= knownBy),
            )
            .map((entry) => entry.error);
          expect([...pools[hour]!]).toEqual([...Float64Array.from(expected).sort()]);
        }
      }
      for (let hour = 1; hour <= HORIZON_HOURS; hour++) {
        const scored = {
          issue: index,
          end: issueTs + hour * HOUR_SECONDS,
          error: errorOf(index, hour),
        };
        errors[hour - 1]!.push(scored);
        carried.add(hour, scored.issue, scored.end, scored.error);
      }
    });
    expect(carried.at(issueTimes, issueTimes.length, Infinity)[0]!.length).toBeGreaterThan(1000);
    // Only the band's days of errors are held (what a daily rerun stores).
    expect(carried.data(issueTimes).offsets[1]).toBeLessThan(4 * BAND_DAYS + 8);
  });

  it('store issues and ends as offsets: resumed anew far into a walk-forward, and refused off their range', () => {
    // Issue indices past 2^16 (the offsets are from the pools' first issue), one every 6 hours.
    const issueTimes = Array.from({ length: 70_100 }, (_, k) => k * 6 * HOUR_SECONDS);
    const pools = new ErrorPools();
    for (let index = 70_000; index < 70_100; index++) {
      for (let hour = 1; hour <= HORIZON_HOURS; hour++) {
        pools.add(hour, index, issueTimes[index]! + hour * HOUR_SECONDS, (index % 13) - hour / 7);
      }
    }
    const knownBy = issueTimes.at(-1)!;
    const resumed = new ErrorPools({ data: structuredClone(pools.data(issueTimes)), issueTimes });
    const expected = pools.at(issueTimes, issueTimes.length, knownBy).map((pool) => [...pool]);
    expect(resumed.at(issueTimes, issueTimes.length, knownBy).map((pool) => [...pool])).toEqual(
      expected,
    );
    expect(expected[0]!.length).toBeGreaterThan(100);
    const offMinute = new ErrorPools();
    offMinute.add(1, 70_000, issueTimes[70_000]! + 30, 1);
    expect(() => offMinute.data(issueTimes)).toThrow(/not a whole number of minutes/);
  });
});
