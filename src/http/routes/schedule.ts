import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Basis } from '../../core/factors.js';
import {
  schedule,
  type ScheduledWindow,
  type ScheduleResult,
  type ScheduleSeries,
} from '../../core/schedule.js';
import { formatTs } from '../../core/time.js';
import type { Zone } from '../../core/zones.js';
import type { ForecastBook, ZoneForecast } from '../../forecast/book.js';
import type { ReadModel } from '../../read/read-model.js';
import type { Reads } from '../../read/reads.js';
import { API_ERRORS } from '../contract/errors.js';
import { PROVISIONAL_METHOD, round1, toTenths, UNIT } from '../../core/units.js';
import { CACHE_CONTROL } from '../contract/headers.js';
import {
  interpretSchedule,
  readParams,
  SCHEDULE_PARAMS,
  type ScheduleRequest,
} from '../contract/params.js';
import {
  errorResponses,
  okResponses,
  ScheduleQuery,
  type ScheduleResponse,
} from '../contract/schemas.js';

/**
 * `GET /v1/schedule` (extensions §5): where and when a job of `duration_minutes` runs on the
 * lowest mean intensity inside `[earliest, deadline)`. Each zone's intervals in the window are
 * gathered into one regular series (published values before the zone's forecast starts, the
 * forecast or its p90 from there on), in tenths of gCO2eq/kWh as served, and handed to the pure
 * scheduler (core/schedule.ts), which documents the alignment and tie rules.
 *
 * Work per request is O(zones x intervals): at most 45 zones x 144 half hours, one array for
 * all of them, no sort of the intervals. Forecast arrays are converted to tenths once per forecast
 * (kept by identity), not per request.
 */

export interface ScheduleDeps {
  readonly reads: Reads;
  readonly clock: () => number;
  readonly forecasts: () => ForecastBook;
  readonly limit: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
}

export function registerSchedule(app: FastifyInstance, deps: ScheduleDeps): void {
  const { reads, clock, limit } = deps;
  app.get(
    '/v1/schedule',
    {
      schema: {
        summary: 'When and where a job runs on the lowest forecast intensity',
        description:
          'The start time and zone that minimise the mean intensity of a job of duration_minutes ' +
          'running entirely inside [earliest, deadline), in whole intervals of each zone (the ' +
          'interval earliest falls in is not used). Past intervals use published values, later ' +
          'ones the forecast. A zone without values for the job is left out of options (the ' +
          'note names it); when no zone has any, 404.',
        operationId: 'getSchedule',
        querystring: ScheduleQuery,
        response: {
          ...okResponses(
            'ScheduleResponse',
            'The best window, the job started at earliest in the first zone, the saving, and ' +
              'the best window of each zone.',
            { limited: true },
          ),
          ...errorResponses(400, 404, 429, 503),
          404: {
            ...errorResponses(404)[404],
            description:
              'Unknown zone; or no zone asked has values (a forecast, or published values for ' +
              'past intervals) for the whole job between earliest and deadline.',
          },
        },
      },
      config: { cacheControl: CACHE_CONTROL.schedule },
      onRequest: limit,
    },
    // JSON.stringify, not the route's schema serializer: `now` and `savings` may be null, and
    // fast-json-stringify picks such a member's branch with an Ajv validator it compiles on the
    // first response (over 100 ms holding the event loop, issue 21). The body is built in the
    // schema's member order, so the bytes are the same.
    async (request): Promise<string> => {
      const asked = interpretSchedule(readParams(request.url, SCHEDULE_PARAMS), clock());
      const model = reads.current();
      const book = deps.forecasts();
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
      const result = schedule({
        series,
        durationSeconds: asked.durationMinutes * 60,
        earliest: asked.earliest,
        deadline: asked.deadline,
        interruptible: asked.interruptible,
      });
      return JSON.stringify(responseBody(asked, result));
    },
  );
}

/**
 * One zone's intervals of `[earliest, deadline)` on its grid (UTC hours, or half hours for GB),
 * starting at the first boundary at or after earliest: values in tenths, NaN where none.
 * Published values are set by a read pushed onto `filling`.
 */
