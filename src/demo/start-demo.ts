import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';
import { loadConfig, type Config } from '../config.js';
import { floorToHour, HOUR, type TimeWindow } from '../core/time.js';
import { isServedZone, ZONES } from '../core/zones.js';
import { graphsFedBy, keepConsumptionUp } from '../consumption/keep-up.js';
import { planBackfill, type BackfillResult } from '../ingest/backfill.js';
import { graphBackfillChunks } from '../ingest/backfill-graph.js';
import { ingestSource } from '../ingest/ingest-source.js';
import { DEFAULT_INITIAL_WINDOW_SECONDS, plural } from '../ingest/run-ingestion.js';
import { createLogger } from '../logger.js';
import { startServer } from '../server.js';
import { startSimulator } from '../simulator/index.js';
import type { SourceAdapter, SourceSettings } from '../sources/adapter.js';
import { UPSTREAMS } from '../sources/registry.js';
import type { Store } from '../storage/store.js';
import { runBackfillPool, type BackfillJob } from './backfill-pool.js';
import { createBackfillDisplay } from './progress.js';
import { SOURCES, type SourceId } from '../core/sources.js';

/**
 * `gridco2 demo`: the upstream simulator and the service in one process, so that gridco2 can be
 * tried without keys or network. Synthetic data lives only here (docs/api.md, "Data rules"): in
 * its own database file, never the configured one, and the `/v1` index says so.
 */

const DEMO_DATABASE_URL = 'sqlite:data/demo.db';
/** A fixed seed: every demo shows the same synthetic grid for the same hours. */
const DEMO_SEED = 1;
const SIMULATED_KEY = 'simulated';
const DAY = 24 * HOUR;

/**
 * Settings the demo sets itself: the user's own (real database, every upstream's base URL and
 * key, src/sources/registry.ts) never reach it.
 */
const SET_BY_DEMO = [
  'DATABASE_URL',
  'INGEST',
  ...SOURCES.flatMap((source) => {
    const { baseUrl, credential } = UPSTREAMS[source].settings;
    return credential ? [baseUrl.variable, credential.variable] : [baseUrl.variable];
  }),
];

export interface DemoOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Days of history to backfill. */
  readonly days: number;
}

export interface RunningDemo {
  readonly logger: Logger;
  /** Stops the backfill, the server (ingestion, cache, store) and the simulator, in that order. */
  close(): Promise<void>;
}

export async function startDemo(options: DemoOptions): Promise<RunningDemo> {
  const { env, days } = options;
  const userSettings = loadConfig(
    Object.fromEntries(Object.entries(env).filter(([name]) => !SET_BY_DEMO.includes(name))),
  );
  const logger = createLogger(userSettings);
  const { limitWarning, maxConnections } = userSettings.connections;
  if (limitWarning !== null) logger.warn({ maxConnections }, limitWarning);
  const simulator = await startSimulator({ seed: DEMO_SEED });
  const config = demoConfig(userSettings, simulator.baseUrls);
  const server = await startServer(config, {
    logger,
    // The demo runs the first pass itself, at once; the schedule takes over one interval later.
    ingestion: { firstRunDelayMs: config.ingestIntervalSeconds * 1000 },
    // Forecasts follow the backfill as it fills the store, not half a minute behind it.
    forecastCheckMs: 5_000,
  }).catch(async (error: unknown) => {
    await simulator.close();
    throw error;
  });

  const ignored = SET_BY_DEMO.filter((name) => env[name]?.trim());
  process.stderr.write(banner(server.url, simulator.url, days, ignored));
  logger.warn(
    { demo: true, simulator: simulator.url, database: config.databaseUrl, ignored },
    'DEMO MODE: every value served is synthetic, from the local upstream simulator',
  );

  const shutdown = new AbortController();
  // Settles once the first pass and the backfill are done, failed or interrupted.
  const history = fillHistory({
    config,
    store: server.store,
    logger,
    days,
    signal: shutdown.signal,
    // The first backtest ran on the few hours of the first pass: with the history in, it
    // chooses models and bands for every zone (the P10-P90 band and the skill table).
    afterBackfill: () => server.forecasts.backtestNow(),
    whileBackfilling: (fill) => server.forecasts.whileFilling(fill),
  }).catch((error: unknown) => logger.error({ err: error }, 'demo: history could not be filled'));
  let closing: Promise<void> | undefined;
  return {
    logger,
    close: () =>
      (closing ??= (async () => {
        shutdown.abort();
        await history;
        // Scheduled runs still talk to the simulator until the server has stopped them.
        await server.close();
        await simulator.close();
      })()),
  };
}

