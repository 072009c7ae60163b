import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ConfigError, type Config, HOST_ACCEPTED, redactUrl } from './config.js';
import { createLogger } from './logger.js';
import { type AppDeps, buildApp } from './http/app.js';
import { startIngestionLeadership } from './ingest/leader.js';
import { API_ERRORS } from './http/contract/errors.js';
import { signalReads } from './queries/signal-reads.js';
import { type Deliverer, type DelivererOptions, startDeliverer } from './webhooks/deliverer.js';
import { type SchedulerOptions, startIngestionScheduler } from './ingest/scheduler.js';
import { ForecastEngine } from './forecast/engine.js';
import { forecastCompute } from './forecast/worker-compute.js';
import { ReadingCache } from './read/reading-cache.js';
import { servableZones } from './core/zone-registry.js';
import { Reads } from './read/reads.js';
import { openStore } from './open-store.js';
import type { Store } from './storage/store.js';

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly store: Store;
  readonly url: string;
  /** Whether this instance currently runs ingestion. */
  readonly ingesting: () => boolean;
  /** The prepared forecasts (tests call `tick()` instead of waiting for the next check). */
  readonly forecasts: ForecastEngine;
  /** The webhook deliverer, with WEBHOOKS=on. */
  readonly deliverer?: Deliverer;
  /** Stops accepting, finishes in-flight requests and background work, closes the store. */
  close(): Promise<void>;
}

export interface ServerOptions {
  readonly logger?: Logger;
  /** Milliseconds since the epoch; tests pin it. */
  readonly clock?: () => number;
  /**
   * `background` (default): serve at once, from the store until the in-memory cache is loaded;
   * `ready`: load the cache before listening; `off`: always read the store.
   */
  readonly cache?: 'background' | 'ready' | 'off';
  /** Passed to the ingestion scheduler (tests inject fetch or shorten the first delay). */
  readonly ingestion?: Partial<Omit<SchedulerOptions, 'config' | 'store' | 'logger'>>;
  /** Connection bounds and socket timeouts (tests shorten them). */
  readonly connections?: AppDeps['connections'];
  /** Bounds and timing of event streams (tests shorten them). */
  readonly streams?: AppDeps['streams'];
  /** How long the Redis rate limit waits for Redis (tests lengthen it). */
  readonly redisLimiter?: AppDeps['redisLimiter'];
  /** Timing of webhook deliveries (tests shorten the turn and the backoff) and their resolver. */
  readonly webhooks?: Partial<Pick<DelivererOptions, 'turnMs' | 'leaseMs' | 'backoff' | 'resolve'>>;
  /** How often the forecasts check for new data (the demo, filling its store, checks often). */
  readonly forecastCheckMs?: number;
}

