import type { Basis } from '../core/factors.js';
import type { ScheduleSeries } from '../core/schedule.js';
import type { Zone } from '../core/zones.js';
import type { ForecastBook, ZoneForecast } from '../forecast/book.js';
import type { ReadModel } from '../read/read-model.js';
import { toTenths } from '../core/units.js';

/**
 * The schedule's use case (extensions §5): each zone's intervals of a job's window gathered into
 * one regular series, published values before the zone's forecast starts and the forecast (or its
 * p90) from there on, in tenths as served, for the pure scheduler (core/schedule.ts).
 *
 * Work per request is O(zones x intervals): one per zone served (45 by default; ZONES=all adds
 * the hourly served nodes) x 144 half hours, one array for all of them, no sort of the intervals.
 * Forecast arrays are converted to tenths once per forecast (kept by identity), not per request.
 */

/** What the schedule asks of the data: its zones, window, basis and estimator. */
export interface ScheduleWindow {
  /** In the order given. */
  readonly zones: readonly Zone[];
  /** The window the job runs inside, `[earliest, deadline)`, epoch seconds. */
  readonly earliest: number;
  readonly deadline: number;
  readonly estimator: 'expected' | 'p90';
  /** Undefined: each zone's own value. */
  readonly basis: Basis | undefined;
}

/** Every zone's series for `asked`, in the order of its zones. */
export async function readScheduleSeries(
  asked: ScheduleWindow,
  model: ReadModel,
  book: ForecastBook,
): Promise<ScheduleSeries[]> {
  const series: ScheduleSeries[] = [];
  // The zones' reads run together (from memory, each answers at once).
  const filling: Promise<void>[] = [];
  // One array for every zone's intervals: one allocation per request, a view per zone.
  const all = new Float64Array(intervalsInAll(asked)).fill(Number.NaN);
  let used = 0;
  for (const zone of asked.zones) {
    const forecast = book.forecast(zone.code, asked.basis);
    const intervals = zoneSeries(zone, asked, forecast, model, filling, all, used);
    used += intervals.values.length;
    series.push(intervals);
  }
  if (filling.length > 0) await Promise.all(filling);
  return series;
}

/**
 * One zone's intervals of `[earliest, deadline)` on its grid (UTC hours, or half hours for GB),
 * starting at the first boundary at or after earliest: values in tenths, NaN where none.
 * Published values are set by a read pushed onto `filling`.
 */
function zoneSeries(
  zone: Zone,
  asked: ScheduleWindow,
  forecast: ZoneForecast | null,
  model: ReadModel,
  filling: Promise<void>[],
  all: Float64Array,
  at: number,
): ScheduleSeries {
  const step = zone.resolutionMin * 60;
  const { first, count } = gridOf(asked, step);
  const values = all.subarray(at, at + count);
  const end = first + count * step;
  // Published values up to where the forecast starts (all of them without a forecast).
  const historyEnd = forecast ? Math.min(end, forecast.startTs) : end;
  if (first < historyEnd) {
    filling.push(fillPublished(values, zone.code, first, historyEnd, step, asked.basis, model));
  }
  if (forecast && forecast.startTs < end) fillFromForecast(values, first, step, forecast, asked);
  return { zone: zone.code, startTs: first, stepSeconds: step, values };
}

/** The whole intervals of a grid of `step` seconds inside `[earliest, deadline)`. */
function gridOf(asked: ScheduleWindow, step: number): { first: number; count: number } {
  const first = Math.ceil(asked.earliest / step) * step;
  return { first, count: Math.max(0, Math.floor(asked.deadline / step) - first / step) };
}

function intervalsInAll(asked: ScheduleWindow): number {
  let total = 0;
  for (const zone of asked.zones) total += gridOf(asked, zone.resolutionMin * 60).count;
  return total;
}

/** The forecast's intervals (or their p90) from its start on, where they fall on the grid. */
function fillFromForecast(
  values: Float64Array,
  first: number,
  step: number,
  forecast: ZoneForecast,
  asked: ScheduleWindow,
): void {
  const planned = tenths(asked.estimator === 'p90' ? forecast.p90 : forecast.values);
  const fStep = forecast.stepSeconds;
  // The first interval of the window at or after the forecast's start.
  const from = Math.max(0, Math.ceil((forecast.startTs - first) / step));
  if (fStep === step && (first - forecast.startTs) % step === 0) {
    // The same grid, the usual case: one copy.
    const offset = (first - forecast.startTs) / step;
    const upTo = Math.min(values.length, planned.length - offset);
    if (upTo > from) values.set(planned.subarray(offset + from, offset + upTo), from);
    return;
  }
  for (let i = from; i < values.length; i++) {
    const gap = first + i * step - forecast.startTs;
    const index = gap / fStep;
    if (gap % fStep === 0 && index < planned.length) values[i] = planned[index]!;
  }
}

/**
 * Published readings of `[from, to)` in tenths as served; the GB provisional reading is a
 * forecast, not a value, and is left to the forecast.
 */
async function fillPublished(
  values: Float64Array,
  zone: string,
  from: number,
  to: number,
  step: number,
  basis: Basis | undefined,
  model: ReadModel,
): Promise<void> {
  const { series, start, end } = await model.window(zone, from, to, values.length + 1, basis);
  for (let i = start; i < end; i++) {
    if (series.provisional(i)) continue;
    const offset = series.ts(i) - from;
    if (offset % step === 0 && offset / step < values.length) {
      values[offset / step] = series.tenths(i);
    }
  }
}

const TENTHS = new WeakMap<Float64Array, Float64Array>();

/** A forecast array in tenths, converted once per array (a forecast is replaced, not changed). */
function tenths(array: Float64Array): Float64Array {
  let converted = TENTHS.get(array);
  if (!converted) {
    converted = array.map(toTenths);
    TENTHS.set(array, converted);
  }
  return converted;
}
