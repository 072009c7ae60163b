import type { FastifyInstance } from 'fastify';
import { type BacktestRun, publishedRows } from '../../core/forecast/backtest.js';
import { formatTs } from '../../core/time.js';
import { sendEncoded } from '../transport/negotiate.js';
import type { ForecastBodies } from './forecast-bodies.js';
import { round1OrNull, round3 } from '../../core/units.js';
import { FORECAST_HORIZON } from '../contract/limits.js';
import { CACHE_CONTROL } from '../contract/headers.js';
import {
  FORECAST_PARAMS,
  interpretForecast,
  interpretSkill,
  type Offered,
  readParams,
  SKILL_PARAMS,
} from '../contract/params.js';
import { ForecastQuery, SkillQuery, type SkillResponse } from '../contract/schemas.js';
import { jsonRoute, type LimitHook } from './route-options.js';

/**
 * `GET /v1/intensity/forecast` and `/v1/intensity/forecast/skill` (extensions §4). Successful
 * forecast requests are usually answered by the fast path (fast-path.ts) from the same prepared
 * bodies; this route answers the rest (every error) and serves without the fast path.
 */

export interface ForecastDeps {
  readonly limit: LimitHook;
  /** The prepared forecast bodies, shared with the fast path. */
  readonly bodies: ForecastBodies;
  /** The newest backtest, or null before the first. */
  readonly backtest: () => BacktestRun | null;
  /** The zones served now. */
  readonly offered: Pick<Offered, 'zones'>;
}

/** Ratios of the skill table carry 3 decimals; a figure that could not be measured is null. */
const ratioOrNull = (value: number | null): number | null =>
  value !== null && Number.isFinite(value) ? round3(value) : null;
const instantOrNull = (ts: number | null): string | null => (ts === null ? null : formatTs(ts));

export function registerForecast(app: FastifyInstance, deps: ForecastDeps): void {
  const { limit } = deps;

  app.get(
    '/v1/intensity/forecast',
    jsonRoute({
      summary: `Forecast of one zone, up to ${FORECAST_HORIZON.max} hours ahead`,
      description:
        "Every interval from the one after the zone's newest published reading up to now + " +
        'horizon_hours, with a P10-P90 band from the measured errors of the model. Forecasts ' +
        'are recomputed when new data or upstream forecasts arrive, not per request.',
      operationId: 'getIntensityForecast',
      querystring: ForecastQuery,
      ok: [
        'ForecastResponse',
        'The forecast; a zone with too little history to forecast gives count 0 and a note.',
      ],
      errors: [400, 404],
      cacheControl: CACHE_CONTROL.forecast,
      etag: true,
      limit,
    }),
    async (request, reply): Promise<Buffer> => {
      const query = interpretForecast(readParams(request.url, FORECAST_PARAMS), deps.offered);
      const encoded = deps.bodies.body(query);
      // As the data endpoints: br or gzip when accepted, each with its own ETag.
      return sendEncoded(request, reply, encoded);
    },
  );

  app.get(
    '/v1/intensity/forecast/skill',
    jsonRoute({
      summary: 'How good the forecasts are: the newest walk-forward backtest',
      description:
        'Per zone, basis and horizon bucket, the errors and skill of the model serving it, ' +
        'measured out of sample: at each daily issue time a model saw only what had been ' +
        'published (and upstream forecasts issued) by then (docs/forecast.md).',
      operationId: 'getForecastSkill',
      querystring: SkillQuery,
      ok: ['SkillResponse', 'The skill table; count 0 before the first backtest.'],
      errors: [400, 404],
      cacheControl: CACHE_CONTROL.skill,
      etag: true,
      limit,
    }),
    // JSON.stringify, not the schema serializer (the body is built in the schema's member
    // order): its nullable numbers were checked by Ajv validators, compiled on the first response
    // (85 ms of the event loop) and run on every value after (21 ms for every zone; issue 21).
    async (request): Promise<string> => {
      const zone = interpretSkill(readParams(request.url, SKILL_PARAMS), deps.offered);
      const run = deps.backtest();
      const order = deps.offered.zones;
      const data: SkillResponse['data'] = [];
      const zones = (run?.zones ?? [])
        .filter((entry) => entry.issues > 0 && (zone === undefined || entry.zone === zone.code))
        .sort((a, b) => (order.indexOf(a.zone) ?? 0) - (order.indexOf(b.zone) ?? 0));
      for (const entry of zones) {
        for (const row of publishedRows(entry)) {
          data.push({
            zone: entry.zone,
            basis: entry.basis,
            bucket: row.bucket,
            model: row.model,
            from: instantOrNull(entry.from),
            to: instantOrNull(entry.to),
            issues: entry.issues,
            n: row.n,
            mae: round1OrNull(row.mae),
            rmse: round1OrNull(row.rmse),
            mape: round1OrNull(row.mape),
            skill_vs_persistence: ratioOrNull(row.skill_vs_persistence),
            skill_vs_climatology: ratioOrNull(row.skill_vs_climatology),
            spearman: ratioOrNull(row.spearman),
            p10_p90_coverage: ratioOrNull(row.p10_p90_coverage),
            savings_captured: ratioOrNull(row.savings_captured),
          });
        }
      }
      const body: SkillResponse = {
        generated_at: run ? formatTs(run.createdAt) : null,
        count: data.length,
        data,
        ...(data.length === 0 && {
          note: run
            ? 'the newest backtest has no issue time for this zone yet: it needs 14 days of history.'
            : 'no backtest has run yet: serve runs one at start and daily, or run gridco2 backtest.',
        }),
      };
      return JSON.stringify(body);
    },
  );
}
