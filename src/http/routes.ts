import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { assessFreshness } from '../core/freshness.js';
import type { ZoneReading } from '../core/reading.js';
import { ACCEPTED_EXAMPLE, formatTs, HOUR, parseInstant } from '../core/time.js';
import { findZone, ZONES } from '../core/zones.js';
import { ApiError } from '../errors.js';
import { EncodedBody, ResponseCache } from '../serving/response-cache.js';
import { ZoneSeries } from '../serving/zone-series.js';
import type { AppDeps } from './app.js';
import { encodeHistory, encodeLatest } from './encode.js';
import {
  errorResponses,
  HistoryQuery,
  type IndexResponse,
  LatestQuery,
  type StatusResponse,
  type ZonesResponse,
} from './schemas.js';

export const MAX_POINTS = 5000;
const UNIT = 'gCO2eq/kWh';
const ref = (id: string) => ({ $ref: `${id}#` });

const ZONES_BODY: ZonesResponse = {
  data: ZONES.map((zone) => ({
    zone: zone.code,
    name: zone.name,
    source: zone.source,
    resolution_min: zone.resolutionMin,
  })),
};
const ZONE_ORDER = new Map(ZONES.map((zone, index) => [zone.code, index]));
const RESPONSE_CACHE_BYTES = 64 * 1024 * 1024;
const EMPTY_SERIES = new ZoneSeries();

const inZoneOrder = (readings: ZoneReading[]): ZoneReading[] =>
  readings
    .filter((reading) => ZONE_ORDER.has(reading.zone))
    .sort((a, b) => ZONE_ORDER.get(a.zone)! - ZONE_ORDER.get(b.zone)!);

/** The points of `series` with from <= ts < to, as an index range. */
const windowOf = (series: ZoneSeries, from: number, to: number) => ({
  series,
  start: series.lowerBound(from),
  end: series.lowerBound(to),
});

/**
 * Sends an encoded body, compressed when the client accepts it. The ETag names the exact
 * representation, so the onSend hook can answer If-None-Match without hashing again.
 */
function sendEncoded(request: FastifyRequest, reply: FastifyReply, encoded: EncodedBody): Buffer {
  const encoding =
    encoded.body.length >= MIN_COMPRESS_BYTES ? preferredEncoding(request) : undefined;
  if (encoded.body.length >= MIN_COMPRESS_BYTES) reply.header('vary', 'accept-encoding');
  if (encoding === undefined) {
    reply.header('etag', encoded.etag);
    return encoded.body;
  }
  reply.header('content-encoding', encoding);
  reply.header('etag', `${encoded.etag.slice(0, -1)}-${encoding}"`);
  return encoding === 'br' ? encoded.br() : encoded.gzip();
}

const MIN_COMPRESS_BYTES = 1024;

function preferredEncoding(request: FastifyRequest): 'br' | 'gzip' | undefined {
  const header = request.headers['accept-encoding'];
  if (!header) return undefined;
  const accepted = new Set(
    header
      .split(',')
      .map((part) => part.trim().toLowerCase())
      .filter((part) => !/;\s*q=0(\.0*)?$/.test(part))
      .map((part) => part.split(';')[0]!.trim()),
  );
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip')) return 'gzip';
  return undefined;
}

/** Store failures become 503 with retry-after: the client retries, nothing is lost. */
async function fromStore<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch {
    throw storeUnavailable();
  }
}

const storeUnavailable = () =>
  new ApiError(503, 'data store unavailable', 'retry after the seconds in retry-after', {
    'retry-after': '5',
  });

