import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { assessFreshness } from '../../core/freshness.js';
import type { ZoneReading } from '../../core/reading.js';
import { formatTs } from '../../core/time.js';
import { UNIT } from '../../core/units.js';
import type { ZoneRegistry, ZonesMode } from '../../core/zone-registry.js';
import type { ReadingCache } from '../../read/reading-cache.js';
import type { Reads } from '../../read/reads.js';
import type { WebhookStore } from '../../storage/webhook-store.js';
import type { Config } from '../../config.js';
import { API_ERRORS } from '../contract/errors.js';
import {
  FORECAST_HORIZON,
  MAX_EXPORT_DAYS,
  MAX_POINTS,
  STREAM_LIMITS,
} from '../contract/limits.js';
import { PeerReads } from '../../queries/peer-reads.js';
import { registerExport } from './export.js';
import { registerSchedule } from './schedule.js';
import { registerSignals } from './signals.js';
import { registerForecast } from './forecast.js';
import type { ForecastBodies } from './forecast-bodies.js';
import { factorsBody } from './factors-body.js';
import type { DataResponder } from '../transport/data-responder.js';
import { sendEncoded } from '../transport/negotiate.js';
import { CACHE_CONTROL, rateLimitHeaders } from '../contract/headers.js';
import {
  HISTORY_PARAMS,
  interpretWindow,
  interpretLatest,
  LATEST_PARAMS,
  MIX_PARAMS,
  offeredBy,
  readParams,
} from '../contract/params.js';
import type { RateLimiter } from '../transport/rate-limiter.js';
import { registerCloudZones } from './cloud-zones.js';
import { jsonRoute, publishedValuesRead, type LimitHook } from './route-options.js';
import { registerCarbonAware } from '../compat/carbon-aware/routes.js';
import { registerElectricityMaps } from '../compat/electricitymaps/routes.js';
import { registerHomeAssistant } from '../compat/electricitymaps/home-assistant.js';
import type { StreamLimits } from '../../stream/hub.js';
import { registerStream } from './stream.js';
import {
  type FactorsResponse,
  MixQuery,
  okResponses,
  HistoryQuery,
  type IndexResponse,
  LatestQuery,
  type StatusResponse,
  type ZonesResponse,
} from '../contract/schemas.js';

export interface RouteDeps {
  readonly config: Config;
  readonly reads: Reads;
  readonly clock: () => number;
  readonly responder: DataResponder;
  readonly limiter: RateLimiter;
  readonly clientAddress: (request: FastifyRequest['raw']) => string;
  /** The forecast bodies, shared with the fast path. */
  readonly forecastBodies: ForecastBodies;
  readonly streams?: Partial<StreamLimits> | undefined;
  readonly logger?: Logger | undefined;
  /** The reading cache, whose version keys the level bodies while memory answers. */
  readonly cache: ReadingCache | undefined;
  readonly subscriptions: WebhookStore;
}

const ref = (id: string) => ({ $ref: `${id}#` });

/** What the 200 of a window of one zone's published `values`, read page by page, holds. */
const pageOfWindow = (values: string, noValues: string) =>
  `The published ${values} with from <= ts < to, ascending, at most ${MAX_POINTS} (then ` +
  '`truncated`, a `note` and a Link header name the next page). A known zone with ' +
  `${noValues} gives 200 with \`count: 0\` and \`data: []\`.`;

/**
 * Serialized once, with JSON.stringify (the body is built in the schema's member order): the
 * route's schema serializer compiled Ajv validators on its first response, over 100 ms of the
 * event loop (issue 21).
 */
const FACTORS_JSON = JSON.stringify(factorsBody() satisfies FactorsResponse);

/** The `/v1/zones` body of the zones served, made once per registry. */
const zonesBodies = new WeakMap<ZoneRegistry, ZonesResponse>();
function zonesBody(registry: ZoneRegistry): ZonesResponse {
  let body = zonesBodies.get(registry);
  if (!body) {
    body = {
      data: registry.zones.map((zone) => ({
        zone: zone.code,
        name: zone.name,
        source: zone.source,
        resolution_min: zone.resolutionMin,
      })),
    };
    zonesBodies.set(registry, body);
  }
  return body;
}

/**
 * What `/v1/zones` lists, in the index and the OpenAPI document: the 45, and with `ZONES=all`
 * the flow graphs' nodes after them (extensions §16).
 */
