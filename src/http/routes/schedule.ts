import type { FastifyInstance } from 'fastify';
import { schedule, type ScheduledWindow, type ScheduleResult } from '../../core/schedule.js';
import { formatTs } from '../../core/time.js';
import type { ZonesMode } from '../../core/zone-registry.js';
import type { ForecastBook } from '../../forecast/book.js';
import { readScheduleSeries } from '../../queries/schedule-series.js';
import type { Reads } from '../../read/reads.js';
import { API_ERRORS } from '../contract/errors.js';
import { round1, UNIT } from '../../core/units.js';
import { CACHE_CONTROL } from '../contract/headers.js';
import {
  interpretSchedule,
  readParams,
  SCHEDULE_PARAMS,
  type ScheduleRequest,
} from '../contract/params.js';
import { ScheduleQuery, ScheduleQueryOfAll, type ScheduleResponse } from '../contract/schemas.js';
import { jsonRoute, type LimitHook } from './route-options.js';

/**
 * `GET /v1/schedule` (extensions §5): where and when a job of `duration_minutes` runs on the
 * lowest mean intensity inside `[earliest, deadline)`. Each zone's intervals in the window are
 * read as one regular series in tenths as served (queries/schedule-series.ts) and handed to the
 * pure scheduler (core/schedule.ts), which documents the alignment and tie rules.
 */

export interface ScheduleDeps {
  readonly reads: Reads;
  readonly clock: () => number;
  readonly forecasts: () => ForecastBook;
  readonly limit: LimitHook;
  /** `ZONES` (extensions §16): with `all`, a list names more than the 45. */
  readonly zonesMode: ZonesMode;
}

export function registerSchedule(app: FastifyInstance, deps: ScheduleDeps): void {
  const { reads, clock, limit } = deps;
  app.get(
    '/v1/schedule',
    jsonRoute({
      summary: 'When and where a job runs on the lowest forecast intensity',
      description:
        'The start time and zone that minimise the mean intensity of a job of duration_minutes ' +
        'running entirely inside [earliest, deadline), in whole intervals of each zone (the ' +
        'interval earliest falls in is not used). Past intervals use published values, later ' +
        'ones the forecast. A zone without values for the job is left out of options (the ' +
        'note names it); when no zone has any, 404.',
      operationId: 'getSchedule',
      querystring: deps.zonesMode === 'all' ? ScheduleQueryOfAll : ScheduleQuery,
      ok: [
        'ScheduleResponse',
        'The best window, the job started at earliest in the first zone, the saving, and ' +
          'the best window of each zone.',
      ],
      errors: [400, 404, 503],
      wording: {
        404:
          'Unknown zone; or no zone asked has values (a forecast, or published values for ' +
          'past intervals) for the whole job between earliest and deadline.',
      },
      cacheControl: CACHE_CONTROL.schedule,
      limit,
    }),
    // JSON.stringify, not the route's schema serializer: `now` and `savings` may be null, and
    // fast-json-stringify picks such a member's branch with an Ajv validator it compiles on the
    // first response (over 100 ms holding the event loop, issue 21). The body is built in the
    // schema's member order, so the bytes are the same.
    async (request): Promise<string> => {
      const asked = interpretSchedule(readParams(request.url, SCHEDULE_PARAMS), clock(), reads);
      const series = await readScheduleSeries(asked, reads.current(), deps.forecasts());
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