function indexBody(demo: boolean): IndexResponse {
  return {
    name: 'gridco2',
    description:
      'Hourly grid carbon intensity: how much CO2-equivalent one kWh of electricity carries on ' +
      '45 grids (33 European bidding zones, 11 US balancing authorities, Great Britain). ' +
      'Timestamps are UTC and name the start of the interval.',
    unit: UNIT,
    endpoints: {
      health: 'GET /v1/health: liveness of the service; never reads the data store.',
      zones: 'GET /v1/zones: the 45 zones with code, name, source and resolution.',
      latest:
        'GET /v1/intensity/latest[?zone=Z]: the newest reading of every zone, or of one zone.',
      intensity:
        'GET /v1/intensity?zone=Z[&from=T][&to=T]: readings of one zone with from <= ts < to ' +
        '(default: the last 24 hours), ascending, at most 5000 points.',
    },
    other_endpoints: {
      status: 'GET /v1/status: freshness of each source; 503 when a source is behind.',
      openapi: 'GET /v1/openapi.json: this API as an OpenAPI 3.1 document.',
    },
    openapi: '/v1/openapi.json',
    attribution:
      'Generation data: ENTSO-E Transparency Platform (Europe) and the US Energy Information ' +
      'Administration, EIA-930 (US). Great Britain: NESO Carbon Intensity API, CC BY 4.0. ' +
      'Values for Europe and the US are computed by gridco2 (method computed:v1); no ' +
      'endorsement by these providers is implied.',
    status: demo
      ? 'pre-alpha, interface 1.0.0-pre; DEMO MODE: synthetic data from a local simulator, not real measurements'
      : 'pre-alpha, interface 1.0.0-pre',
  };
}

