import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, type Metric, Registry } from 'prom-client';
import { BASES, type Basis } from '../../core/factors.js';
import { assessFreshness } from '../../core/freshness.js';
import type { DeliveryOutcome } from '../../core/webhooks/backoff.js';
import type { IngestReport, ZoneReading } from '../../core/reading.js';
import { HOUR } from '../../core/time.js';
import type { ReadingCache } from '../../read/reading-cache.js';
import type { Reads } from '../../read/reads.js';
import type { DataResponder } from '../transport/data-responder.js';
import { GRID_INTENSITY_GO_UNIT, round1, UNIT } from '../../core/units.js';
import type { LimitState, RateLimiter } from '../transport/rate-limiter.js';
import { type MetricsAccess, serveMetrics } from '../transport/metrics-access.js';
import { SOURCE_INFO, SOURCES, type SourceId } from '../../core/sources.js';

/**
 * `GET /metrics` (extensions §8): the service's own metrics in the Prometheus text format, and
 * the newest intensity of every zone under the metric name grid-intensity-go exporters use
 * (`grid_intensity_carbon_average`), so dashboards built on them work. docs/deploy.md lists every
 * metric, a scrape configuration and alert rules.
 *
 * Two kinds of figures, kept apart so that serving pays almost nothing:
 * - counted as things happen (requests, refusals, ingestion runs of this process): a request
 *   costs two clock reads, a map update and a bucket count; the counters are plain numbers
 *   copied into the registry at scrape time;
 * - read at scrape time, in `collect()` callbacks (zone lags, newest intensities, cache sizes,
 *   the stored ingestion reports, connections): nothing is updated per request for them.
 *
 * Each app has its own registry (tests run several apps in one process); the process metrics
 * (CPU, memory, event loop, GC) are one registry per process, merged into each app's output.
 */

/** Latency buckets in seconds: a body from memory takes well under 1 ms, 5000 rows from a store tens. */
export const LATENCY_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

/** Routes whose response lasts as long as the client stays: their duration is no latency. */
const LONG_LIVED_ROUTES: ReadonlySet<string> = new Set(['/v1/stream']);

/** The route label of a request that matches no route: the raw path would make a series per URL. */
const UNMATCHED_ROUTE = 'unmatched';

/** The status label of a request that got no response (the client or the guard closed first). */
const NO_RESPONSE = 0;

/** How an ingestion run ended, from its report (docs/deploy.md, "Metrics and alerts"). */
export type RunOutcome = 'ok' | 'partial' | 'failed' | 'not_configured';
const RUN_OUTCOMES: readonly RunOutcome[] = ['ok', 'partial', 'failed', 'not_configured'];

/**
 * `ok`: no error; `partial`: errors, but some zones were read; `failed`: no zone read and errors
 * (the upstream is down or refuses us); `not_configured`: the source's key is not set.
 */
export function runOutcome(report: IngestReport): RunOutcome {
  if (report.failures?.some((failure) => failure.kind === 'not-configured')) {
    return 'not_configured';
  }
  if (report.errors.length === 0) return 'ok';
  return report.zones > 0 ? 'partial' : 'failed';
}

interface RouteTally {
  /** Responses by status code (NO_RESPONSE: none). */
  readonly statuses: Map<number, number>;
  readonly latency: RouteLatency | undefined;
}

/** One route's latencies: a count per bucket (not cumulative; above the last, none), sum, count. */
class RouteLatency {
  readonly counts = new Float64Array(LATENCY_BUCKETS.length);
  sum = 0;
  count = 0;

  observe(seconds: number): void {
    let bucket = 0;
    while (bucket < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[bucket]!) bucket++;
    if (bucket < LATENCY_BUCKETS.length) this.counts[bucket]!++;
    this.sum += seconds;
    this.count++;
  }
}

/**
 * `gridco2_http_request_duration_seconds`, counted here rather than by prom-client's Histogram,
 * whose labelled `observe` costs about 0.4 us (it hashes the labels and keys each bucket by its
 * bound as a string): 2-3 % of a cached response's whole cost (issue 21). The registry reads it
 * as it reads its own metrics (`get`), and the exposition is the same as prom-client's.
 */