function zoneSeries(
  zone: Zone,
  asked: ScheduleRequest,
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
function gridOf(asked: ScheduleRequest, step: number): { first: number; count: number } {
  const first = Math.ceil(asked.earliest / step) * step;
  return { first, count: Math.max(0, Math.floor(asked.deadline / step) - first / step) };
}

function intervalsInAll(asked: ScheduleRequest): number {
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
  asked: ScheduleRequest,
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
    if (series.method(i) === PROVISIONAL_METHOD) continue;
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

const grams = (tenthsValue: number): number => round1(tenthsValue / 10);

/**
 * formatTs of interval boundaries, kept: a response names up to a hundred of them, and they are
 * the same hours from one request to the next. Bounded; emptied when full.
 */
const FORMATTED = new Map<number, string>();
function formatBoundary(ts: number): string {
  let text = FORMATTED.get(ts);
  if (text === undefined) {
    if (FORMATTED.size >= 4096) FORMATTED.clear();
    text = formatTs(ts);
    FORMATTED.set(ts, text);
  }
  return text;
}

function windowBody(window: ScheduledWindow) {
  return {
    zone: window.zone,
    start: formatBoundary(window.start),
    end: formatBoundary(window.end),
    gco2eq_kwh: grams(window.mean),
  };
}

function responseBody(asked: ScheduleRequest, result: ScheduleResult): ScheduleResponse {
  const { best, now } = result;
  if (!best) {
    // Every zone without room for the job in whole intervals: the window is too short.
    if (result.unscheduled.every((entry) => entry.reason === 'no-room')) {
      throw API_ERRORS.jobDoesNotFit();
    }
    throw API_ERRORS.noSchedule();
  }
  const bestBody = {
    ...windowBody(best),
    ...(best.slots && {
      slots: best.slots.map((slot) => ({
        ts: formatBoundary(slot.ts),
        gco2eq_kwh: grams(slot.value),
      })),
    }),
  };
  let savings: ScheduleResponse['savings'] = null;
  const nowBody = now ? windowBody(now) : null;
  if (nowBody) {
    // From the rounded figures shown, so that now - best = saving as the client reads them.
    const saving = round1(nowBody.gco2eq_kwh - bestBody.gco2eq_kwh);
    savings = {
      gco2eq_kwh: saving,
      pct: nowBody.gco2eq_kwh > 0 ? round1((saving / nowBody.gco2eq_kwh) * 100) : 0,
      ...(asked.energyKwh !== undefined && { grams: round1(saving * asked.energyKwh) }),
    };
  }
  const note = noteOf(asked, result);
  return {
    unit: UNIT,
    basis: asked.basis ?? 'default',
    estimator: asked.estimator,
    duration_minutes: asked.durationMinutes,
    earliest: formatTs(asked.earliest),
    deadline: formatTs(asked.deadline),
    best: bestBody,
    now: nowBody,
    savings,
    options: result.options.map(windowBody),
    ...(note && { note }),
  };
}

/** Why zones are left out of options, and why `now` is null, for people. */
function noteOf(asked: ScheduleRequest, result: ScheduleResult): string | undefined {
  const parts: string[] = [];
  const codes = (reason: string) =>
    result.unscheduled.filter((entry) => entry.reason === reason).map((entry) => entry.zone);
  const noValues = codes('no-values');
  const noRoom = codes('no-room');
  if (noValues.length > 0) {
    parts.push(
      `no forecast or published values for the whole job between earliest and deadline: ${noValues.join(', ')}`,
    );
  }
  if (noRoom.length > 0) {
    parts.push(`the window holds too few whole intervals for the job: ${noRoom.join(', ')}`);
  }
  if (!result.now) {
    parts.push(`now is null: the job cannot start at earliest in ${asked.zones[0]!.code}`);
  }
  return parts.length > 0 ? `${parts.join('; ')}.` : undefined;
}
