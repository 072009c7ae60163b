import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/http/app.js';
import type { IngestReport, StoredReading } from '../src/core/reading.js';
import { runOutcome } from '../src/http/routes/metrics.js';
import { reportDisabledSource } from '../src/ingest/run-ingestion.js';
import { startServer, type RunningServer } from '../src/server.js';
import type { Clock } from '../src/core/time.js';
import { createStore } from '../src/storage/create-store.js';
import type { Store } from '../src/storage/store.js';
import { computed, DE, DE_LAST, H, HOUR_NOW, NOW, NOW_S, US_LAST } from './support/fixed-store.js';
import { fillFixedStoreWithBacktest } from './support/fixed-backtest.js';
import { createThrowawayDatabase, isPostgresAvailable } from './support/postgres.js';
import { prometheusTools } from './support/prometheus.js';
import { startReplayUpstreams, type ReplayUpstreams } from './support/replay-upstreams.js';

/**
 * Black-box suite of `GET /metrics` (extensions §8) over real HTTP, on SQLite and PostgreSQL,
 * from memory and from the store: the output passes `promtool check metrics`, its figures agree
 * with what the API serves, every request is counted (the fast path's too), and a real Prometheus
 * server scrapes it and evaluates the alert rules of docs/deploy.md against it.
 */

const METRICS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const DEPLOY_MD = readFileSync(
  fileURLToPath(new URL('../docs/deploy.md', import.meta.url)),
  'utf8',
);

const tools = prometheusTools();
const { promtool, prometheus } = tools;
if (tools.missing) {
  // Never skipped under CI=true; elsewhere one line says which checks do not run, and why.
  if (process.env['CI'] === 'true') throw new Error(`metrics suite: ${tools.missing} (CI=true)`);
  console.warn(
    `metrics suite: promtool and real-Prometheus checks do not run here: ${tools.missing}`,
  );
} else {
  console.info(`metrics suite: Prometheus checks with ${tools.origin}`);
}

const postgres = await isPostgresAvailable('metrics suite (PostgreSQL)');
const backends = ['sqlite', ...(postgres ? ['postgres'] : [])] as const;
type Backend = (typeof backends)[number];

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The samples of a text exposition; every line that is not a comment must be one. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    expect(match, `a sample line: ${line}`).not.toBeNull();
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match![2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[name!] = value!.replace(/\\(.)/g, (_all, char: string) =>
        char === 'n' ? '\n' : char,
      );
    }
    samples.push({ name: match![1]!, labels, value: Number(match![3]) });
  }
  return samples;
}

/** The samples of `name` whose labels include `labels`. */
function select(samples: readonly Sample[], name: string, labels: Record<string, string> = {}) {
  return samples.filter(
    (sample) =>
      sample.name === name &&
      Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
}

/** The one value of `name` with `labels`; undefined when there is none. */
function valueOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}) {
  const found = select(samples, name, labels);
  expect(found.length, `${name} ${JSON.stringify(labels)} at most once`).toBeLessThanOrEqual(1);
  return found[0]?.value;
}

async function scrape(baseUrl: string): Promise<Sample[]> {
  const response = await fetch(`${baseUrl}/metrics`, BEARER);
  expect(response.status).toBe(200);
  return parseExposition(await response.text());
}