export class LatencyHistogram {
  readonly name = 'gridco2_http_request_duration_seconds';
  readonly help =
    'Time from receiving a request to the end of its response, by route (event streams ' +
    'left out: they last as long as the client stays).';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly routes = new Map<string, RouteLatency>();

  of(route: string): RouteLatency {
    let latency = this.routes.get(route);
    if (!latency) this.routes.set(route, (latency = new RouteLatency()));
    return latency;
  }

  async get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] =
      [];
    for (const [route, latency] of this.routes) {
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((le, bucket) => {
        cumulative += latency.counts[bucket]!;
        values.push({
          labels: { le, route },
          value: cumulative,
          metricName: `${this.name}_bucket`,
        });
      });
      values.push(
        { labels: { le: '+Inf', route }, value: latency.count, metricName: `${this.name}_bucket` },
        { labels: { route }, value: latency.sum, metricName: `${this.name}_sum` },
        { labels: { route }, value: latency.count, metricName: `${this.name}_count` },
      );
    }
    const { name, help, type, aggregator } = this;
    return { name, help, type, aggregator, values };
  }
}

/**
 * What this app counts as it serves: created first in `buildApp` (the limiter and the node:http
 * handler use it), given its scrape-time collectors by `registerMetrics`.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  /** The paths of the registered routes: the only route labels besides `unmatched`. */
  private readonly routes = new Set<string>();
  private readonly tallies = new Map<string, RouteTally>();
  private rateLimited = 0;
  private readonly latency = new LatencyHistogram();
  private readonly runs: Counter<'source' | 'outcome'>;
  private readonly lastSuccess: Gauge<'source'>;
  private readonly pointsStored: Counter<'source'>;
  private readonly incompleteIntervals: Counter<'source'>;
  private readonly webhookDeliveries: Counter<'outcome'>;
  private readonly runListeners: (() => void)[] = [];

  constructor() {
    const registers = [this.registry];
    const tallies = this.tallies;
    new Counter({
      name: 'gridco2_http_requests_total',
      help:
        'HTTP requests answered, by route (a registered path, else "unmatched") and status ' +
        '("0": no response was sent); the fast path included. Counted when the response ends.',
      labelNames: ['route', 'status'] as const,
      registers,
      collect() {
        this.reset();
        for (const [route, tally] of tallies) {
          for (const [status, count] of tally.statuses) {
            this.inc({ route, status: String(status) }, count);
          }
        }
      },
    });
    // Not one of prom-client's classes, though the registry asks no more of it than of them.
    this.registry.registerMetric(this.latency as unknown as Metric);
    const limited = () => this.rateLimited;
    new Counter({
      name: 'gridco2_http_rate_limited_total',
      help: 'Requests refused with 429 by the per-client rate limit (RATE_LIMIT_PER_MINUTE).',
      registers,
      collect() {
        this.reset();
        this.inc(limited());
      },
    });
    // Counted by this process as things happen, unlike the two above, counted when scraped.
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
      new Counter({ name, help, labelNames, registers });
    this.runs = counter(
      'gridco2_ingest_runs_total',
      'Ingestion runs this process made (it holds the ingestion lease), by source and outcome: ' +
        'ok, partial (some zones failed), failed (no zone read, or the run threw).',
      ['source', 'outcome'],
    );
    for (const source of SOURCES) {
      // Present from the start at zero, so that rate() and absence alerts see every series.
      for (const outcome of ['ok', 'partial', 'failed'] as const) {
        this.runs.inc({ source, outcome }, 0);
      }
    }
    this.lastSuccess = new Gauge({
      name: 'gridco2_ingest_last_success_timestamp_seconds',
      help:
        'When the last run of the source by this process that read at least one zone (ok or ' +
        'partial) finished, in Unix seconds. Absent until this process ran one.',
      labelNames: ['source'] as const,
      registers,
    });
    this.pointsStored = counter(
      'gridco2_ingest_points_stored_total',
      'Points written by the ingestion runs of this process, by source.',
      ['source'],
    );
    this.webhookDeliveries = counter(
      'gridco2_webhook_deliveries_total',
      'Webhook delivery attempts this process made (it held the webhooks lease), by outcome: ' +
        'delivered (2xx), failed (retried later), dropped (failing 24 hours after the event: ' +
        'given up).',
      ['outcome'],
    );
    this.incompleteIntervals = counter(
      'gridco2_ingest_incomplete_intervals_total',
      'Intervals the ingestion runs of this process stored as incomplete (a mix lacking data: ' +
        'not published), by source. Named intervals, not hours: the value is a count.',
      ['source'],
    );
  }

  /**
   * Counts a request whose response closed; `started` is `performance.now()` when it arrived. The
   * node:http handler calls it for every request: refused, fast path and framework alike.
   */
  responded(request: IncomingMessage, response: ServerResponse, started: number): void {
    const tally = this.tallyOf(routeOf(request.url, this.routes));
    const status = response.headersSent ? response.statusCode : NO_RESPONSE;
    tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
    tally.latency?.observe((performance.now() - started) / 1000);
  }

  /** The same limiter, counting the requests it refuses. */
  countRefusals(limiter: RateLimiter): RateLimiter {
    const count = (state: LimitState) => {
      if (!state.allowed) this.rateLimited++;
      return state;
    };
    return {
      hit: (key, weight) => {
        const state = limiter.hit(key, weight);
        return state instanceof Promise ? state.then(count) : count(state);
      },
    };
  }

  /** A run of the ingestion scheduler in this process ended: with its report, or it threw. */
  recordIngestRun(source: SourceId, report: IngestReport | undefined): void {
    for (const listener of this.runListeners) listener();
    const outcome = report ? runOutcome(report) : 'failed';
    this.runs.inc({ source, outcome });
    if (!report) return;
    if (outcome === 'ok' || outcome === 'partial') {
      this.lastSuccess.set({ source }, report.finishedAt);
    }
    this.pointsStored.inc({ source }, report.pointsStored);
    this.incompleteIntervals.inc({ source }, report.incompleteHours);
  }

  /** A webhook delivery attempt of this process ended. */
  recordWebhookDelivery(outcome: DeliveryOutcome): void {
    this.webhookDeliveries.inc({ outcome });
  }

  /** Calls `listener` when a run of this process ends (its report is stored by then). */
  onIngestRun(listener: () => void): void {
    this.runListeners.push(listener);
  }

  /** Route paths become labels as they are registered; parametric ones would not match a path. */
  knowRoute(url: string): void {
    if (!url.includes('*') && !url.includes(':')) this.routes.add(url);
  }

  private tallyOf(route: string): RouteTally {
    let tally = this.tallies.get(route);
    if (!tally) {
      tally = {
        statuses: new Map(),
        latency: LONG_LIVED_ROUTES.has(route) ? undefined : this.latency.of(route),
      };
      this.tallies.set(route, tally);
    }
    return tally;
  }
}