const zonesListed = (mode: ZonesMode) =>
  mode === 'all'
    ? "the 45 zones, then the flow graphs' other nodes with a complete mix in the last 7 days"
    : 'the 45 zones';

function indexBody(demo: boolean, mode: ZonesMode): IndexResponse {
  return {
    name: 'gridco2',
    description:
      'Hourly grid carbon intensity: how much CO2-equivalent one kWh of electricity carries on ' +
      '45 grids (33 European bidding zones, 11 US balancing authorities, Great Britain)' +
      // ZONES=all: the flow graphs' nodes are zones too (extensions §16).
      (mode === 'all'
        ? ", and on the flow graphs' other nodes with a complete mix in the last 7 days (/v1/zones)"
        : '') +
      '. Timestamps are UTC and name the start of the interval.',
    unit: UNIT,
    endpoints: {
      health: 'GET /v1/health: liveness of the service; never reads the data store.',
      zones: `GET /v1/zones: ${zonesListed(mode)} with code, name, source and resolution.`,
      latest:
        'GET /v1/intensity/latest[?zone=Z]: the newest reading of every zone, or of one zone.',
      intensity:
        'GET /v1/intensity?zone=Z[&from=T][&to=T]: readings of one zone with from <= ts < to ' +
        `(default: the last 24 hours), ascending, at most ${MAX_POINTS} points.`,
    },
    other_endpoints: {
      cloud_zones:
        'GET /v1/zones/cloud: the AWS, Google Cloud and Azure regions in the 45 zones; zone= ' +
        'takes them as provider:region (e.g. aws:eu-central-1). Compatibility APIs for existing ' +
        'clients: /compat/electricitymaps/v3, /compat/carbon-aware, and /compat/gridcarbon/v1 ' +
        "(this API with the replaced gridcarbon service's source names) (docs/compat.md).",
      status: 'GET /v1/status: freshness of each source; 503 when a source is behind.',
      openapi: 'GET /v1/openapi.json: this API as an OpenAPI 3.1 document.',
      mix:
        'GET /v1/mix?zone=Z[&from=T][&to=T]: the generation mix behind each published value, ' +
        'with its renewable and low-carbon shares.',
      factors:
        'GET /v1/factors: the emission factors of both bases and how each upstream code maps ' +
        'to them. /v1/intensity and /v1/intensity/latest take basis=lifecycle or basis=direct.',
      export:
        'GET /v1/export?zones=Z,Z|all[&from=T][&to=T][&format=csv|ndjson][&basis=B][&include=mix]: ' +
        `every published reading of the zones in the window (at most ${MAX_EXPORT_DAYS} days), as a file.`,
      stream:
        'GET /v1/stream[?zones=Z,Z|all][&basis=B]: server-sent events, one per reading as it is ' +
        'published or revised; reconnect with Last-Event-ID to resume without loss.',
      forecast:
        'GET /v1/intensity/forecast?zone=Z[&basis=B][&horizon_hours=N]: the forecast of a zone ' +
        `up to ${FORECAST_HORIZON.max} hours ahead with its P10-P90 band; GET /v1/intensity/forecast/skill[?zone=Z]: ` +
        'how good it is, from the newest walk-forward backtest.',
      schedule:
        'GET /v1/schedule?zones=Z,Z|all[&duration_minutes=N][&earliest=T][&deadline=T]' +
        '[&interruptible=true][&estimator=expected|p90][&basis=B][&energy_kwh=E]: when and ' +
        'where a job runs on the lowest forecast intensity, against running it now.',
      level:
        'GET /v1/intensity/level?zone=Z|zones=Z,Z|all[&basis=B][&horizon_hours=N]: where the ' +
        "newest reading and the forecast stand within the zone's own last 30 days: a percentile " +
        'and a level from very-low to very-high.',
      stats:
        'GET /v1/intensity/stats?zone=Z[&from=T][&to=T][&basis=B][&energy_kwh=E]: count, ' +
        'coverage, mean, min, max, P10/P50/P90 and the mean by UTC hour of a window of up to ' +
        '400 days, and the emissions of energy_kwh used over it.',
      subscriptions:
        'POST /v1/subscriptions, GET and DELETE /v1/subscriptions/{id}: signed webhooks when a ' +
        'reading is published, crosses a threshold or level, or the forecast holds a low window ' +
        '(only where the operator set WEBHOOKS=on).',
    },
    openapi: '/v1/openapi.json',
    attribution:
      'Generation data: ENTSO-E Transparency Platform (Europe) and the US Energy Information ' +
      'Administration, EIA-930 (US). Great Britain: NESO Carbon Intensity API, CC BY 4.0. ' +
      'Values for Europe and the US, and for every zone on a basis, are computed by gridco2 ' +
      '(methods computed:v1 and computed:v1:direct); no endorsement by these providers is ' +
      'implied.',
    status: demo
      ? 'pre-alpha, interface 1.0.0-pre; DEMO MODE: synthetic data from a local simulator, not real measurements'
      : 'pre-alpha, interface 1.0.0-pre',
  };
}

