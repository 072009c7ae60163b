import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import proxyAddr from '@fastify/proxy-addr';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import { Redis } from 'ioredis';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Logger } from 'pino';
import type { ForecastBook } from '../forecast/book.js';
import type { Config } from '../config.js';
import type { IngestReport } from '../core/reading.js';
import type { DeliveryOutcome } from '../core/webhooks/backoff.js';
import type { ReadingCache } from '../read/reading-cache.js';
import { Reads } from '../read/reads.js';
import { ServedZones } from '../read/served-zones.js';
import type { Store } from '../storage/store.js';
import { API_ERRORS } from './contract/errors.js';
import {
  ConnectionGuard,
  type ConnectionLimits,
  DEFAULT_CONNECTION_LIMITS,
} from './transport/connection-guard.js';
import {
  createNotFoundHandler,
  handleClientError,
  handleError,
  handleFrameworkError,
  sendRawError,
} from './transport/error-handler.js';
import { DataResponder } from './transport/data-responder.js';
import { buildSharedSerializer } from './transport/response-serializers.js';
import { DATA_LABEL_HEADER } from '../core/synthetic.js';
import { UNIT } from '../core/units.js';
import { createFastPath } from './transport/fast-path.js';
import { offeredBy } from './contract/params.js';
import { adaptGridcarbon } from './compat/gridcarbon/adapter.js';
import { ForecastBodies } from './routes/forecast-bodies.js';
import { DEFAULT_WEB_ROOT, registerDashboard } from './routes/dashboard.js';
import { registerMetrics, ServiceMetrics } from './routes/metrics.js';
import { CACHE_CONTROL, CORS_HEADERS, JSON_TYPE, matchesIfNoneMatch } from './contract/headers.js';
import {
  clientAddress as createClientAddress,
  LocalRateLimiter,
  type RateLimiter,
} from './transport/rate-limiter.js';
import {
  DEFAULT_REDIS_LIMITER_TIMING,
  REDIS_LIMITER_OPTIONS,
  RedisRateLimiter,
  type RedisLimiterTiming,
} from './transport/redis-limiter-partition.js';
import { SHARED_SCHEMAS } from './contract/schemas.js';
import { registerRoutes } from './routes/v1.js';
import type { StreamLimits } from '../stream/hub.js';
import type { SourceId } from '../core/sources.js';

export interface AppDeps {
  readonly config: Config;
  readonly store: Store;
  /** Milliseconds since the epoch; tests move it instead of sleeping. */
  readonly clock?: () => number;
  readonly logger?: Logger;
  /** Published readings in memory; without one (or until it is loaded) routes read the store. */
  readonly cache?: ReadingCache;
  /** Connection bounds and socket timeouts; tests shorten them. */
  readonly connections?: Partial<ConnectionLimits & SocketTimeouts>;
  /** Bounds and timing of `/v1/stream` (STREAM_MAX sets the cap in all); tests shorten them. */
  readonly streams?: Partial<StreamLimits>;
  /** How long the Redis rate limit waits for Redis; tests lengthen it, so that a busy machine's
   * pause is not taken for a partition. */
  readonly redisLimiter?: Partial<RedisLimiterTiming>;
  /** Prepared forecasts; without one, no zone has a forecast yet. */
  readonly forecasts?: ForecastBook;
  /** The built dashboard (DASHBOARD=on); tests point it elsewhere. Default: dist/web. */
  readonly webRoot?: string;
}

const NO_FORECASTS: ForecastBook = { forecast: () => null };

/** How long a connection may take, in milliseconds (Node's server settings of the same names). */
interface SocketTimeouts {
  /** To send the request line and headers (a slowloris client gets 408). */
  readonly headersTimeout: number;
  /** To send a whole request. */
  readonly requestTimeout: number;
  /**
   * Without any traffic either way: also ends a writer stalled by a client that never reads.
   * Checked by the connection guard every `checkInterval`.
   */
  readonly idleTimeout: number;
  /** Between two requests of a kept-alive connection; above the usual proxy's 60 s. */
  readonly keepAliveTimeout: number;
  /** How often Node checks the first two, and the guard the idle timeout. */
  readonly checkInterval: number;
}