/** The route a request URL names, as the router matches it (a trailing slash ignored). */
function routeOf(url: string | undefined, routes: ReadonlySet<string>): string {
  if (url === undefined) return UNMATCHED_ROUTE;
  const mark = url.indexOf('?');
  let path = mark < 0 ? url : url.slice(0, mark);
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return routes.has(path) ? path : UNMATCHED_ROUTE;
}

export interface MetricsSources {
  readonly reads: Reads;
  readonly responder: DataResponder;
  /** The reading cache, for the sizes of what it holds. */
  readonly cache: ReadingCache | undefined;
  /** Milliseconds since the epoch: the app's clock, so that lags agree with /v1/status. */
  readonly clock: () => number;
  /** Who may scrape: a bearer token on the public listener, and/or a listener of its own. */
  readonly access: MetricsAccess;
}

/** How often the figures a scrape cannot take from memory are read from the store. */
const REFRESH_MS = 5000;

/** What one scrape reads from memory or the store, shared by every collector of that scrape. */
interface Snapshot {
  readonly nowSeconds: number;
  /** False when the store (or the memory following it) could not answer. */
  readonly storeUp: boolean;
  /** Newest reading per zone, on the default basis and on each basis, as served. */
  readonly latest: Readonly<Record<'default' | Basis, readonly ZoneReading[]>>;
  readonly reports: Partial<Record<SourceId, IngestReport>>;
}

