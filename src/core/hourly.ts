import type { Mix, Reading } from './reading.js';
import { isProvisional } from './served-forecast.js';

/**
 * Hourly views of finer series, as Electricity Maps and its clients read every zone: a
 * half-hourly zone (GB) as the means (or, for energies, the sums) of its whole hours.
 */

/** Electricity Maps serves 1-hour data ("All endpoints return data with a resolution of 1 hour"). */
export const EM_STEP_SECONDS = 3600;

/** The hour that holds `ts`. */
const hourOf = (ts: number) => ts - (((ts % EM_STEP_SECONDS) + EM_STEP_SECONDS) % EM_STEP_SECONDS);

/**
 * A series at a finer step (GB's half hours) as hourly points, each the merge of an hour's parts
 * stamped at the top of the hour, for the hours whose every part is present; an hourly series
 * unchanged. `points` ascend.
 */
function hourly<T extends { ts: number }>(
  points: readonly T[],
  stepSeconds: number,
  merge: (hour: number, parts: readonly T[]) => T,
): T[] {
  if (stepSeconds >= EM_STEP_SECONDS) return [...points];
  const parts = EM_STEP_SECONDS / stepSeconds;
  const hours = new Map<number, T[]>();
  for (const point of points) {
    const hour = hourOf(point.ts);
    const list = hours.get(hour);
    if (list) list.push(point);
    else hours.set(hour, [point]);
  }
  const merged: T[] = [];
  for (const [hour, list] of hours) if (list.length === parts) merged.push(merge(hour, list));
  return merged;
}

const mean = (values: readonly number[]) =>
  values.reduce((sum, value) => sum + value, 0) / values.length;

/** Hourly means of readings; an hour with an estimated part is estimated. */
export const hourlyReadings = (readings: readonly Reading[], stepSeconds: number): Reading[] =>
  hourly(readings, stepSeconds, (ts, parts) => ({
    ts,
    value: mean(parts.map((part) => part.value)),
    method: parts.find(isProvisional)?.method ?? parts[0]!.method,
  }));

/** Hourly means of forecast points. */
export const hourlyPoints = (
  points: readonly { ts: number; value: number }[],
  stepSeconds: number,
): { ts: number; value: number }[] =>
  hourly(points, stepSeconds, (ts, parts) => ({
    ts,
    value: mean(parts.map((part) => part.value)),
  }));

/**
 * Hourly mixes: energies (MWh) add up over the hour, shares (`%`) are averaged; a category missing
 * from a part counts as 0 there.
 */
export function hourlyMixes<T extends { ts: number; mix: Mix }>(
  points: readonly T[],
  stepSeconds: number,
  unit: 'MWh' | '%',
): { ts: number; mix: Mix }[] {
  return hourly<{ ts: number; mix: Mix }>(points, stepSeconds, (ts, parts) => {
    const mix: Record<string, number> = {};
    for (const part of parts) {
      for (const [category, amount] of Object.entries(part.mix)) {
        mix[category] = (mix[category] ?? 0) + amount;
      }
    }
    if (unit === '%') for (const category of Object.keys(mix)) mix[category]! /= parts.length;
    return { ts, mix };
  });
}