const DEFAULT_TIMEOUTS: SocketTimeouts = {
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  idleTimeout: 75_000,
  keepAliveTimeout: 65_000,
  checkInterval: 5_000,
};

declare module 'fastify' {
  interface FastifyContextConfig {
    cacheControl?: string;
    etag?: boolean;
    /** The content type of the route's successful responses; errors and the rest are JSON. */
    contentType?: string;
    /** Read by @fastify/cors: the methods a preflight of the route allows (default GET, HEAD). */
    cors?: { methods: readonly string[] };
  }
  interface FastifyInstance {
    /** What serving costs and holds now: for operators' metrics and for tests that count work. */
    servingStats(): ServingStats;
    /** Tells the metrics that an ingestion run of this process ended (its report, or none). */
    recordIngestRun(source: SourceId, report: IngestReport | undefined): void;
    /** Tells the metrics how a webhook delivery attempt of this process ended. */
    recordWebhookDelivery(outcome: DeliveryOutcome): void;
    /** The prepared forecasts every forecast-reading route serves from. */
    forecasts: ForecastBook;
    /** The zones this app serves (`ZONES`, extensions §16), for the work beside it (webhooks). */
    servedZones: ServedZones;
    /** Builds the OpenAPI document now rather than on its first request (the server's start). */
    prepareOpenApi(): void;
  }
}

interface ServingStats {
  readonly bodiesEncoded: number;
  readonly bytesEncoded: number;
  readonly cachedBodyBytes: number;
  readonly openConnections: number;
  readonly refused: Readonly<Record<string, number>>;
}

