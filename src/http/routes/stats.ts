import type { FastifyInstance } from 'fastify';
import { formatTs } from '../../core/time.js';
import { UNIT } from '../../core/units.js';
import { windowStats } from '../../core/window-stats.js';
import { CACHE_CONTROL } from '../contract/headers.js';
import { MAX_STATS_DAYS } from '../contract/limits.js';
import {
  basisOfBody,
  interpretStats,
  type Offered,
  readParams,
  STATS_PARAMS,
} from '../contract/params.js';
import { StatsQuery, type StatsResponse } from '../contract/schemas.js';
import { jsonRoute, publishedValuesRead, type LimitHook } from './route-options.js';
import type { ReadPoints } from '../../queries/signal-reads.js';

/**
 * `GET /v1/intensity/stats` (extensions §12): the statistics of one zone's published values in a
 * window of up to 400 days, computed by core/window-stats.ts from the values as served. No point
 * cap: 400 days are at most 19,200 half hours, read from memory without a copy and counted, not
 * sorted (about a millisecond for 9,600 hours).
 */

export interface StatsDeps {
  readonly limit: LimitHook;
  readonly points: ReadPoints;
  readonly clock: () => number;
  readonly offered: Offered;
}

export function registerStats(app: FastifyInstance, deps: StatsDeps): void {
  app.get(
    '/v1/intensity/stats',
    jsonRoute({
      summary: `Statistics of one zone over a window of up to ${MAX_STATS_DAYS} days`,
      description:
        'Count, coverage, time-weighted mean, min, max, P10/P50/P90 and the mean by UTC hour ' +
        'of the published values with from <= ts < to, from the values as served (1 decimal); ' +
        'with energy_kwh, the emissions of that energy spread evenly over the window.',
      operationId: 'getIntensityStats',
      querystring: StatsQuery,
      ok: ['StatsResponse', 'The statistics; every one null when count is 0.'],
      ...publishedValuesRead(CACHE_CONTROL.stats, deps.limit),
    }),
    async (request): Promise<string> => {
      const asked = interpretStats(
        readParams(request.url, STATS_PARAMS),
        deps.clock(),
        deps.offered,
      );
      const { zone, basis, from, to, accounting } = asked;
      const points = await deps.points(zone.code, basis, from, to, accounting);
      const stats = windowStats(
        points,
        { from: asked.from, to: asked.to, stepSeconds: asked.zone.resolutionMin * 60 },
        asked.energyKwh,
      );
      const body: StatsResponse = {
        zone: asked.zone.code,
        ...basisOfBody(asked),
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
