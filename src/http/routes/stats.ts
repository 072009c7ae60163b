import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Basis } from '../../core/factors.js';
import { formatTs, HOUR } from '../../core/time.js';
import { UNIT } from '../../core/units.js';
import { windowStats } from '../../core/window-stats.js';
import type { Zone } from '../../core/zones.js';
import { API_ERRORS } from '../contract/errors.js';
import { CACHE_CONTROL } from '../contract/headers.js';
import { SCHEDULE_LIMITS } from '../contract/limits.js';
import { interpretWindow, readParams } from '../contract/params.js';
import {
  errorResponses,
  okResponses,
  StatsQuery,
  type StatsResponse,
} from '../contract/schemas.js';
import type { ReadPoints } from '../../queries/signal-reads.js';

/**
 * `GET /v1/intensity/stats` (extensions §12): the statistics of one zone's published values in a
 * window of up to 400 days, computed by core/window-stats.ts from the values as served. No point
 * cap: 400 days are at most 19,200 half hours, read from memory without a copy and counted, not
 * sorted (about a millisecond for 9,600 hours).
 */

export interface StatsDeps {
  readonly limit: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  readonly points: ReadPoints;
  readonly clock: () => number;
}

const STATS_PARAMS = Object.keys(StatsQuery.properties);
const MAX_STATS_DAYS = 400;

interface StatsRequest {
  readonly zone: Zone;
  readonly from: number;
  readonly to: number;
  readonly basis: Basis | undefined;
  readonly energyKwh: number | undefined;
}

function interpretStats(params: ReadonlyMap<string, string>, nowMs: number): StatsRequest {
  const window = interpretWindow(params, nowMs);
  if (window.to - window.from > MAX_STATS_DAYS * 24 * HOUR) {
    throw API_ERRORS.statsWindowTooLong(MAX_STATS_DAYS);
  }
  const text = params.get('energy_kwh')?.trim();
  let energyKwh: number | undefined;
  if (text !== undefined) {
    // The same rule as /v1/schedule's energy_kwh.
    energyKwh = /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(text) ? Number(text) : Number.NaN;
    if (!(energyKwh > 0 && energyKwh <= SCHEDULE_LIMITS.maxEnergyKwh)) {
      throw API_ERRORS.invalidEnergy();
    }
  }
  return { ...window, energyKwh };
}

export function registerStats(app: FastifyInstance, deps: StatsDeps): void {
  app.get(
    '/v1/intensity/stats',
    {
      schema: {
        summary: 'Statistics of one zone over a window of up to 400 days',
        description:
          'Count, coverage, time-weighted mean, min, max, P10/P50/P90 and the mean by UTC hour ' +
          'of the published values with from <= ts < to, from the values as served (1 decimal); ' +
          'with energy_kwh, the emissions of that energy spread evenly over the window.',
        operationId: 'getIntensityStats',
        querystring: StatsQuery,
        response: {
          ...okResponses('StatsResponse', 'The statistics; every one null when count is 0.', {
            etag: true,
            limited: true,
          }),
          ...errorResponses(400, 404, 429, 503),
        },
      },
      config: { cacheControl: CACHE_CONTROL.stats, etag: true },
      onRequest: deps.limit,
    },
    async (request): Promise<string> => {
      const asked = interpretStats(readParams(request.url, STATS_PARAMS), deps.clock());
      const points = await deps.points(asked.zone.code, asked.basis, asked.from, asked.to);
      const stats = windowStats(
        points,
        { from: asked.from, to: asked.to, stepSeconds: asked.zone.resolutionMin * 60 },
        asked.energyKwh,
      );
      const body: StatsResponse = {
        zone: asked.zone.code,
        basis: asked.basis ?? 'default',
        unit: UNIT,
        from: formatTs(asked.from),
        to: formatTs(asked.to),
        count: stats.count,
        coverage: stats.coverage,
        mean: stats.mean,
        min: stats.min,
        max: stats.max,
        p10: stats.p10,
        p50: stats.p50,
        p90: stats.p90,
        by_hour_utc: stats.byHourUtc,
        ...(asked.energyKwh !== undefined && {
          energy_kwh: asked.energyKwh,
          emissions_g: stats.emissionsG ?? null,
        }),
      };
      return JSON.stringify(body);
    },
  );
}