/** Polls `check` until it passes (counters move when a response ends, just after the client has it). */
async function eventually(check: () => Promise<void>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

const report = (source: IngestReport['source'], fields: Partial<IngestReport>): IngestReport => ({
  source,
  startedAt: NOW_S - 900,
  finishedAt: NOW_S - 600,
  zones: 0,
  pointsStored: 0,
  incompleteHours: 0,
  errors: [],
  quality: [],
  failures: [],
  zonesWithoutData: [],
  ...fields,
});
const EUROPE_OK = report('europe-tso', { zones: 33, pointsStored: 2376, incompleteHours: 4 });
const US_FAILED = report('us-agency', {
  finishedAt: NOW_S - 1200,
  errors: ['US-MISO, US-PJM: HTTP 503'],
  failures: [{ kind: 'server-error', zones: ['US-MISO', 'US-PJM'] }],
});

interface Database {
  readonly url: string;
  drop(): Promise<void>;
}

async function createDatabase(backend: Backend, fill: (store: Store) => Promise<void>) {
  let database: Database;
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'gridco2-metrics-'));
    database = {
      url: `sqlite:${join(dir, 'metrics.db')}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  } else {
    database = await createThrowawayDatabase();
  }
  const store = await createStore(database.url);
  await fill(store);
  await store.close();
  return database;
}

/**
 * The scrapes below go to the public listener (METRICS_ADDR=public) with the token; the default,
 * a listener of its own, is tested on its own port below.
 */
const METRICS_TOKEN = 'metrics-test-token';
const BEARER = { headers: { authorization: `Bearer ${METRICS_TOKEN}` } };

function serve(databaseUrl: string, cache: 'ready' | 'off', env: Record<string, string> = {}) {
  const config = loadConfig({
    PORT: '0',
    METRICS_ADDR: 'public',
    METRICS_TOKEN,
    DATABASE_URL: databaseUrl,
    INGEST: 'off',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '1000000',
    ...env,
  });
  return startServer(config, { clock: () => NOW, cache });
}

const cases = backends.flatMap((backend) =>
  (['ready', 'off'] as const).map((cache) => ({ backend, cache })),
);

describe.each(cases)('GET /metrics on $backend, reading cache $cache', ({ backend, cache }) => {
  let database: Database | undefined;
  let server: RunningServer;

  beforeAll(async () => {
    database = await createDatabase(backend, async (store) => {
      await fillFixedStoreWithBacktest(store);
      await store.recordIngestReport(EUROPE_OK);
      await store.recordIngestReport(US_FAILED);
      await reportDisabledSource(store, 'uk-operator', 'a test', {
        now: () => NOW,
        sleep: async () => undefined,
      });
    });
    server = await serve(database.url, cache);
  });
  afterAll(async () => {
    await server?.close();
    await database?.drop();
  });

  it.runIf(promtool)(
    'is the Prometheus text format, and promtool check metrics accepts it',
    async () => {
      // One request answered first, so that the request families have samples to check.
      await (await fetch(`${server.url}/v1/zones`)).text();
      await eventually(async () => {
        const samples = await scrape(server.url);
        expect(select(samples, 'gridco2_http_requests_total').length).toBeGreaterThan(0);
      });
      const response = await fetch(`${server.url}/metrics`, BEARER);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(METRICS_TYPE);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      const text = await response.text();
      const checked = spawnSync(promtool!, ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(`${checked.stdout}${checked.stderr}`).toBe('');
      expect(checked.status).toBe(0);
      // The families the spec names, the process metrics among them.
      const names = new Set(parseExposition(text).map((sample) => sample.name));
      for (const name of [
        'gridco2_http_requests_total',
        'gridco2_http_request_duration_seconds_bucket',
        'gridco2_http_rate_limited_total',
        'gridco2_streams_open',
        'gridco2_ingest_runs_total',
        'gridco2_zone_lag_seconds',
        'gridco2_ingest_report_incomplete_intervals',
        'gridco2_response_cache_bytes',
        'grid_intensity_carbon_average',
        'gridco2_forecast_ready',
        'gridco2_forecast_computing',
        'process_cpu_seconds_total',
        'nodejs_eventloop_lag_seconds',
      ]) {
        expect(names, name).toContain(name);
      }
    },
  );

  it('has the newest intensity of every zone on each basis, as /v1/intensity/latest serves it', async () => {
    const samples = await scrape(server.url);
    for (const basis of ['default', 'lifecycle', 'direct']) {
      const query = basis === 'default' ? '' : `?basis=${basis}`;
      const response = await fetch(`${server.url}/v1/intensity/latest${query}`);
      const served = ((await response.json()) as { data: { zone: string; gco2eq_kwh: number }[] })
        .data;
      expect(served.length).toBeGreaterThan(0);
      const exported = select(samples, 'grid_intensity_carbon_average', { basis });
      for (const sample of exported) {
        expect(sample.labels).toEqual({
          location: sample.labels['location'],
          provider: 'gridco2',
          units: 'gCO2e per kWh',
          basis,
        });
      }
      expect(
        Object.fromEntries(exported.map((sample) => [sample.labels['location'], sample.value])),
      ).toEqual(Object.fromEntries(served.map((reading) => [reading.zone, reading.gco2eq_kwh])));
    }
    // DE's newest value has many decimals in the store: the gauge carries the served one.
    expect(
      valueOf(samples, 'grid_intensity_carbon_average', { location: 'DE', basis: 'default' }),
    ).toBe(Number(DE.at(-1)!.value!.toFixed(1)));
  });

  it('counts every request by route and status, the fast path too, and never by raw URL', async () => {
    const before = await scrape(server.url);
    const count = (samples: Sample[], route: string, status: string) =>
      valueOf(samples, 'gridco2_http_requests_total', { route, status }) ?? 0;
    const latencies = (samples: Sample[], route: string) =>
      valueOf(samples, 'gridco2_http_request_duration_seconds_count', { route }) ?? 0;
    const statuses: number[] = [];
    for (const path of [
      '/v1/intensity/latest',
      '/v1/intensity/latest?zone=DE',
      '/v1/intensity/latest/',
      '/v1/zones',
      '/v1/no-such-thing?token=secret-1234',
    ]) {
      statuses.push((await fetch(`${server.url}${path}`)).status);
    }
    statuses.push(
      (
        await fetch(`${server.url}/metrics`, {
          ...BEARER,
          method: 'POST',
        })
      ).status,
    );
    expect(statuses).toEqual([200, 200, 200, 200, 404, 405]);

    await eventually(async () => {
      const after = await scrape(server.url);
      const delta = (route: string, status: string) =>
        count(after, route, status) - count(before, route, status);
      expect(delta('/v1/intensity/latest', '200')).toBe(3);
      expect(delta('/v1/zones', '200')).toBe(1);
      expect(delta('unmatched', '404')).toBe(1);
      expect(delta('/metrics', '405')).toBe(1);
      expect(
        latencies(after, '/v1/intensity/latest') - latencies(before, '/v1/intensity/latest'),
      ).toBe(3);
      // Every earlier scrape was counted when it ended.
      expect(delta('/metrics', '200')).toBeGreaterThanOrEqual(1);
      const routes = new Set(
        select(after, 'gridco2_http_requests_total').map((sample) => sample.labels['route']),
      );
      expect(
        [...routes].filter((route) => route!.includes('no-such') || route!.includes('?')),
      ).toEqual([]);
    });
  });

  it('says whether forecasts are prepared and whether their work runs, as the engine does', async () => {
    // A check of the engine's own, awaited: nothing runs after it until the next timer. The store
    // comes with the backtest the check would run first (support/fixed-backtest.ts).
    await server.forecasts.tick();
    const samples = await scrape(server.url);
    expect(valueOf(samples, 'gridco2_forecast_ready')).toBe(1);
    expect(valueOf(samples, 'gridco2_forecast_computing')).toBe(0);
  });

  it('has zone lags, freshness and points that agree with /v1/status and the store', async () => {
    const samples = await scrape(server.url);
    expect(valueOf(samples, 'gridco2_zone_lag_seconds', { zone: 'DE', source: 'europe-tso' })).toBe(
      NOW_S - DE_LAST,
    );
    expect(valueOf(samples, 'gridco2_zone_lag_seconds', { zone: 'US', source: 'us-agency' })).toBe(
      NOW_S - US_LAST,
    );
    // A zone without any reading has no lag series.
    expect(valueOf(samples, 'gridco2_zone_lag_seconds', { zone: 'PL' })).toBeUndefined();
    const status = (await (await fetch(`${server.url}/v1/status`)).json()) as {
      sources: { source: string; ok: boolean; stale_after_hours: number }[];
    };
    for (const source of status.sources) {
      expect(valueOf(samples, 'gridco2_source_fresh', { source: source.source })).toBe(
        source.ok ? 1 : 0,
      );
      expect(
        valueOf(samples, 'gridco2_source_stale_after_seconds', { source: source.source }),
      ).toBe(source.stale_after_hours * H);
    }
    expect(valueOf(samples, 'gridco2_store_up')).toBe(1);
    expect(valueOf(samples, 'gridco2_reading_cache_ready')).toBe(cache === 'ready' ? 1 : 0);
    // The incomplete DE hour is not published: not held either.
    expect(valueOf(samples, 'gridco2_zone_points', { zone: 'DE' })).toBe(
      cache === 'ready' ? DE.length - 1 : undefined,
    );
    expect(valueOf(samples, 'gridco2_streams_open')).toBe(0);
    expect(valueOf(samples, 'gridco2_http_open_connections')).toBeGreaterThanOrEqual(1);
  });

  it('shows the newest stored ingestion report of every source', async () => {
    const samples = await scrape(server.url);
    const of = (name: string, source: string) =>
      valueOf(samples, `gridco2_ingest_report_${name}`, { source });
    expect(of('finished_timestamp_seconds', 'europe-tso')).toBe(EUROPE_OK.finishedAt);
    expect(of('points_stored', 'europe-tso')).toBe(2376);
    expect(of('incomplete_intervals', 'europe-tso')).toBe(4);
    expect(of('zones', 'europe-tso')).toBe(33);
    expect(of('errors', 'us-agency')).toBe(1);
    const outcomes = select(samples, 'gridco2_ingest_report_outcome').filter(
      (sample) => sample.value === 1,
    );
    expect(
      Object.fromEntries(
        outcomes.map((sample) => [sample.labels['source'], sample.labels['outcome']]),
      ),
    ).toEqual({ 'europe-tso': 'ok', 'us-agency': 'failed', 'uk-operator': 'not_configured' });
    // This process ran nothing: its own run counters are zero, and no success is claimed.
    expect(select(samples, 'gridco2_ingest_runs_total').every((sample) => sample.value === 0)).toBe(
      true,
    );
    expect(select(samples, 'gridco2_ingest_last_success_timestamp_seconds')).toEqual([]);
  });

  it('answers HEAD and CORS preflight as /v1 does, and 405 to other methods', async () => {
    const head = await fetch(`${server.url}/metrics`, {
      ...BEARER,
      method: 'HEAD',
    });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(METRICS_TYPE);
    expect(await head.text()).toBe('');
    const preflight = await fetch(`${server.url}/metrics`, {
      ...BEARER,
      method: 'OPTIONS',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    const post = await fetch(`${server.url}/metrics`, {
      ...BEARER,
      method: 'DELETE',
    });
    expect(post.status).toBe(405);
    expect(post.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(((await post.json()) as { error: string }).error).toMatch(/method/i);
  });
});

describe('GET /metrics and the rate limit, and METRICS=off', () => {
  let database: Database;
  beforeAll(async () => {
    database = await createDatabase('sqlite', fillFixedStoreWithBacktest);
  });
  afterAll(async () => database?.drop());

  it('is never rate limited, and counts the requests the limit refuses', async () => {
    const server = await serve(database.url, 'ready', { RATE_LIMIT_PER_MINUTE: '2' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await fetch(`${server.url}/v1/zones`)).status);
      for (let i = 0; i < 3; i++) {
        statuses.push((await fetch(`${server.url}/v1/intensity/latest`)).status);
      }
      expect(statuses).toEqual([200, 200, 429, 429, 429, 429, 429]);
      for (let i = 0; i < 5; i++) {
        const response = await fetch(`${server.url}/metrics`, BEARER);
        expect(response.status).toBe(200);
        expect(response.headers.get('ratelimit-limit')).toBeNull();
        await response.text();
      }
      await eventually(async () => {
        const samples = await scrape(server.url);
        expect(valueOf(samples, 'gridco2_http_rate_limited_total')).toBe(5);
        expect(
          valueOf(samples, 'gridco2_http_requests_total', { route: '/v1/zones', status: '429' }),
        ).toBe(2);
        expect(
          valueOf(samples, 'gridco2_http_requests_total', {
            route: '/v1/intensity/latest',
            status: '429',
          }),
        ).toBe(3);
      });
    } finally {
      await server.close();
    }
  });

  it('is served on a listener of its own by default, not on the public one, there without a token', async () => {
    expect(loadConfig({}).metricsAddr).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(() => loadConfig({ METRICS_ADDR: '9464' })).toThrow('METRICS_ADDR must be host:port');
    const addr = `127.0.0.1:${await freePort()}`;
    const server = await serve(database.url, 'off', { METRICS_TOKEN: '', METRICS_ADDR: addr });
    try {
      const publicly = await fetch(`${server.url}/metrics`);
      expect(publicly.status).toBe(404);
      await publicly.text();
      const response = await fetch(`http://${addr}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(METRICS_TYPE);
      expect(await response.text()).toContain('grid_intensity_carbon_average{');
      const other = await fetch(`http://${addr}/v1/zones`);
      expect(other.status).toBe(404);
      await other.text();
    } finally {
      await server.close();
    }
  });

  it('logs where its own listener is, the port bound when METRICS_ADDR asks for port 0', async () => {
    const logs: { msg: string; metricsUrl?: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line) logs.push(JSON.parse(line));
        done();
      },
    });
    const server = await startServer(
      loadConfig({
        PORT: '0',
        DATABASE_URL: database.url,
        INGEST: 'off',
        METRICS_ADDR: '127.0.0.1:0',
      }),
      { clock: () => NOW, cache: 'off', logger: pino({ level: 'info' }, sink) },
    );
    try {
      const listening = logs.find((line) => line.msg === 'metrics listening');
      expect(listening?.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*\/metrics$/);
      const response = await fetch(listening!.metricsUrl!);
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('grid_intensity_carbon_average{');
    } finally {
      await server.close();
    }
  });

  it('on the public listener, METRICS_TOKEN asks for the exact bearer token', async () => {
    const server = await serve(database.url, 'ready');
    try {
      for (const authorization of [undefined, `Bearer ${METRICS_TOKEN}x`, METRICS_TOKEN]) {
        const response = await fetch(`${server.url}/metrics`, {
          headers: authorization ? { authorization } : {},
        });
        expect(response.status).toBe(401);
        expect(response.headers.get('www-authenticate')).toBe('Bearer');
        expect(((await response.json()) as { error: string }).error).toBe('metrics need a token');
      }
      expect((await fetch(`${server.url}/metrics`, BEARER)).status).toBe(200);
    } finally {
      await server.close();
    }
    const open = await serve(database.url, 'ready', { METRICS_TOKEN: '' });
    try {
      expect((await fetch(`${open.url}/metrics`)).status).toBe(200);
    } finally {
      await open.close();
    }
  });

  it('a scrape reads nothing from the store (the reading cache off: the hardest case)', async () => {
    const store = await createStore(database.url);
    let reads = 0;
    const counting = new Proxy(store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          reads++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const app = await buildApp({
      config: loadConfig({ DATABASE_URL: database.url, METRICS_ADDR: 'public', METRICS_TOKEN }),
      store: counting,
    });
    try {
      const first = await app.inject({ url: '/metrics', headers: BEARER.headers });
      expect(first.statusCode).toBe(200);
      expect(first.body).toContain('grid_intensity_carbon_average{');
      const before = reads;
      for (let i = 0; i < 20; i++) {
        expect((await app.inject({ url: '/metrics', headers: BEARER.headers })).statusCode).toBe(
          200,
        );
      }
      // The timer reads the store every 5 s (five reads), whatever the scrapes: at most once here.
      expect(reads - before).toBeLessThanOrEqual(5);
    } finally {
      await app.close();
      await store.close();
    }
  });

  it('METRICS=off serves no /metrics; the API is unchanged', async () => {
    const server = await serve(database.url, 'ready', { METRICS: 'off' });
    try {
      const response = await fetch(`${server.url}/metrics`, BEARER);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect((await fetch(`${server.url}/v1/intensity/latest?zone=DE`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('METRICS takes on or off', () => {
    expect(loadConfig({}).metrics).toBe(true);
    expect(loadConfig({ METRICS: 'OFF' }).metrics).toBe(false);
    expect(() => loadConfig({ METRICS: 'no' })).toThrow('METRICS must be one of on, off, got "no"');
  });
});

describe('ingestion runs of this process', () => {
  const ANCHOR = Date.UTC(2026, 10, 20, 12) / 1000;
  let replay: ReplayUpstreams;
  let database: Database;
  let server: RunningServer;
  const clock: Clock = { now: () => (ANCHOR + 600) * 1000, sleep: async () => undefined };

  beforeAll(async () => {
    replay = await startReplayUpstreams({ anchorTs: ANCHOR, entsoeToken: 't', eiaApiKey: 'k' });
    database = await createDatabase('sqlite', async () => undefined);
    const config = loadConfig({
      PORT: '0',
      METRICS_ADDR: 'public',
      METRICS_TOKEN,
      DATABASE_URL: database.url,
      LOG_LEVEL: 'silent',
      INGEST: 'on',
      NESO_BASE_URL: replay.nesoBaseUrl,
    });
    server = await startServer(config, {
      clock: () => (ANCHOR + 600) * 1000,
      cache: 'ready',
      ingestion: { clock, firstRunDelayMs: 0 },
    });
  });
  afterAll(async () => {
    await server?.close();
    await replay?.close();
    await database?.drop();
  });

  it('are counted by source and outcome, with the time of the last success', async () => {
    await eventually(async () => {
      const samples = await scrape(server.url);
      expect(
        valueOf(samples, 'gridco2_ingest_runs_total', { source: 'uk-operator', outcome: 'ok' }),
      ).toBe(1);
    });
    const samples = await scrape(server.url);
    const stored = (await server.store.latestIngestReports())['uk-operator']!;
    expect(
      valueOf(samples, 'gridco2_ingest_last_success_timestamp_seconds', { source: 'uk-operator' }),
    ).toBe(stored.finishedAt);
    expect(valueOf(samples, 'gridco2_ingest_points_stored_total', { source: 'uk-operator' })).toBe(
      stored.pointsStored,
    );
    expect(stored.pointsStored).toBeGreaterThan(0);
    if (promtool) {
      const text = await (await fetch(`${server.url}/metrics`, BEARER)).text();
      const checked = spawnSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(`${checked.stdout}${checked.stderr}`).toBe('');
    }
    // Sources without their key do not run: no run counted, their report says why.
    expect(
      valueOf(samples, 'gridco2_ingest_runs_total', { source: 'europe-tso', outcome: 'ok' }),
    ).toBe(0);
    expect(
      valueOf(samples, 'gridco2_ingest_report_outcome', {
        source: 'europe-tso',
        outcome: 'not_configured',
      }),
    ).toBe(1);

    // A run that threw has no report: failed, and the last success stays.
    server.app.recordIngestRun('uk-operator', undefined);
    const after = await scrape(server.url);
    expect(
      valueOf(after, 'gridco2_ingest_runs_total', { source: 'uk-operator', outcome: 'failed' }),
    ).toBe(1);
    expect(
      valueOf(after, 'gridco2_ingest_last_success_timestamp_seconds', { source: 'uk-operator' }),
    ).toBe(stored.finishedAt);
  });

  it.each([
    ['no error', {}, 'ok'],
    ['errors, some zones read', { zones: 2, errors: ['x'] }, 'partial'],
    ['errors, no zone read', { zones: 0, errors: ['x'] }, 'failed'],
    [
      'a source without its key',
      { errors: ['not configured: x'], failures: [{ kind: 'not-configured' as const, zones: [] }] },
      'not_configured',
    ],
  ])('a report with %s is %s', (_case, fields, outcome) => {
    expect(runOutcome(report('europe-tso', fields))).toBe(outcome);
  });
});

/** The fenced YAML block of docs/deploy.md that contains `marker`. */
function deployYaml(marker: string): string {
  const blocks = [...DEPLOY_MD.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1]!);
  const found = blocks.filter((block) => block.includes(marker));
  expect(found, `one yaml block of docs/deploy.md with ${marker}`).toHaveLength(1);
  return found[0]!;
}
const ALERT_RULES_FILE = 'gridco2-alerts.yml';

describe.runIf(promtool)('docs/deploy.md: the Prometheus configuration', () => {
  it('promtool check config and check rules accept the scrape configuration and alert rules', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gridco2-promtool-'));
    try {
      writeFileSync(join(dir, 'prometheus.yml'), deployYaml('scrape_configs:'));
      writeFileSync(join(dir, ALERT_RULES_FILE), deployYaml('groups:'));
      for (const args of [
        ['check', 'rules', ALERT_RULES_FILE],
        ['check', 'config', 'prometheus.yml'],
      ]) {
        const checked = spawnSync(promtool!, args, { cwd: dir, encoding: 'utf8' });
        expect(
          checked.status,
          `promtool ${args.join(' ')}: ${checked.stdout}${checked.stderr}`,
        ).toBe(0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

interface PrometheusAlertRule {
  readonly name: string;
  readonly health: string;
  readonly lastError?: string;
  readonly alerts: readonly { labels: Record<string, string>; state: string }[];
}

describe.runIf(prometheus).each(backends)('a real Prometheus scraping gridco2 on %s', (backend) => {
  let database: Database | undefined;
  let server: RunningServer;
  let child: ChildProcess | undefined;
  let dir: string;
  let prometheusUrl: string;
  let stderr = '';

  beforeAll(async () => {
    // DE is fresh; the US source failed its last run and has no data; GB is not configured.
    const de: StoredReading[] = [0, 1, 2].map((i) =>
      computed('DE', HOUR_NOW - (3 - i) * H, 280.26 + i),
    );
    database = await createDatabase(backend, async (store) => {
      await store.upsertReadings(de);
      await store.recordIngestReport(US_FAILED);
      await reportDisabledSource(store, 'uk-operator', 'a test', {
        now: () => NOW,
        sleep: async () => undefined,
      });
    });
    // Scraped on the metrics listener of its own, as docs/deploy.md sets it up.
    const target = `127.0.0.1:${await freePort()}`;
    server = await serve(database.url, 'ready', { METRICS_ADDR: target, METRICS_TOKEN: '' });
    dir = mkdtempSync(join(tmpdir(), 'gridco2-prometheus-'));
    writeFileSync(join(dir, ALERT_RULES_FILE), deployYaml('groups:'));
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'rule_files:',
        `  - ${join(dir, ALERT_RULES_FILE)}`,
        'scrape_configs:',
        '  - job_name: gridco2',
        '    static_configs:',
        `      - targets: ['${target}']`,
        '',
      ].join('\n'),
    );
    const address = `127.0.0.1:${await freePort()}`;
    prometheusUrl = `http://${address}`;
    // Local only: no remote write, no service discovery beyond the one static target.
    child = spawn(
      prometheus!,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=${address}`,
        '--log.level=warn',
      ],
      { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child.stderr!.on(
      'data',
      (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)),
    );
  });
  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child!.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await server?.close();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const query = async (promql: string) => {
    const response = await fetch(
      `${prometheusUrl}/api/v1/query?query=${encodeURIComponent(promql)}`,
    );
    const body = (await response.json()) as {
      data: { result: { metric: Record<string, string>; value: [number, string] }[] };
    };
    return body.data.result;
  };

  it('finds the per-zone gauge through its query API, equal to the served latest value', async () => {
    const served = (await (await fetch(`${server.url}/v1/intensity/latest?zone=DE`)).json()) as {
      data: { gco2eq_kwh: number }[];
    };
    let result: Awaited<ReturnType<typeof query>> = [];
    await eventually(async () => {
      expect(child!.exitCode, `prometheus exited: ${stderr}`).toBeNull();
      result = await query('grid_intensity_carbon_average{location="DE"}');
      expect(result).toHaveLength(3);
      // Until Prometheus has scraped once: a busy machine may delay its first scrape by seconds.
    }, 60_000);
    const byBasis = Object.fromEntries(
      result.map((series) => [series.metric['basis'], Number(series.value[1])]),
    );
    expect(byBasis['default']).toBe(served.data[0]!.gco2eq_kwh);
    expect(byBasis['default']).toBe(282.3);
    expect(result[0]!.metric).toMatchObject({
      job: 'gridco2',
      location: 'DE',
      provider: 'gridco2',
      units: 'gCO2e per kWh',
    });
  });

  it('evaluates the alert rules of docs/deploy.md: the US source stale and failing, GB left out', async () => {
    await eventually(async () => {
      expect(child!.exitCode, `prometheus exited: ${stderr}`).toBeNull();
      const response = await fetch(`${prometheusUrl}/api/v1/rules?type=alert`);
      const body = (await response.json()) as {
        data: { groups: { rules: PrometheusAlertRule[] }[] };
      };
      const rules = new Map(
        body.data.groups.flatMap((group) => group.rules).map((rule) => [rule.name, rule]),
      );
      const sourcesOf = (name: string) => {
        const rule = rules.get(name);
        expect(rule, name).toBeDefined();
        expect(rule!.health, `${name}: ${rule!.lastError ?? ''}`).toBe('ok');
        return rule!.alerts.map((alert) => alert.labels['source']).sort();
      };
      expect(sourcesOf('Gridco2SourceStale')).toEqual(['us-agency']);
      expect(sourcesOf('Gridco2IngestionFailing')).toEqual(['us-agency']);
    });
  });
});