/** The composition root of `gridco2 serve`: config -> store -> app -> listen. */
export async function startServer(
  config: Config,
  options: ServerOptions = {},
): Promise<RunningServer> {
  const logger = options.logger ?? createLogger(config);
  const store = await openStore(config, 'serve', logger);
  const cacheMode = options.cache ?? 'background';
  const cache =
    cacheMode === 'off'
      ? undefined
      : new ReadingCache(store, logger, { zones: servableZones(config.zones) });
  if (cacheMode === 'ready') await cache?.refresh();
  const forecasts = new ForecastEngine({
    store,
    logger,
    // Off the serving thread: the backtest and the recomputes take seconds of CPU.
    compute: forecastCompute(store, config.databaseUrl, config.forecastNiceness),
    ...(options.clock && { clock: options.clock }),
    ...(options.forecastCheckMs && { checkMs: options.forecastCheckMs }),
  });
  const app = await buildApp({
    cache,
    forecasts,
    config,
    store,
    logger,
    ...(options.clock && { clock: options.clock }),
    ...(options.connections && { connections: options.connections }),
    ...(options.streams && { streams: options.streams }),
    ...(options.redisLimiter && { redisLimiter: options.redisLimiter }),
  });
  // Before any request can come: the first to ask for it would otherwise wait about 60 ms.
  app.prepareOpenApi();
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    // Nothing polls or connects yet (the cache starts below), so the one line saying why is all
    // that a failed start prints.
    await app.close();
    await store.close();
    throw listenFailure(error, config);
  }
  cache?.start();
  forecasts.start();
  // WEBHOOKS=on: every instance competes for the webhooks lease; its holder delivers.
  const deliverer = config.webhooks.enabled
    ? startDeliverer({
        store,
        logger,
        // From the store: the version evaluated and the values read are then the same. The
        // zones are the app's: a served zone is one to subscribe to (extensions §16).
        ...signalReads(new Reads(store, undefined, API_ERRORS.storeUnavailable, app.servedZones)),
        zones: () => app.servedZones.current,
        forecasts: () => forecasts,
        allow: config.webhooks.allow,
        onAttempt: (outcome) => app.recordWebhookDelivery(outcome),
        ...(options.clock && { clock: options.clock }),
        ...options.webhooks,
      })
    : undefined;
  // With INGEST=on, this instance competes for the one ingestion lease of the store.
  const leadership = config.ingest
    ? startIngestionLeadership({
        store,
        logger,
        leaseMs: config.ingestLeaseSeconds * 1000,
        renewMs: (config.ingestLeaseSeconds * 1000) / 4,
        startIngestion: () =>
          startIngestionScheduler({
            config,
            store,
            logger,
            intervalMs: config.ingestIntervalSeconds * 1000,
            onRun: (source, report) => app.recordIngestRun(source, report),
            ...options.ingestion,
          }),
      })
    : undefined;
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logger.info({ url, database: redactUrl(config.databaseUrl) }, 'gridco2 serving');
  const stopWatching = watchStoreProblems(store, logger, config.databaseUrl);
  let closing: Promise<void> | undefined;
  return {
    app,
    store,
    url,
    ingesting: () => leadership?.leading ?? false,
    forecasts,
    ...(deliverer && { deliverer }),
    close: () =>
      (closing ??= (async () => {
        stopWatching();
        await app.close();
        await deliverer?.stop();
        await leadership?.stop();
        await forecasts.stop();
        await cache?.stop();
        await store.close();
      })()),
  };
}

const STORE_CHECK_MS = 30_000;

/**
 * Logs, once each, the store's problems as they appear (a SQLite file deleted under the process,
 * writes refused): `/v1/status` shows them too, but an operator reads the logs first.
 */
function watchStoreProblems(store: Store, logger: Logger, databaseUrl: string): () => void {
  let known = new Set<string>();
  const timer = setInterval(() => {
    store.problems().then(
      (problems) => {
        for (const problem of problems) {
          if (!known.has(problem)) {
            logger.error({ database: redactUrl(databaseUrl) }, `store: ${problem}`);
          }
        }
        known = new Set(problems);
      },
      () => undefined, // an unreachable store is the reading cache's to report
    );
  }, STORE_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** Why the server could not listen, in terms of the PORT and HOST settings. */
function listenFailure(error: unknown, config: Pick<Config, 'port' | 'host'>): unknown {
  const where = `port ${config.port} on ${config.host}`;
  switch ((error as { code?: unknown }).code) {
    case 'EADDRINUSE':
      return new Error(`${where} is already in use: set PORT (or HOST) to a free one`);
    case 'EACCES':
      return new Error(`${where} needs privileges this user lacks: set PORT to 1024 or above`);
    case 'EADDRNOTAVAIL':
      return new Error(`${config.host} is no address of this machine: set HOST to one of its own`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ConfigError(`HOST=${config.host} does not resolve: HOST must be ${HOST_ACCEPTED}`);
    default:
      return error;
  }
}

/** Closes the server on SIGTERM/SIGINT; a second signal exits at once. */
export function closeOnSignals(server: Pick<RunningServer, 'close'>, logger: Logger): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
