/**
 * The hand-over between the parsers of the computed sources (ENTSO-E, EIA) and the method:
 * hourly generation of one area per upstream production code, values as reported.
 */
import { HOUR } from './time.js';

/**
 * Hour start (epoch seconds) → MWh in that hour (= mean MW). As reported: may be negative; an
 * hour without a value is absent, never 0 (docs/upstreams.md §1.3 point 5).
 */
export type HourlySeries = ReadonlyMap<number, number>;

/** Hourly generation of one area per production code (ENTSO-E psrType, EIA fueltype). */
export type GenerationByCode = ReadonlyMap<string, HourlySeries>;

/** One upstream value: mean power in MW over `[start, end)`, epoch seconds. */
export interface PowerInterval {
  readonly start: number;
  readonly end: number;
  readonly mw: number;
}

/**
 * Averages sub-hourly (or hourly) intervals into hours. An hour gets a value only when the
 * intervals cover it exactly once: a missing quarter leaves the hour without a value rather than
 * averaging three quarters (docs/method.md, upstream rules); intervals that overlap cover it more
 * than once, which leaves it without a value too.
 */
export function toHourlySeries(intervals: Iterable<PowerInterval>): HourlySeries {
  const energy = new Map<number, number>(); // MW·s per hour start
  const covered = new Map<number, number>(); // seconds per hour start
  for (const { start, end, mw } of intervals) {
    for (let hour = Math.floor(start / HOUR) * HOUR; hour < end; hour += HOUR) {
      const seconds = Math.min(end, hour + HOUR) - Math.max(start, hour);
      energy.set(hour, (energy.get(hour) ?? 0) + mw * seconds);
      covered.set(hour, (covered.get(hour) ?? 0) + seconds);
    }
  }
  const hourly = new Map<number, number>();
  for (const [hour, seconds] of [...covered].sort(([a], [b]) => a - b)) {
    if (seconds === HOUR) hourly.set(hour, (energy.get(hour) ?? 0) / HOUR);
  }
  return hourly;
}