function demoConfig(userSettings: Config, baseUrls: Readonly<Record<SourceId, string>>): Config {
  const sources = Object.fromEntries(
    SOURCES.map((source): [SourceId, SourceSettings] => [
      source,
      {
        baseUrl: baseUrls[source],
        credential: UPSTREAMS[source].settings.credential ? SIMULATED_KEY : null,
      },
    ]),
  ) as Record<SourceId, SourceSettings>;
  return Object.freeze({
    ...userSettings,
    demo: true,
    databaseUrl: DEMO_DATABASE_URL,
    ingest: true,
    sources,
  });
}

function banner(apiUrl: string, simulatorUrl: string, days: number, ignored: string[]): string {
  const rule = '='.repeat(78);
  return [
    rule,
    ' gridco2 DEMO MODE: every value served is SYNTHETIC, made up by a local simulator of',
    ` the upstreams (${simulatorUrl}, seed ${DEMO_SEED}). These are not real measurements.`,
    ` Data: ${DEMO_DATABASE_URL.slice('sqlite:'.length)}, kept apart from real data.`,
    ...(ignored.length > 0 ? [` Not used in demo mode: ${ignored.join(', ')}.`] : []),
    ` API: ${apiUrl}/v1 (current data first, then ${plural(days, 'day')} of history).`,
    rule,
    '',
  ].join('\n');
}

interface HistoryOptions {
  readonly config: Config;
  readonly store: Store;
  readonly logger: Logger;
  readonly days: number;
  readonly signal: AbortSignal;
  /** Started once the backfill is in, awaited before the flow graphs; never rejects. */
  readonly afterBackfill: () => Promise<void>;
  /** Wraps the backfill: no backtest of the partly filled store meanwhile (the one after it replaces it). */
  readonly whileBackfilling: <T>(fill: Promise<T>) => Promise<T>;
}

/**
 * Recent data first: one normal ingestion pass of every source's zones (all current within
 * seconds), then the whole window backfilled by worker processes while the API serves, then a
 * backtest over it; once that is done, (FLOWS) the flow graphs' nodes and borders over the
 * window, and the consumption series traced from them. Only what an earlier demo did not store is fetched,
 * whatever its `--days`.
 */
async function fillHistory(options: HistoryOptions): Promise<void> {
  const { config, store, logger, days, signal, afterBackfill, whileBackfilling } = options;
  // The pass the scheduler and `gridco2 ingest` run; every source is configured in the demo.
  // Its zones only: the flow graphs (FLOWS) are the backfill's, over the whole window in the
  // workers, so that every zone is current as soon as without them.
  const ingestions = SOURCES.map((source) =>
    ingestSource({
      config: { ...config, flows: false },
      store,
      logger,
      source,
      localUpstream: true,
    }),
  );
  const adapters = SOURCES.flatMap(
    (source) => ingestSource({ config, store, logger, source, localUpstream: true }).adapter ?? [],
  );

  const passStarted = performance.now();
  const initialWindowSeconds = Math.min(days * DAY, DEFAULT_INITIAL_WINDOW_SECONDS);
  await Promise.all(ingestions.map((ingestion) => ingestion.pass(signal, initialWindowSeconds)));
  if (signal.aborted) return;
  const current = (await store.latestPerZone()).filter(({ zone }) => isServedZone(zone)).length;
  const passSeconds = secondsSince(passStarted);
  logger.info(
    { zones: current, seconds: passSeconds },
    `demo: first ingestion pass done in ${passSeconds} s, ` +
      `${current} of ${ZONES.length} zones current; backfilling ${plural(days, 'day')}`,
  );

  const window = historyWindow(days, Date.now());
  // The zones first, then (FLOWS) the flow graphs: forecasts need the zones' history only.
  const chunksOf = (count: (adapter: SourceAdapter) => number) =>
    new Map(adapters.map((adapter) => [adapter.source, count(adapter)]));
  const zones = await whileBackfilling(
    backfillPhase(
      options,
      window,
      zoneJobs(adapters),
      chunksOf((adapter) => planBackfill(adapter, adapter.zones, window).length),
    ),
  );
  if (zones === undefined) return;
  logPhase(logger, zones, `demo: backfill of ${plural(days, 'day')}`, { days });
  // The flow graphs wait for the first backtest: beside the graph workers and the tracing, the
  // backtest's niced processes (FORECAST_NICENESS) got a few percent of the cores, and the bands
  // of a 240-day demo came 183 s after the backfill. A stop does not wait for the backtest
  // (minutes for a year); the server's close interrupts it.
  // The wait for a stop is cancelled when the backtest wins: no listener left on the signal.
  const settled = new AbortController();
  await Promise.race([
    afterBackfill(),
    once(signal, 'abort', { signal: settled.signal }).catch(() => undefined),
  ]).finally(() => settled.abort());
  if (signal.aborted) return;

  const graphJobs = adapters.flatMap(({ source, graph }): BackfillJob[] =>
    graph ? [{ source, zones: [], graph: true }] : [],
  );
  if (graphJobs.length === 0) return;
  const graphs = await backfillPhase(
    options,
    window,
    graphJobs,
    chunksOf((adapter) => graphBackfillChunks(adapter, window)),
  );
  if (graphs === undefined) return;
  logPhase(logger, graphs, `demo: flow graphs of ${plural(days, 'day')} backfilled`, { days });
  // The workers wrote the history's mixes and flows: its consumption series, traced here.
  await keepConsumptionUp(store, logger, [
    ...new Set(adapters.flatMap((adapter) => graphsFedBy(adapter))),
  ]);
}