export function registerRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { reads, clock, config, responder, limiter, clientAddress } = deps;
  const index = indexBody(config.demo, config.zones);
  const offered = offeredBy(config, () => reads.zones);

  // One count per client across all limited routes (and the fast path): 60/min per IP in all.
  const limit: LimitHook = async (request, reply) => {
    const state = await limiter.hit(clientAddress(request.raw));
    reply.headers(rateLimitHeaders(state));
    if (!state.allowed) throw API_ERRORS.rateLimited(state.limit, state.resetSeconds);
  };

  app.get(
    '/v1',
    jsonRoute({
      summary: 'Index',
      operationId: 'getIndex',
      ok: ['IndexResponse', 'The service, its endpoints and its sources.'],
      cacheControl: CACHE_CONTROL.index,
      etag: true,
    }),
    async () => index,
  );

  app.get(
    '/v1/health',
    jsonRoute({
      summary: 'Liveness; never touches the store',
      operationId: 'getHealth',
      ok: ['Liveness', 'The process serves HTTP; says nothing of data freshness.'],
      cacheControl: CACHE_CONTROL.health,
    }),
    async () => ({ ok: true, ts: formatTs(Math.floor(clock() / 1000)) }),
  );

  app.get(
    '/v1/status',
    jsonRoute({
      summary: 'Freshness of each source',
      operationId: 'getStatus',
      ok: ['StatusResponse', 'Every source is within its stale threshold.'],
      otherResponses: {
        503: {
          ...ref('StatusResponse'),
          description:
            'A Status body, not an Error: a source is behind its threshold, or the store is ' +
            'down (then the note says so and Retry-After is set).',
          headers: okResponses('StatusResponse', '', { limited: true })[200].headers,
        },
      },
      cacheControl: CACHE_CONTROL.status,
      etag: true,
      limit,
    }),
    async (_request, reply): Promise<StatusResponse> => {
      const now = Math.floor(clock() / 1000);
      let note: string | undefined;
      let latest: ZoneReading[] = [];
      let reports = {};
      let problems: readonly string[] = [];
      try {
        [latest, reports, problems] = await Promise.all([
          reads.current().latest(undefined),
          reads.ingestReports(),
          reads.problems(),
        ]);
      } catch {
        // Still a Status body: the client learns why, and lags count as if no reading existed.
        note = 'data store unavailable: freshness cannot be read until it returns.';
        reply.header('retry-after', '5');
      }
      const freshness = assessFreshness(
        new Map(latest.map((reading) => [reading.zone, reading.ts])),
        reports,
        now,
        reads.zones.zones,
      );
      // A store that answers but no longer follows (file deleted, writes refused) is not ok.
      const ok = freshness.ok && note === undefined && problems.length === 0;
      reply.code(ok ? 200 : 503);
      return {
        ok,
        ts: formatTs(now),
        note:
          note ?? [...problems.map((problem) => `store: ${problem}`), freshness.note].join('; '),
        sources: freshness.sources.map((source) => ({
          source: source.source,
          zones: source.zones,
          freshest_lag_hours: source.freshestLagHours,
          stalest_lag_hours: source.stalestLagHours,
          stale_after_hours: source.staleAfterHours,
          ok: source.ok,
        })),
      };
    },
  );

  app.get(
    '/v1/zones',
    jsonRoute({
      summary: config.zones === 'all' ? 'The zones served' : 'The 45 zones',
      operationId: 'listZones',
      ok: [
        'ZonesResponse',
        config.zones === 'all'
          ? "The 45 zones, in the order of the zone table, then the flow graphs' other " +
            'nodes with a complete mix in the last 7 days (ZONES=all).'
          : 'The 45 zones, in the order of the zone table.',
      ],
      cacheControl: CACHE_CONTROL.zones,
      etag: true,
      limit,
    }),
    async () => zonesBody(reads.zones),
  );

  app.get(
    '/v1/intensity/latest',
    jsonRoute({
      summary: 'Newest reading of every zone, or of one zone',
      operationId: 'getLatestIntensity',
      querystring: LatestQuery,
      ok: [
        'LatestResponse',
        'The newest published reading of each zone that has one (a zone without data is ' +
          'left out), in the order of /v1/zones; or of the one zone asked for.',
      ],
      ...publishedValuesRead(CACHE_CONTROL.latest, limit),
    }),
    async (request, reply) => {
      const { zone, given, basis, accounting } = interpretLatest(
        readParams(request.url, LATEST_PARAMS),
        offered,
      );
      const body = await responder.latest(zone?.code, given, basis, accounting);
      return sendEncoded(request, reply, body);
    },
  );

  app.get(
    '/v1/intensity',
    jsonRoute({
      summary: 'Readings of one zone in a window',
      operationId: 'getIntensityHistory',
      querystring: HistoryQuery,
      ok: ['HistoryResponse', pageOfWindow('readings', 'no data in the window, or none at all,')],
      ...publishedValuesRead(CACHE_CONTROL.intensity, limit),
      link: true,
    }),
    async (request, reply) => {
      const { zone, from, to, basis, accounting } = interpretWindow(
        readParams(request.url, HISTORY_PARAMS),
        clock(),
        offered,
      );
      const body = await responder.history(zone.code, from, to, basis, accounting);
      return sendEncoded(request, reply, body);
    },
  );

  app.get(
    '/v1/mix',
    jsonRoute({
      summary: 'The generation mix behind each published value of one zone in a window',
      operationId: 'getMix',
      querystring: MixQuery,
      ok: ['MixResponse', pageOfWindow('intervals', 'no mix in the window')],
      ...publishedValuesRead(CACHE_CONTROL.mix, limit),
      link: true,
    }),
    async (request, reply) => {
      const { zone, from, to, accounting } = interpretWindow(
        readParams(request.url, MIX_PARAMS),
        clock(),
        offered,
      );
      return sendEncoded(request, reply, await responder.mix(zone, from, to, accounting));
    },
  );

  app.get(
    '/v1/factors',
    jsonRoute({
      summary: 'Emission factors of both bases, and how upstream codes map to them',
      operationId: 'getFactors',
      ok: ['FactorsResponse', 'The factor tables and code mappings.'],
      cacheControl: CACHE_CONTROL.factors,
      etag: true,
    }),
    async () => FACTORS_JSON,
  );

  registerExport(app, {
    reads,
    clock,
    clientAddress,
    limit,
    offered,
  });
  registerSchedule(app, {
    reads,
    clock,
    limit,
    forecasts: () => app.forecasts,
    zonesMode: config.zones,
  });
  registerSignals(app, {
    offered,
    reads,
    subscriptions: deps.subscriptions,
    cache: deps.cache,
    clock,
    limit,
    forecasts: () => app.forecasts,
    clientAddress,
    webhooks: config.webhooks,
  });
  registerForecast(app, {
    limit,
    bodies: deps.forecastBodies,
    backtest: () => app.forecasts.backtest ?? null,
    offered,
  });
  registerStream(app, {
    reads,
    clientAddress,
    limit,
    limits: { ...STREAM_LIMITS, maxInAll: config.streamMax, ...deps.streams },
    ...(deps.logger && { logger: deps.logger }),
  });
  registerCloudZones(app, limit);
  // Outside /v1, in the peers' formats (docs/compat.md); the same read model and rate limit.
  const compat = {
    reads,
    peer: new PeerReads(reads, MAX_POINTS),
    clock,
    limiter,
    clientAddress,
    forecasts: () => app.forecasts,
  };
  // Electricity Maps publishes consumption-based values: its clients get ours where they exist.
  const tracedWhereServed = {
    ...compat,
    peer: new PeerReads(reads, MAX_POINTS, offered.consumption ? 'consumption' : 'production'),
  };
  registerElectricityMaps(app, tracedWhereServed);
  registerHomeAssistant(app, tracedWhereServed);
  registerCarbonAware(app, compat);
}