/** The one composition root of the HTTP layer, used by the server, the CLI and the tests. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, store } = deps;
  const clock = deps.clock ?? Date.now;
  const log = deps.logger;
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, log) : undefined;
  // METRICS=off: nothing is counted and GET /metrics is not served.
  const metrics = config.metrics ? new ServiceMetrics() : undefined;
  const redisLimiter =
    redis &&
    new RedisRateLimiter(redis, config.rateLimitPerMinute, `${config.redisPrefix}ratelimit:`, {
      ...DEFAULT_REDIS_LIMITER_TIMING,
      ...deps.redisLimiter,
    });
  const rateLimiter: RateLimiter =
    redisLimiter ?? new LocalRateLimiter(config.rateLimitPerMinute, clock);
  const limiter = metrics ? metrics.countRefusals(rateLimiter) : rateLimiter;
  const clientAddress = createClientAddress(config.trustProxy);
  // ZONES=all: which of the flow graphs' nodes are zones too, read again as data arrives (§16).
  const served =
    config.zones === 'all' ? new ServedZones('all', store, clock, log) : ServedZones.CONTRACT;
  await served.start();
  deps.cache?.onApplied((applied) => void served.resolveFor(applied));
  const reads = new Reads(store, deps.cache, API_ERRORS.storeUnavailable, served);
  const responder = new DataResponder(reads);
  const forecastBook = deps.forecasts ?? NO_FORECASTS;
  // The forecast route and the fast path send the same prepared bodies.
  const forecastBodies = new ForecastBodies(() => forecastBook, clock);
  const fastPath = createFastPath({
    responder,
    limiter,
    clientAddress,
    clock,
    offered: offeredBy(config, () => reads.zones),
    forecasts: forecastBodies,
    ...(log && { log }),
  });
  const limits = {
    ...DEFAULT_CONNECTION_LIMITS,
    ...DEFAULT_TIMEOUTS,
    ...config.connections,
    ...deps.connections,
  };
  const trusted =
    config.trustProxy.length > 0 ? proxyAddr.compile([...config.trustProxy]) : undefined;
  const guard = new ConnectionGuard(
    limits,
    log,
    (address) => trusted?.(address, 0) ?? false,
    clock,
  );
  // DEMO: every response of every listener says its data is synthetic (docs/deploy.md).
  const labels: Record<string, string> = config.demo ? { [DATA_LABEL_HEADER]: 'demo' } : {};
  const options: FastifyServerOptions = {
    serverFactory: (handler) => {
      const server = createServer(
        {
          // Answered below in the API's JSON instead of Node's empty 400.
          requireHostHeader: false,
          headersTimeout: limits.headersTimeout,
          keepAliveTimeout: limits.keepAliveTimeout,
          requestTimeout: limits.requestTimeout,
          connectionsCheckingInterval: limits.checkInterval,
        },
        (request, response) => {
          const started = performance.now();
          // DEMO: every response says its data is synthetic (docs/deploy.md, "Synthetic data").
          if (config.demo) response.setHeader(DATA_LABEL_HEADER, 'demo');
          const admitted = guard.admit(request, response);
          // One listener for both: a second one costs more than either's work (issue 21).
          response.on('close', () => {
            if (admitted) guard.release(request, response);
            metrics?.responded(request, response, started);
          });
          if (!admitted) return;
          adaptGridcarbon(request, response);
          // No protocol is upgraded here, and after an Upgrade request Node parses nothing more
          // on the connection: answer it and close, rather than leave the client waiting.
          if (request.headers.upgrade !== undefined) response.setHeader('connection', 'close');
          if (request.httpVersion === '1.1' && request.headers.host === undefined) {
            sendRawError(response, API_ERRORS.missingHost(), { close: true });
          } else if (!fastPath(request, response)) handler(request, response);
        },
      );
      // Any Expect but 100-continue: Node would send an empty 417.
      server.on('checkExpectation', (_request, response) =>
        sendRawError(response, API_ERRORS.expectationFailed(), { close: true, headers: labels }),
      );
      guard.attach(server);
      return server;
    },
    // Per-request lines would drown the logs at info level; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: config.trustProxy.length > 0 ? [...config.trustProxy] : false,
    routerOptions: { ignoreTrailingSlash: true },
    return503OnClosing: true,
    clientErrorHandler: (error, socket) => handleClientError(error, socket, labels),
    frameworkErrors: handleFrameworkError,
    ajv: { customOptions: { coerceTypes: false, allErrors: false, removeAdditional: false } },
    // Each response schema compiled once per process, not at every start (CLI, tests).
    schemaController: { compilersFactory: { buildSerializer: buildSharedSerializer } },
  };
  const app = Fastify(
    deps.logger ? { ...options, loggerInstance: deps.logger } : { ...options, logger: false },
  );

  app.decorate('servingStats', (): ServingStats => ({
    bodiesEncoded: responder.encoded.bodies,
    bytesEncoded: responder.encoded.bytes,
    cachedBodyBytes: responder.cachedBodyBytes,
    openConnections: guard.openConnections,
    refused: Object.fromEntries(guard.shedCounts),
  }));
  app.decorate('recordIngestRun', (source: SourceId, report: IngestReport | undefined) => {
    metrics?.recordIngestRun(source, report);
    // A node's first mix may have arrived (extensions §16).
    void served.resolve();
  });
  app.decorate('recordWebhookDelivery', (outcome: DeliveryOutcome) =>
    metrics?.recordWebhookDelivery(outcome),
  );
  app.decorate('forecasts', forecastBook);
  app.decorate('servedZones', served);
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'gridco2',
        version: '1.0.0-pre',
        description:
          `Hourly grid carbon intensity (${UNIT}) for 45 zones: 33 European bidding zones, ` +
          '11 US balancing authorities and Great Britain' +
          // ZONES=all: the flow graphs' nodes are zones too (extensions §16).
          (config.zones === 'all'
            ? "; and the flow graphs' other nodes (ENTSO-E bidding zones, EIA balancing " +
              'authorities) with a complete mix in the last 7 days'
            : '') +
          '. Read-only, no authentication.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: '/' }],
      // No authentication: every operation is open (api-spec §5).
      security: [],
    },
    refResolver: { buildLocalReference: (json) => String(json.$id) },
  });

  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'HEAD', 'OPTIONS'],
    strictPreflight: false,
    optionsSuccessStatus: 204,
    maxAge: 86400,
    exposedHeaders: CORS_HEADERS['access-control-expose-headers'],
  });

  if (redis) {
    app.addHook('onClose', async () => {
      redisLimiter?.stop();
      await redis.quit().catch(() => undefined);
    });
  }
  app.addHook('onClose', async () => {
    await served.stop();
  });
  // Requests in flight finish; idle connections would hold close() until their timeout.
  app.addHook('preClose', async () => guard.closeIdle());

  // Error replies set `cache-control: no-store` in the error handlers; everything else gets the
  // route's caching headers (a 503 from /v1/status is a Status body, cached like a 200).
  app.addHook('onSend', async (request, reply, payload) => {
    const { cacheControl, etag, contentType } = request.routeOptions.config;
    reply.header(
      'content-type',
      contentType !== undefined && reply.statusCode < 400 ? contentType : JSON_TYPE,
    );
    if (reply.hasHeader('cache-control')) return payload;
    if (cacheControl) reply.header('cache-control', cacheControl);
    if (etag) {
      let tag = reply.getHeader('etag') as string | undefined;
      if (tag === undefined && typeof payload === 'string') {
        tag = `"${createHash('sha1').update(payload).digest('base64url')}"`;
        reply.header('etag', tag);
      }
      if (tag !== undefined && matchesIfNoneMatch(request.headers['if-none-match'], tag)) {
        reply.code(304);
        // Without Content-Length, as the fast path sends it (RFC 9110 §8.6: on a 304 it could
        // only be the 200's length): Fastify adds `content-length: 0` to any empty string, and
        // its HEAD handler to anything but a stream (it fails on null).
        return request.method === 'HEAD' ? Readable.from([]) : null;
      }
    }
    return payload;
  });

  // The paths served with GET, as the router registers them: 405 rather than 404 for these.
  const getPaths = new Set<string>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.includes('GET')) getPaths.add(route.url);
  });
  // Query strings are read by the one interpreter (contract/params.ts), which throws the API's errors;
  // the query schemas stay for the OpenAPI document.
  app.setValidatorCompiler(() => () => true);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(createNotFoundHandler(getPaths));

  // Before the other routes: it labels requests with the paths registered after it.
  if (metrics) {
    registerMetrics(app, metrics, {
      reads,
      responder,
      cache: deps.cache,
      clock,
      access: { addr: config.metricsAddr, token: config.metricsToken, logger: log, labels },
    });
  }
  registerRoutes(app, {
    config,
    reads,
    clock,
    responder,
    limiter,
    clientAddress,
    forecastBodies,
    streams: deps.streams,
    logger: log,
    cache: deps.cache,
    subscriptions: store.webhooks,
  });
  if (config.dashboard) {
    registerDashboard(app, { root: deps.webRoot ?? DEFAULT_WEB_ROOT, logger: log });
  }
  // Serialized once: @fastify/swagger walks every route's schema to build the document, about
  // 60 ms of the event loop (issue 21), and it does not change once the routes are registered.
  let openApiJson: string | undefined;
  const openApi = () => (openApiJson ??= JSON.stringify(app.swagger()));
  app.decorate('prepareOpenApi', () => void openApi());
  app.get(
    '/v1/openapi.json',
    { schema: { hide: true }, config: { cacheControl: CACHE_CONTROL.openapi, etag: true } },
    async () => openApi(),
  );
  await app.ready();
  return app;
}

async function connectRedis(url: string, log: Logger | undefined): Promise<Redis> {
  // A request never waits long on Redis: fail fast, count loosely, keep reconnecting.
  const redis = new Redis(url, REDIS_LIMITER_OPTIONS);
  let healthy = true;
  redis.on('error', (error: Error) => {
    if (healthy) log?.warn({ err: error.message }, 'redis unavailable: rate limits count loosely');
    healthy = false;
  });
  redis.on('ready', () => {
    if (!healthy) log?.info('redis reachable again');
    healthy = true;
  });
  // Start counting from the first request when Redis is there; never hold start-up for long.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 2000);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return redis;
}
