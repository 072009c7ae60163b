import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.js';
import { SOURCES } from '../src/core/sources.js';
import { formatTs } from '../src/core/time.js';
import { round1 } from '../src/core/units.js';
import { EXTRA_ZONES, servableZones } from '../src/core/zone-registry.js';
import { ZONES } from '../src/core/zones.js';
import { buildApp } from '../src/http/app.js';
import { ingestSource } from '../src/ingest/ingest-source.js';
import { ReadingCache } from '../src/read/reading-cache.js';
import { startSimulator, type Simulator } from '../src/simulator/index.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../src/storage/store.js';
import { EventStreamClient } from './support/event-stream.js';
import { loggerInto } from './support/log-lines.js';

/**
 * `ZONES=all` (extensions §16) against the upstream simulator over HTTP: a pass of every source
 * with FLOWS=on stores the flow graphs' extra nodes beside the zones; a server with ZONES=all
 * lists them after the 45 and serves their values, production and consumption, from memory and
 * from the store; a server without ZONES keeps to the 45, byte for byte.
 */

const H = 3600;
const NOW_MS = Date.UTC(2026, 10, 21, 13, 20, 0);
const NOW = NOW_MS / 1000;
const WINDOW_SECONDS = 48 * H;

const logger = loggerInto([]);
const dir = mkdtempSync(join(tmpdir(), 'gridco2-zones-all-'));
let simulator: Simulator;
let store: Store;
let cache: ReadingCache;
const apps: FastifyInstance[] = [];
let allFromMemory: string;
let allFromStore: FastifyInstance;
let contract: FastifyInstance;

const settings = (simulatorUrl: string, zones?: string) => ({
  DEMO: 'on',
  DATABASE_URL: 'sqlite::memory:',
  FLOWS: 'on',
  METRICS: 'off',
  RATE_LIMIT_PER_MINUTE: '1000000',
  ENTSOE_BASE_URL: `${simulatorUrl}/api`,
  ENTSOE_TOKEN: 'simulated',
  EIA_BASE_URL: `${simulatorUrl}/v2`,
  EIA_API_KEY: 'simulated',
  NESO_BASE_URL: simulatorUrl,
  ...(zones && { ZONES: zones }),
});

const serve = async (config: Config, withCache?: ReadingCache) => {
  const app = await buildApp({
    config,
    store,
    clock: () => NOW_MS,
    ...(withCache && { cache: withCache }),
  });
  apps.push(app);
  return app;
};

beforeAll(async () => {
  simulator = await startSimulator({ seed: 3, now: () => NOW_MS });
  const all = loadConfig(settings(simulator.url, 'all'));
  store = new SqliteStore(join(dir, 'store.db'));
  const clock = {
    now: () => NOW_MS,
    sleep: async () => undefined,
    timeout: () => new AbortController().signal,
  };
  const signal = new AbortController().signal;
  await Promise.all(
    SOURCES.map((source) =>
      ingestSource({ config: all, store, logger, source, clock, localUpstream: true }).pass(
        signal,
        WINDOW_SECONDS,
      ),
    ),
  );
  cache = new ReadingCache(store, undefined, { pollMs: 60_000, zones: servableZones('all') });
  await cache.refresh();
  const fromMemory = await serve(all, cache);
  // Over HTTP: the fast path answers from memory, as in production.
  allFromMemory = await fromMemory.listen({ port: 0, host: '127.0.0.1' });
  allFromStore = await serve(all);
  contract = await serve(loadConfig(settings(simulator.url)));
}, 120_000);

afterAll(async () => {
  for (const app of apps) await app.close();
  await cache?.stop();
  await store?.close();
  await simulator?.close();
  rmSync(dir, { recursive: true, force: true });
});