export function registerRoutes(
  app: FastifyInstance,
  deps: AppDeps & { clock: () => number },
): void {
  const { store, clock, config } = deps;
  // One limiter for all limited routes: the 60/min budget is per IP across them, not per route.
  const limit = app.rateLimit();
  const index = indexBody(config.demo);
  const { cache } = deps;
  const responses = new ResponseCache(RESPONSE_CACHE_BYTES);
  cache?.onChange(() => responses.clear());
  /** Bodies built from the in-memory cache are kept until the data changes; others are not. */
  /** Whether to serve from memory; a cache that lost its store answers 503 like the store. */
  const fromCache = (): boolean => {
    if (!cache?.ready) return false;
    if (!cache.storeReachable) throw storeUnavailable();
    return true;
  };
  const build = (key: string, encode: () => string): EncodedBody =>
    cache?.ready ? responses.getOrBuild(key, encode) : new EncodedBody(Buffer.from(encode()));

  app.get(
    '/v1',
    {
      schema: { summary: 'Index', response: { 200: ref('IndexResponse') } },
      config: { cacheControl: 'public, max-age=3600', etag: true },
    },
    async () => index,
  );

  app.get(
    '/v1/health',
    {
      schema: { summary: 'Liveness; never touches the store', response: { 200: ref('Liveness') } },
      config: { cacheControl: 'no-store' },
    },
    async () => ({ ok: true, ts: formatTs(Math.floor(clock() / 1000)) }),
  );

  app.get(
    '/v1/status',
    {
      schema: {
        summary: 'Freshness of each source',
        response: {
          200: ref('StatusResponse'),
          503: {
            ...ref('StatusResponse'),
            description: 'A source is behind, or the store is down',
          },
          ...errorResponses(429),
        },
      },
      config: { cacheControl: 'max-age=120', etag: true },
      onRequest: limit,
    },
    async (_request, reply): Promise<StatusResponse> => {
      const now = Math.floor(clock() / 1000);
      let note: string | undefined;
      let latest: ZoneReading[] = [];
      let reports = {};
      try {
        [latest, reports] = await Promise.all([store.latestPerZone(), store.latestIngestReports()]);
      } catch {
        // Still a Status body: the client learns why, and lags count as if no reading existed.
        note = 'data store unavailable: freshness cannot be read until it returns.';
        reply.header('retry-after', '5');
      }
      const freshness = assessFreshness(
        new Map(latest.map((reading) => [reading.zone, reading.ts])),
        reports,
        now,
      );
      const ok = freshness.ok && note === undefined;
      reply.code(ok ? 200 : 503);
      return {
        ok,
        ts: formatTs(now),
        note: note ?? freshness.note,
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
    {
      schema: {
        summary: 'The 45 zones',
        response: { 200: ref('ZonesResponse'), ...errorResponses(429) },
      },
      config: { cacheControl: 'max-age=3600', etag: true },
      onRequest: limit,
    },
    async () => ZONES_BODY,
  );

  app.get(
    '/v1/intensity/latest',
    {
      schema: {
        summary: 'Newest reading of every zone, or of one zone',
        querystring: LatestQuery,
        response: { 200: ref('LatestResponse'), ...errorResponses(400, 404, 429, 503) },
      },
      config: { cacheControl: 'public, max-age=300', etag: true },
      onRequest: limit,
    },
    async (request, reply) => {
      const given = (request.query as LatestQuery).zone;
      const zone = given === undefined ? undefined : requireZone(given.trim());
      const key = zone ? `latest:${zone}` : 'latest';
      const cached = fromCache();
      let encoded = cached ? responses.get(key) : undefined;
      if (!encoded) {
        const latest = cached
          ? cache!.latest()
          : inZoneOrder(await fromStore(() => store.latestPerZone()));
        const selected = zone ? latest.filter((reading) => reading.zone === zone) : latest;
        if (zone && selected.length === 0) throw unknownZone(given!.trim());
        encoded = build(key, () => encodeLatest(selected));
      }
      return sendEncoded(request, reply, encoded);
    },
  );

  app.get(
    '/v1/intensity',
    {
      schema: {
        summary: 'Readings of one zone in a window',
        querystring: HistoryQuery,
        response: { 200: ref('HistoryResponse'), ...errorResponses(400, 404, 429, 503) },
      },
      config: { cacheControl: 'max-age=600', etag: true },
      onRequest: limit,
    },
    async (request, reply) => {
      const query = request.query as HistoryQuery;
      const given = query.zone.trim();
      if (given === '') throw new ApiError(400, 'missing required param: zone', 'e.g. zone=DE');
      const fromMs = query.from === undefined ? undefined : instant(query.from, 'from');
      const toMs = query.to === undefined ? undefined : instant(query.to, 'to');
      const zone = requireZone(given);
      // Every stored ts is a whole second, so rounding both bounds up keeps from <= ts < to exact.
      const to = Math.ceil((toMs ?? clock()) / 1000);
      const from = fromMs === undefined ? to - 24 * HOUR : Math.ceil(fromMs / 1000);
      if (from >= to) {
        throw new ApiError(
          400,
          'invalid window: from must be before to',
          'give from earlier than to',
        );
      }
      const { series, start, end } = fromCache()
        ? windowOf(cache!.zone(zone) ?? EMPTY_SERIES, from, to)
        : windowOf(
            new ZoneSeries(
              await fromStore(() => store.readingsInWindow(zone, from, to, MAX_POINTS + 1)),
            ),
            from,
            to,
          );
      const truncated = end - start > MAX_POINTS;
      const note = truncated
        ? `truncated at ${MAX_POINTS} points: narrow the window, or request the rest with ` +
          `from=${formatTs(series.ts(start + MAX_POINTS))}`
        : undefined;
      const encoded = build(`history:${zone}:${from}:${to}`, () =>
        encodeHistory({
          zone,
          from,
          to,
          series,
          start,
          end: truncated ? start + MAX_POINTS : end,
          ...(note !== undefined && { note }),
        }),
      );
      return sendEncoded(request, reply, encoded);
    },
  );
}

function requireZone(given: string): string {
  const zone = findZone(given);
  if (!zone) throw unknownZone(given);
  return zone.code;
}

function unknownZone(given: string): ApiError {
  return new ApiError(404, `unknown or empty zone: ${given}`, 'see /v1/zones for the zone codes');
}

function instant(text: string, param: 'from' | 'to'): number {
  const parsed = parseInstant(text.trim());
  if (parsed === undefined) {
    throw new ApiError(
      400,
      `invalid param: ${param}`,
      `use ISO 8601 UTC, e.g. ${param}=${ACCEPTED_EXAMPLE}`,
    );
  }
  return parsed;
}