const NO_READINGS = { default: [], lifecycle: [], direct: [] } as const;

/**
 * Registers `GET /metrics` and the collectors read at scrape time. Call it before the other
 * routes: the route labels are taken from the routes registered after it.
 */
export function registerMetrics(
  app: FastifyInstance,
  metrics: ServiceMetrics,
  sources: MetricsSources,
): void {
  app.addHook('onRoute', (route) => metrics.knowRoute(route.url));
  const registers = [metrics.registry];
  const { cache } = sources;
  // A scrape reads memory only: what the reading cache holds, and what a timer last read from
  // the store (the ingestion reports; the latest readings while the cache is not ready).
  const held = new HeldFigures(sources);
  // A run of this process stored a report: read it now rather than at the next tick.
  metrics.onIngestRun(() => held.refreshNow());
  app.addHook('onClose', async () => held.stop());
  const snapshot = () => held.snapshot();

  new Gauge({
    name: 'grid_intensity_carbon_average',
    help:
      `Newest carbon intensity of each zone, as /v1/intensity/latest serves it (${UNIT}; ` +
      'the name and labels of grid-intensity-go exporters). basis: "default" (each zone\'s own ' +
      'value, the GB operator\'s for GB), "lifecycle" or "direct".',
    labelNames: ['location', 'provider', 'units', 'basis'] as const,
    registers,
    async collect() {
      const { latest } = await snapshot();
      this.reset();
      for (const basis of ['default', ...BASES] as const) {
        for (const reading of latest[basis]) {
          this.set(
            { location: reading.zone, provider: 'gridco2', units: GRID_INTENSITY_GO_UNIT, basis },
            round1(reading.value),
          );
        }
      }
    },
  });
  new Gauge({
    name: 'gridco2_zone_lag_seconds',
    help:
      'Seconds from the start of the newest reading of each zone (default basis) to now; ' +
      'zones without a reading are left out.',
    labelNames: ['zone', 'source'] as const,
    registers,
    async collect() {
      const { latest, nowSeconds } = await snapshot();
      this.reset();
      for (const reading of latest.default) {
        const source = sources.reads.zones.find(reading.zone)?.source;
        if (source) this.set({ zone: reading.zone, source }, nowSeconds - reading.ts);
      }
    },
  });
  new Gauge({
    name: 'gridco2_source_fresh',
    help:
      '1 when the freshest zone of the source is within its stale threshold, as "ok" of a ' +
      'source in /v1/status; 0 otherwise (and while the store cannot be read).',
    labelNames: ['source'] as const,
    registers,
    async collect() {
      const { latest, reports, nowSeconds } = await snapshot();
      const newest = new Map(latest.default.map((reading) => [reading.zone, reading.ts]));
      const served = sources.reads.zones.zones;
      for (const source of assessFreshness(newest, reports, nowSeconds, served).sources) {
        this.set({ source: source.source }, source.ok ? 1 : 0);
      }
    },
  });
  const staleAfter = new Gauge({
    name: 'gridco2_source_stale_after_seconds',
    help: 'The lag past which a source counts as stale in /v1/status.',
    labelNames: ['source'] as const,
    registers,
  });
  for (const source of SOURCES) {
    staleAfter.set({ source }, SOURCE_INFO[source].staleAfterHours * HOUR);
  }
  new Gauge({
    name: 'gridco2_forecast_ready',
    help: '1 once forecasts of every zone have been prepared since start, else 0.',
    registers,
    collect() {
      this.set(app.forecasts.ready === false ? 0 : 1);
    },
  });
  new Gauge({
    name: 'gridco2_forecast_computing',
    help:
      '1 while this process prepares forecasts or runs the walk-forward backtest (on its worker ' +
      'thread), else 0.',
    registers,
    collect() {
      this.set(app.forecasts.computing === true ? 1 : 0);
    },
  });
  new Gauge({
    name: 'gridco2_store_up',
    help:
      '1 when the store (or the memory following it) answered its last read for these metrics ' +
      '(every 5 s, not per scrape), else 0.',
    registers,
    async collect() {
      this.set((await snapshot()).storeUp ? 1 : 0);
    },
  });

  // The stored reports: every instance shows the newest run of each source, whoever ran it.
  const eachReport = async (
    gauge: { reset(): void },
    set: (source: SourceId, report: IngestReport) => void,
  ) => {
    const { reports } = await snapshot();
    gauge.reset();
    for (const source of SOURCES) {
      const report = reports[source];
      if (report) set(source, report);
    }
  };
  const reportGauge = (name: string, help: string, pick: (report: IngestReport) => number) =>
    new Gauge({
      name: `gridco2_ingest_report_${name}`,
      help: `${help}, from the newest stored ingestion report of the source (any instance's run).`,
      labelNames: ['source'] as const,
      registers,
      async collect() {
        await eachReport(this, (source, report) => this.set({ source }, pick(report)));
      },
    });
  reportGauge(
    'finished_timestamp_seconds',
    'When the run finished, in Unix seconds',
    (report) => report.finishedAt,
  );
  reportGauge('errors', 'Errors of the run', (report) => report.errors.length);
  reportGauge('zones', 'Zones the run read', (report) => report.zones);
  reportGauge('points_stored', 'Points the run wrote', (report) => report.pointsStored);
  reportGauge(
    'incomplete_intervals',
    'Intervals the run stored as incomplete (not published; a count, not a duration)',
    (report) => report.incompleteHours,
  );
  new Gauge({
    name: 'gridco2_ingest_report_outcome',
    help:
      '1 for the outcome of the newest stored ingestion report of the source (ok, partial, ' +
      'failed, not_configured), 0 for the others.',
    labelNames: ['source', 'outcome'] as const,
    registers,
    async collect() {
      await eachReport(this, (source, report) => {
        const outcome = runOutcome(report);
        for (const each of RUN_OUTCOMES) {
          this.set({ source, outcome: each }, each === outcome ? 1 : 0);
        }
      });
    },
  });

  // Memory: what the reading cache and the response cache hold.
  new Gauge({
    name: 'gridco2_zone_points',
    help: 'Published points of each zone held in memory (default basis); absent until loaded.',
    labelNames: ['zone'] as const,
    registers,
    collect() {
      this.reset();
      if (!cache?.ready) return;
      for (const zone of sources.reads.zones.zones) {
        this.set({ zone: zone.code }, cache.zone(zone.code)?.length ?? 0);
      }
    },
  });
  new Gauge({
    name: 'gridco2_reading_cache_points',
    help:
      'Points held in memory per basis series set ("default", "lifecycle", "direct"; a zone ' +
      'whose own value is its lifecycle value shares one series between the two).',
    labelNames: ['basis'] as const,
    registers,
    collect() {
      this.reset();
      if (!cache?.ready) return;
      for (const basis of ['default', ...BASES] as const) {
        let points = 0;
        // Every series held: with ZONES=all, the flow graphs' nodes too.
        for (const zone of cache.zones) {
          points += cache.zone(zone.code, basis === 'default' ? undefined : basis)?.length ?? 0;
        }
        this.set({ basis }, points);
      }
    },
  });
  new Gauge({
    name: 'gridco2_reading_cache_ready',
    help: '1 when the readings are loaded in memory and the store follows, else 0 (served from the store).',
    registers,
    collect() {
      this.set(sources.responder.cached ? 1 : 0);
    },
  });
  new Gauge({
    name: 'gridco2_response_cache_bytes',
    help: 'Heap bytes of encoded response bodies kept for reuse, compressed variants included.',
    registers,
    collect() {
      this.set(app.servingStats().cachedBodyBytes);
    },
  });
  new Counter({
    name: 'gridco2_response_bodies_encoded_total',
    help: 'Response bodies encoded (not taken from the response cache).',
    registers,
    collect() {
      this.reset();
      this.inc(app.servingStats().bodiesEncoded);
    },
  });
  new Counter({
    name: 'gridco2_response_encoded_bytes_total',
    help: 'Bytes of the response bodies encoded.',
    registers,
    collect() {
      this.reset();
      this.inc(app.servingStats().bytesEncoded);
    },
  });

  // Connections and streams.
  new Gauge({
    name: 'gridco2_http_open_connections',
    help: 'Open client connections.',
    registers,
    collect() {
      this.set(app.servingStats().openConnections);
    },
  });
  new Counter({
    name: 'gridco2_http_refused_total',
    help:
      'Connections closed or requests refused by the connection guard to stay answerable, by ' +
      'rule (connection_cap, per_address_cap, too_many_pipelined_requests, unread_responses, ' +
      'unread_responses_in_all).',
    labelNames: ['reason'] as const,
    registers,
    collect() {
      this.reset();
      for (const [reason, count] of Object.entries(app.servingStats().refused)) {
        this.inc({ reason: reason.replace(/[^a-z]+/g, '_') }, count);
      }
    },
  });
  new Gauge({
    name: 'gridco2_streams_open',
    help: 'Open /v1/stream event streams in this process.',
    registers,
    collect() {
      this.set(app.streamStats().open);
    },
  });

  const registry = Registry.merge([metrics.registry, processRegistry()]);
  serveMetrics(app, registry, sources.access);
}