const getJson = async (path: string) => {
  const response = await fetch(`${allFromMemory}${path}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};
const injected = async (app: FastifyInstance, path: string) => {
  const response = await app.inject(path);
  return { status: response.statusCode, body: response.json<Record<string, unknown>>() };
};
type Row = { zone: string; ts: string; gco2eq_kwh: number; method: string };
const rows = (body: Record<string, unknown>) => body.data as Row[];

describe('ZONES=all against the simulator (extensions §16)', () => {
  it('lists the 45, then every extra node with a recent complete mix, with its name and source', async () => {
    const { status, body } = await getJson('/v1/zones');
    expect(status).toBe(200);
    const listed = body.data as { zone: string; name: string; source: string }[];
    expect(listed.slice(0, 45).map((zone) => zone.zone)).toEqual(ZONES.map((zone) => zone.code));
    const extra = listed.slice(45);
    for (const code of ['EE', 'SK', 'US-AECI', 'US-DUK']) {
      expect(extra.map((zone) => zone.zone)).toContain(code);
    }
    expect(extra.find((zone) => zone.zone === 'SK')).toEqual({
      zone: 'SK',
      name: 'Slovakia',
      source: 'europe-tso',
      resolution_min: 60,
    });
    expect(extra.find((zone) => zone.zone === 'US-DUK')).toMatchObject({ source: 'us-agency' });
    // In the order of the extra nodes, each one a node with a complete mix stored.
    const order = EXTRA_ZONES.map((zone) => zone.code);
    const codes = extra.map((zone) => zone.zone);
    expect([...codes].sort((a, b) => order.indexOf(a) - order.indexOf(b))).toEqual(codes);
    for (const code of codes) {
      expect(await store.readingsInWindow(code, NOW - 7 * 24 * H, NOW + H, 1), code).toHaveLength(
        1,
      );
    }
    expect((await injected(allFromStore, '/v1/zones')).body).toEqual(body);
    // The replaced service's prefix serves them too, under its source names.
    const gridcarbon = await getJson('/compat/gridcarbon/v1/zones');
    expect((gridcarbon.body.data as { zone: string }[]).find((zone) => zone.zone === 'SK')).toEqual(
      { zone: 'SK', name: 'Slovakia', source: 'entsoe', resolution_min: 60 },
    );
  });

  it("serves an extra node's newest production and consumption values, as stored", async () => {
    const accountings = [
      { query: '', method: 'computed:v1', newest: () => store.latestPerZone() },
      {
        query: '&accounting=consumption',
        method: 'computed:v1:consumption',
        newest: () => store.latestConsumptionPerZone('lifecycle'),
      },
    ];
    for (const code of ['EE', 'SK', 'US-AECI']) {
      for (const { query, method, newest } of accountings) {
        const stored = (await newest()).find((reading) => reading.zone === code);
        if (!stored) throw new Error(`${code}: nothing stored${query}`);
        const path = `/v1/intensity/latest?zone=${code.toLowerCase()}${query}`;
        const latest = await getJson(path);
        expect(latest.status, path).toBe(200);
        expect(rows(latest.body)).toEqual([
          { zone: code, ts: formatTs(stored.ts), gco2eq_kwh: round1(stored.value), method },
        ]);
        expect((await injected(allFromStore, path)).body).toEqual(latest.body);
      }
    }
  });

  it('answers every zone of latest in the order of /v1/zones, from memory and from the store', async () => {
    const zones = rows((await getJson('/v1/zones')).body).map((zone) => zone.zone);
    const latest = await getJson('/v1/intensity/latest');
    const served = rows(latest.body).map((reading) => reading.zone);
    expect(served).toEqual(zones.filter((zone) => served.includes(zone)));
    expect(served).toContain('EE');
    expect(served).toContain('US-AECI');
    expect((await injected(allFromStore, '/v1/intensity/latest')).body).toEqual(latest.body);
    const traced = rows((await getJson('/v1/intensity/latest?accounting=consumption')).body);
    expect(traced.map((reading) => reading.zone)).toContain('SK');
    expect(traced.map((reading) => reading.zone)).not.toContain('GB');
  });

  it('serves windows, mixes, exports, levels and stats of an extra node', async () => {
    const from = encodeURIComponent(formatTs(NOW - 24 * H));
    const to = encodeURIComponent(formatTs(NOW));
    const window = `from=${from}&to=${to}`;
    const history = await getJson(`/v1/intensity?zone=SK&${window}`);
    expect(history.status).toBe(200);
    expect(history.body.count).toBeGreaterThan(0);
    const mix = await getJson(`/v1/mix?zone=SK&${window}`);
    expect(mix.status).toBe(200);
    expect(mix.body).toMatchObject({ zone: 'SK', unit: 'MWh' });
    expect(mix.body.count).toBe(history.body.count);
    const traced = await getJson(`/v1/mix?zone=US-AECI&${window}&accounting=consumption`);
    expect(traced.status).toBe(200);
    expect(traced.body.count).toBeGreaterThan(0);
    const stats = await getJson(`/v1/intensity/stats?zone=EE&${window}`);
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ zone: 'EE' });
    const level = await getJson('/v1/intensity/level?zone=EE&horizon_hours=0');
    expect(level.status).toBe(200);

    const exported = await fetch(`${allFromMemory}/v1/export?zones=all&${window}`);
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-disposition')).toContain('gridco2-all-');
    const lines = (await exported.text()).trim().split('\n');
    expect(lines.some((line) => line.startsWith('SK,'))).toBe(true);
    expect(lines.some((line) => line.startsWith('US-AECI,'))).toBe(true);
  });

  it('streams the readings of an extra node, asked by name or with every zone', async () => {
    const zoneOf = (data: string) => (JSON.parse(data) as { zone: string }).zone;
    const every = await EventStreamClient.open(`${allFromMemory}/v1/stream`, {
      'last-event-id': '0',
    });
    const one = await EventStreamClient.open(`${allFromMemory}/v1/stream?zones=us-aeci`, {
      'last-event-id': '0',
    });
    try {
      const readings = (client: EventStreamClient) =>
        client.events.filter((event) => event.event === 'reading').map((e) => zoneOf(e.data));
      await every.until('a reading of SK', () => readings(every).includes('SK'));
      await one.until('readings of US-AECI', () => readings(one).length >= 10);
      expect(new Set(readings(one))).toEqual(new Set(['US-AECI']));
    } finally {
      every.close();
      one.close();
    }
  });

  it("gives an extra node without a forecast the forecast endpoint's usual empty answer", async () => {
    const forecast = await getJson('/v1/intensity/forecast?zone=EE');
    expect(forecast.status).toBe(200);
    expect(forecast.body).toMatchObject({ zone: 'EE', count: 0, data: [] });
    expect(forecast.body.note).toEqual((await getJson('/v1/intensity/forecast?zone=DE')).body.note);
  });

  it('without ZONES, keeps to the 45: an extra node is an unknown zone, as before', async () => {
    const zones = await injected(contract, '/v1/zones');
    expect(rows(zones.body).map((zone) => zone.zone)).toEqual(ZONES.map((zone) => zone.code));
    const latest = await injected(contract, '/v1/intensity/latest?zone=EE');
    expect(latest).toEqual({
      status: 404,
      body: { error: 'unknown or empty zone: EE', hint: 'see /v1/zones for the zone codes' },
    });
    const every = rows((await injected(contract, '/v1/intensity/latest')).body);
    expect(every.map((reading) => reading.zone)).not.toContain('EE');
    expect(every.length).toBeLessThanOrEqual(45);
    // A boundary node (no mix upstream: Türkiye) is never a zone, with ZONES=all either.
    const gone = await getJson('/v1/intensity/latest?zone=TR');
    expect(gone.status).toBe(404);
  });
});
