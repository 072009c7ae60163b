/**
 * The GB rule of docs/method.md ("`upstream:uk-operator:actual` and `:forecast`"): the
 * operator's figures are republished unchanged at 30-minute resolution, never recomputed.
 */
import type { ZoneReadings } from './method.js';
import type { StoredReading } from './reading.js';

export const HALF_HOUR = 1800;

/** One operator half-hour `[start, start + 30 min)`, epoch seconds; figures in gCO2/kWh. */
export interface OperatorHalfHour {
  readonly start: number;
  readonly forecast: number | null;
  /** The settled figure; null until it is published. */
  readonly actual: number | null;
}

/**
 * Turns operator half-hours into GB readings as of `now` (epoch seconds):
 * - a half-hour with `actual` → `upstream:uk-operator:actual`;
 * - the half-hour in progress at `now`, if it has no `actual` → `upstream:uk-operator:forecast`
 *   with the forecast figure (docs/api.md, "Data rules": at most one forecast reading at a time);
 * - every other half-hour without `actual` (future ones, older unsettled ones) is not a reading.
 * When `halfHours` repeats a start (overlapping fetches), the later entry wins unless it would
 * replace a settled figure with an unsettled one.
 */
export function operatorReadings(
  zone: string,
  halfHours: readonly OperatorHalfHour[],
  now: number,
): ZoneReadings {
  const byStart = new Map<number, OperatorHalfHour>();
  for (const halfHour of halfHours) {
    const earlier = byStart.get(halfHour.start);
    if (earlier?.actual != null && halfHour.actual === null) continue;
    byStart.set(halfHour.start, halfHour);
  }
  const started = [...byStart.values()]
    .filter(({ start }) => start <= now)
    .sort((a, b) => a.start - b.start);
  // Only the half-hour in progress may be a forecast: an unsettled entry in an older answer
  // (a backfill, a lagging reply) is not the newest half-hour that has started.
  const inProgress = Math.floor(now / HALF_HOUR) * HALF_HOUR;

  const readings: StoredReading[] = [];
  for (const halfHour of started) {
    const base = { zone, ts: halfHour.start, complete: true, mix: null };
    if (halfHour.actual !== null) {
      readings.push({ ...base, value: halfHour.actual, method: 'upstream:uk-operator:actual' });
    } else if (halfHour.start === inProgress && halfHour.forecast !== null) {
      readings.push({ ...base, value: halfHour.forecast, method: 'upstream:uk-operator:forecast' });
    }
  }
  return {
    readings,
    quality: {
      zone,
      pointsStored: readings.length,
      incompleteHours: 0,
      clampedNegatives: 0,
      unknownCodes: [],
    },
  };
}