/**
 * The figures of the last read through the read layer, refreshed every REFRESH_MS by a timer
 * (never by a scrape); the latest readings come from memory whenever it answers.
 */
class HeldFigures {
  private last: Omit<Snapshot, 'nowSeconds'> = {
    storeUp: false,
    latest: NO_READINGS,
    reports: {},
  };
  /** The read under way or last made: a scrape waits for it rather than show older figures. */
  private reading: Promise<void>;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly sources: MetricsSources) {
    this.reading = this.refresh();
    this.timer = setInterval(() => this.refreshNow(), REFRESH_MS);
    this.timer.unref();
  }

  refreshNow(): void {
    this.reading = this.refresh();
  }

  async snapshot(): Promise<Snapshot> {
    await this.reading;
    const nowSeconds = Math.floor(this.sources.clock() / 1000);
    const memory = this.sources.reads.memory;
    if (!memory) return { nowSeconds, ...this.last };
    // As /v1/intensity/latest serves each basis.
    const latest = {
      default: memory.latestNow(undefined),
      lifecycle: memory.latestNow('lifecycle'),
      direct: memory.latestNow('direct'),
    };
    return { nowSeconds, ...this.last, latest };
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async refresh(): Promise<void> {
    const { reads } = this.sources;
    try {
      // While memory answers, the latest readings are taken from it at each scrape instead.
      const model = reads.current();
      const fromStore = !model.inMemory;
      const latestOn = async (basis: Basis | undefined) => (fromStore ? model.latest(basis) : []);
      const [byDefault, lifecycle, direct, reports] = await Promise.all([
        latestOn(undefined),
        latestOn('lifecycle'),
        latestOn('direct'),
        reads.ingestReports(),
      ]);
      this.last = { storeUp: true, latest: { default: byDefault, lifecycle, direct }, reports };
    } catch {
      this.last = { storeUp: false, latest: NO_READINGS, reports: {} };
    }
  }
}

let processMetrics: Registry | undefined;

/**
 * CPU, memory, file descriptors, event loop lag, GC: one set per process (each set starts its
 * own event-loop and GC observers), shared by every app in it.
 */
function processRegistry(): Registry {
  if (processMetrics) return processMetrics;
  processMetrics = new Registry();
  collectDefaultMetrics({ register: processMetrics });
  // Gauges named like counters (promtool: 'non-counter metrics should not have "_total"
  // suffix'); the same totals are the sums of nodejs_active_handles and its siblings.
  for (const name of [
    'nodejs_active_handles_total',
    'nodejs_active_requests_total',
    'nodejs_active_resources_total',
  ]) {
    processMetrics.removeSingleMetric(name);
  }
  return processMetrics;
}