interface PhaseResult {
  readonly results: readonly BackfillResult[];
  readonly seconds: number;
}

/** Runs `jobs` on the backfill workers with a progress display; undefined once stopped. */
async function backfillPhase(
  { config, signal }: HistoryOptions,
  window: TimeWindow,
  jobs: readonly BackfillJob[],
  chunksPerSource: ReadonlyMap<SourceId, number>,
): Promise<PhaseResult | undefined> {
  const sources = new Set(jobs.map((job) => job.source));
  const display = createBackfillDisplay(
    new Map([...chunksPerSource].filter(([source]) => sources.has(source))),
  );
  const started = performance.now();
  try {
    const results = await runBackfillPool({
      config,
      window,
      jobs,
      workers: backfillWorkers(),
      onChunk: display.chunk,
      signal,
    });
    return signal.aborted
      ? undefined
      : { results: [...results.values()], seconds: secondsSince(started) };
  } finally {
    display.stop();
  }
}

/** The one line of a backfill phase: what it stored, and its errors. */
function logPhase(
  logger: Logger,
  { results, seconds }: PhaseResult,
  what: string,
  extra: Record<string, number>,
): void {
  const sum = (pick: (result: BackfillResult) => number) =>
    results.reduce((total, result) => total + pick(result), 0);
  const errors = results.flatMap((result) => result.errors);
  const fields = {
    ...extra,
    seconds,
    chunks: sum((result) => result.chunks),
    skipped: sum((result) => result.skipped),
    pointsStored: sum((result) => result.pointsStored),
    forecastsStored: sum((result) => result.forecastsStored),
    flowsStored: sum((result) => result.flowsStored ?? 0),
    errors: errors.length,
  };
  const line =
    `${what} done in ${seconds} s: ${fields.chunks} chunks ` +
    `(${fields.skipped} already stored), ${fields.pointsStored} points stored, ` +
    `${fields.forecastsStored} upstream forecasts stored` +
    (fields.flowsStored > 0 ? `, ${fields.flowsStored} flows stored` : '');
  if (errors.length === 0) logger.info(fields, line);
  else {
    logger.warn(
      { ...fields, firstError: errors[0] },
      `${line}, ${plural(errors.length, 'error')}; start the demo again to retry them`,
    );
  }
}

/** The demo's history: `days` up to the end of the hour in progress at `nowMs`. */
export function historyWindow(days: number, nowMs: number): TimeWindow {
  const toTs = floorToHour(nowMs / 1000) + HOUR;
  return { fromTs: toTs - days * DAY, toTs };
}

/**
 * One job per zone where each zone is its own request, so the workers share the heavy ENTSO-E
 * load evenly; one job for a source whose zones come in the same requests (EIA). The sources
 * with fewest jobs go first, so that every source is under way at once.
 */
function zoneJobs(adapters: readonly SourceAdapter[]): BackfillJob[] {
  return adapters
    .map(({ source, zones, zonesShareRequests }): BackfillJob[] => {
      const codes = zones.map((zone) => zone.code);
      return zonesShareRequests
        ? [{ source, zones: codes }]
        : codes.map((code) => ({ source, zones: [code] }));
    })
    .sort((a, b) => a.length - b.length)
    .flat();
}

/**
 * One process per core, and at least one per source so that all three are under way at once;
 * more than eight would mostly wait for the one simulator thread.
 */
function backfillWorkers(): number {
  return Math.min(8, Math.max(SOURCES.length, availableParallelism()));
}

function secondsSince(startMs: number): number {
  return Math.round((performance.now() - startMs) / 100) / 10;
}
