import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.js';
import { ZONES } from '../src/core/zones.js';
import { startServer, type RunningServer } from '../src/server.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { ApiClient } from './support/api-client.js';
import {
  DE,
  DE_INCOMPLETE,
  DE_LAST,
  deValue,
  FR_COUNT,
  FR_FIRST,
  GB,
  GB_LAST_ACTUAL,
  H,
  HOUR_NOW,
  iso,
  NOW,
  NOW_S,
  US_LAST,
  computed,
} from './support/fixed-store.js';
import { fillFixedStoreWithBacktest } from './support/fixed-backtest.js';

/**
 * Black-box suite of the /v1 contract (api-spec.md + decisions.md): the real server on an
 * ephemeral port, over a real SQLite file filled through the store interface, real HTTP.
 */

const dir = mkdtempSync(join(tmpdir(), 'gridco2-http-'));
// Each server forks a forecast worker: from the build, not through tsx.
vi.mock('node:child_process', async (original) =>
  (await import('./support/built-workers.js')).forkingBuiltModules(await original()),
);

type CacheMode = 'off' | 'ready';
let server: RunningServer;
let api: ApiClient;
/** The suite runs twice: reading the store directly, and serving from the in-memory cache. */
let cacheMode: CacheMode = 'off';

/**
 * The fixed store served in each cache mode, started when first asked for and shared by the tests
 * that only read it. A test that writes, closes the store, counts requests against a limit, or
 * needs an empty store or its own clock starts its own server.
 */
const shared = new Map<CacheMode, Promise<RunningServer>>();
function sharedServer(cache: CacheMode): Promise<RunningServer> {
  let running = shared.get(cache);
  if (!running)
    shared.set(cache, (running = start({ RATE_LIMIT_PER_MINUTE: '1000000' }, { cache })));
  return running;
}
afterAll(async () => {
  for (const running of shared.values()) await (await running).close();
  rmSync(dir, { recursive: true, force: true });
});

/** The fixed store, filled once: each server gets a copy of it (a closed SQLite file). */
let filled: Promise<string> | undefined;
async function fillOnce(): Promise<string> {
  const file = join(dir, 'filled.db');
  const store = new SqliteStore(file);
  await fillFixedStoreWithBacktest(store);
  await store.close();
  return file;
}

async function start(
  env: Record<string, string>,
  { fill = true, clock = () => NOW, cache = cacheMode }: StartOptions = {},
): Promise<RunningServer> {
  const file = join(dir, `api-${Math.random().toString(36).slice(2)}.db`);
  if (fill) copyFileSync(await (filled ??= fillOnce()), file);
  const config = loadConfig({
    PORT: '0',
    DATABASE_URL: `sqlite:${file}`,
    LOG_LEVEL: 'silent',
    INGEST: 'off',
    // The page at / is tested in test/dashboard.test.ts; here / is the JSON 404 of DASHBOARD=off.
    DASHBOARD: 'off',
    ...env,
  });
  return startServer(config, { clock, cache });
}
interface StartOptions {
  readonly fill?: boolean;
  readonly clock?: () => number;
  readonly cache?: CacheMode;
}

describe.each(['off', 'ready'] as const)('with the reading cache %s', (mode) => {
  beforeAll(async () => {
    cacheMode = mode;
    server = await sharedServer(mode);
    api = new ApiClient(server.url);
    await api.loadOpenApi();
  });

  const json = <T>(response: { json: unknown }) => response.json as T;
  interface History {
    zone: string;
    from: string;
    to: string;
    unit: string;
    count: number;
    truncated: boolean;
    note?: string;
    data: { ts: string; gco2eq_kwh: number; method: string }[];
  }

  describe('every response', () => {
    const paths = [
      '/v1',
      '/v1/health',
      '/v1/status',
      '/v1/zones',
      '/v1/intensity/latest',
      '/v1/intensity?zone=DE',
      '/v1/nope',
      '/v1/intensity',
    ];
    it.each(paths)('%s is JSON with charset and open CORS', async (path) => {
      const response = await api.get(path);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.status).toBeLessThan(500 + (path === '/v1/status' ? 4 : 0));
    });

    it.each([
      ['/v1', 'public, max-age=3600'],
      ['/v1/health', 'no-store'],
      ['/v1/zones', 'max-age=3600'],
      ['/v1/intensity/latest', 'public, max-age=300'],
      ['/v1/intensity?zone=DE', 'max-age=600'],
      ['/v1/status', 'max-age=120'],
      ['/v1/intensity?zone=XX', 'no-store'],
      ['/v1/intensity', 'no-store'],
      ['/v1/nope', 'no-store'],
    ])('%s has Cache-Control %s', async (path, expected) => {
      expect((await api.get(path)).headers.get('cache-control')).toBe(expected);
    });
  });

  describe('GET /v1', () => {
    it('describes the service, its endpoints and the upstreams it credits', async () => {
      const response = await api.get('/v1');
      expect(response.status).toBe(200);
      const body = json<Record<string, unknown>>(response);
      expect(body.name).toBe('gridco2');
      expect(body.unit).toBe('gCO2eq/kWh');
      expect(body.status).toBe('pre-alpha, interface 1.0.0-pre');
      expect(Object.keys(body.endpoints as object)).toEqual([
        'health',
        'zones',
        'latest',
        'intensity',
      ]);
      expect(body.attribution).toMatch(/ENTSO-E/);
      expect(body.attribution).toMatch(/EIA/);
      expect(body.attribution).toMatch(/NESO/);
      expect(body.openapi).toBe('/v1/openapi.json');
    });
  });

  describe('GET /v1/health', () => {
    it('is alive, with the response time', async () => {
      const response = await api.get('/v1/health');
      expect(response.status).toBe(200);
      expect(response.json).toEqual({ ok: true, ts: '2026-11-21T13:20:00Z' });
    });
  });

  describe('GET /v1/zones', () => {
    it('lists the 45 zones in the order of the spec table', async () => {
      const body = json<{
        data: { zone: string; name: string; source: string; resolution_min: number }[];
      }>(await api.get('/v1/zones'));
      const spec =
        'DE FR ES PT IT-NORD IT-CNOR IT-CSUD IT-SUD IT-CALA IT-SICI IT-SARD NL BE AT CH PL CZ DK-1 DK-2 ' +
        'SE-1 SE-2 SE-3 SE-4 NO-1 NO-2 NO-3 NO-4 NO-5 FI IE GR RO HU US US-PJM US-MISO US-ERCOT US-SPP ' +
        'US-SOCO US-CAISO US-TVA US-NYISO US-ISONE US-BPA GB';
      expect(body.data.map((zone) => zone.zone)).toEqual(spec.split(' '));
      expect(body.data.filter((z) => z.source === 'europe-tso')).toHaveLength(33);
      expect(body.data.filter((z) => z.source === 'us-agency')).toHaveLength(11);
      expect(body.data.find((z) => z.zone === 'GB')).toMatchObject({
        source: 'uk-operator',
        resolution_min: 30,
      });
      expect(body.data.find((z) => z.zone === 'FR')).toMatchObject({
        source: 'europe-tso',
        resolution_min: 60,
      });
      expect(Object.keys(body.data[0]!)).toEqual(['zone', 'name', 'source', 'resolution_min']);
    });
  });

  describe('GET /v1/intensity/latest', () => {
    it('gives one reading per zone with data, in the order of /v1/zones, never a null', async () => {
      const response = await api.get('/v1/intensity/latest');
      expect(response.status).toBe(200);
      const body = json<{ unit: string; data: Record<string, unknown>[] }>(response);
      expect(Object.keys(body)).toEqual(['unit', 'data']);
      expect(body.unit).toBe('gCO2eq/kWh');
      expect(body.data.map((r) => r.zone)).toEqual(['DE', 'FR', 'US', 'GB']);
      expect(body.data[0]).toEqual({
        zone: 'DE',
        ts: iso(DE_LAST),
        gco2eq_kwh: Number(deValue(DE_LAST).toFixed(1)),
        method: 'computed:v1',
      });
      expect(Object.keys(body.data[0]!)).toEqual(['zone', 'ts', 'gco2eq_kwh', 'method']);
      expect(body.data[3]).toEqual({
        zone: 'GB',
        ts: iso(GB_LAST_ACTUAL + 1800),
        gco2eq_kwh: 142,
        method: 'upstream:uk-operator:forecast',
      });
      expect(body.data[2]!.gco2eq_kwh).toBe(401.8);
    });

    it.each(['de', 'DE', ' De ', '%20de%09'])(
      'accepts zone=%s case-insensitively and trimmed',
      async (zone) => {
        const body = json<{ data: { zone: string }[] }>(
          await api.get(`/v1/intensity/latest?zone=${zone}`),
        );
        expect(body.data).toHaveLength(1);
        expect(body.data[0]!.zone).toBe('DE');
      },
    );

    it.each([
      ['XX', 'unknown or empty zone: XX'],
      ['ie', 'unknown or empty zone: ie'],
      ['PL', 'unknown or empty zone: PL'],
    ])('answers 404 for zone=%s', async (zone, message) => {
      const response = await api.get(`/v1/intensity/latest?zone=${zone}`);
      expect(response.status).toBe(404);
      expect(json<{ error: string }>(response).error).toBe(message);
    });

    it('rejects a repeated zone', async () => {
      const response = await api.get('/v1/intensity/latest?zone=DE&zone=FR');
      expect(response.status).toBe(400);
      expect(json<{ error: string; hint: string }>(response).error).toBe('invalid param: zone');
      expect(json<{ hint: string }>(response).hint).toMatch(/once/);
    });
  });

  describe('GET /v1/intensity', () => {
    it('defaults to the 24 hours before the request and echoes the window', async () => {
      const body = json<History>(await api.get('/v1/intensity?zone=de'));
      expect(body.zone).toBe('DE');
      expect(body.from).toBe('2026-11-20T13:20:00Z');
      expect(body.to).toBe('2026-11-21T13:20:00Z');
      expect(body.unit).toBe('gCO2eq/kWh');
      const expected = DE.filter((r) => r.complete && r.ts >= NOW_S - 24 * H && r.ts < NOW_S);
      expect(body.count).toBe(expected.length);
      expect(body.data.map((r) => r.ts)).toEqual(expected.map((r) => iso(r.ts)));
      expect(body.truncated).toBe(false);
      expect('note' in body).toBe(false);
      expect(Object.keys(body)).toEqual([
        'zone',
        'from',
        'to',
        'unit',
        'count',
        'truncated',
        'data',
      ]);
      expect(Object.keys(body.data[0]!)).toEqual(['ts', 'gco2eq_kwh', 'method']);
    });

    it('includes from and excludes to, ascending, and never serves an incomplete hour', async () => {
      const from = DE_INCOMPLETE - 2 * H;
      const to = DE_INCOMPLETE + 2 * H;
      const body = json<History>(
        await api.get(`/v1/intensity?zone=DE&from=${iso(from)}&to=${iso(to)}`),
      );
      expect(body.data.map((r) => r.ts)).toEqual([iso(from), iso(from + H), iso(to - H)]);
      expect(body.data.map((r) => r.gco2eq_kwh)).toEqual(
        [from, from + H, to - H].map((ts) => Number(deValue(ts).toFixed(1))),
      );
      expect(body.data.every((r) => r.gco2eq_kwh !== 820)).toBe(true);
    });

    it.each([
      ['2026-11-21', '2026-11-21T00:00:00Z'],
      ['2026-11-21T10:00Z', '2026-11-21T10:00:00Z'],
      ['2026-11-21T10:00:00Z', '2026-11-21T10:00:00Z'],
      ['2026-11-21T10:00:00.000Z', '2026-11-21T10:00:00Z'],
      ['2026-11-21T11:00:00%2B01:00', '2026-11-21T10:00:00Z'],
      ['2026-11-21T05:30:00-04:30', '2026-11-21T10:00:00Z'],
      ['2026-11-21T10:00:00', '2026-11-21T10:00:00Z'],
    ])('accepts from=%s as %s', async (given, used) => {
      const response = await api.get(`/v1/intensity?zone=DE&from=${given}`);
      expect(response.status).toBe(200);
      const body = json<History>(response);
      expect(body.from).toBe(used);
      expect(body.to).toBe('2026-11-21T13:20:00Z');
      expect(body.data[0]?.ts).toBe(used);
    });

    it('accepts the first and last servable instants', async () => {
      const first = await api.get('/v1/intensity?zone=DE&from=0000-01-01&to=0000-01-02');
      expect(first.status).toBe(200);
      expect(json<History>(first).from).toBe('0000-01-01T00:00:00Z');
      const last = await api.get('/v1/intensity?zone=DE&from=9999-12-31&to=9999-12-31T23:59:59Z');
      expect(json<History>(last).to).toBe('9999-12-31T23:59:59Z');
    });

    it('rounds a sub-millisecond from up to the next second (the 13:00 reading is out)', async () => {
      const at = iso(DE_LAST);
      const body = json<History>(
        await api.get(`/v1/intensity?zone=DE&from=${at.replace('Z', '.0001Z')}`),
      );
      expect(body.from).toBe(iso(DE_LAST + 1));
      expect(body.count).toBe(0);
    });

    it('defaults from to 24 hours before a given to', async () => {
      const body = json<History>(await api.get('/v1/intensity?zone=DE&to=2026-11-10T00:00:00Z'));
      expect(body.from).toBe('2026-11-09T00:00:00Z');
      expect(body.count).toBe(24);
    });

    it.each([
      ['from', 'junk'],
      ['from', '2026-13-01'],
      ['from', '2026-02-30'],
      ['to', '2026-11-21T25:00Z'],
      ['to', '1700000000'],
      ['from', '21/11/2026'],
      ['to', '2026-11-21 10:00'],
      ['from', ''],
      ['from', '2026-11-21T10:00:00+25:00'],
      // Instants that would echo outside four-digit years (issue 10, item 6).
      ['to', '9999-12-31T23:59:59-23:59'],
      ['to', '0000-01-01'],
      ['from', '0000-01-01T00:00:00+00:01'],
      ['to', '9999-12-31T23:59:59.5Z'],
    ])('rejects %s=%s with a hint', async (param, value) => {
      const response = await api.get(`/v1/intensity?zone=DE&${param}=${encodeURIComponent(value)}`);
      expect(response.status).toBe(400);
      const body = json<{ error: string; hint: string }>(response);
      expect(body.error).toBe(`invalid param: ${param}`);
      expect(body.hint).toMatch(/2026-11-21T13:00:00Z/);
    });

    it.each([
      ['from=2026-11-21T10:00Z&to=2026-11-21T10:00Z'],
      ['from=2026-11-21T11:00Z&to=2026-11-21T10:00Z'],
      ['from=2026-11-22T00:00Z'],
    ])('rejects a window where from is not before to (%s)', async (query) => {
      const response = await api.get(`/v1/intensity?zone=DE&${query}`);
      expect(response.status).toBe(400);
      expect(json<{ error: string }>(response).error).toBe(
        'invalid window: from must be before to',
      );
    });

    it.each([
      ['/v1/intensity', 400, 'missing required param: zone'],
      ['/v1/intensity?zone=', 400, 'missing required param: zone'],
      ['/v1/intensity?zone=%20%20', 400, 'missing required param: zone'],
      ['/v1/intensity?from=2026-11-20', 400, 'missing required param: zone'],
      ['/v1/intensity?zone=XX', 404, 'unknown or empty zone: XX'],
      ['/v1/intensity?zone=de-lu', 404, 'unknown or empty zone: de-lu'],
      ['/v1/intensity?zone=DE&zone=FR', 400, 'invalid param: zone'],
      ['/v1/intensity?zone=DE&from=2026-11-20&from=2026-11-19', 400, 'invalid param: from'],
      ['/v1/intensity?zone=DE&to=2026-11-20&to=2026-11-19', 400, 'invalid param: to'],
      ['/v1/intensity?zone=%ZZ', 404, 'unknown or empty zone: %ZZ'],
      ['/v1/intensity?zone=D%00E', 404, 'unknown or empty zone: D\u0000E'],
      [`/v1/intensity?zone=${'A'.repeat(5000)}`, 404, `unknown or empty zone: ${'A'.repeat(5000)}`],
    ])('%s -> %i %s', async (path, status, message) => {
      const response = await api.get(path);
      expect(response.status).toBe(status);
      expect(json<{ error: string }>(response).error).toBe(message);
    });

    it('ignores unknown query parameters', async () => {
      const response = await api.get('/v1/intensity?zone=DE&foo=bar&format=csv');
      expect(response.status).toBe(200);
    });

    it('gives 200 and count 0 for an empty zone or a window beyond history', async () => {
      const ie = json<History>(await api.get('/v1/intensity?zone=IE'));
      expect(ie).toMatchObject({ zone: 'IE', count: 0, truncated: false, data: [] });
      const old = json<History>(
        await api.get('/v1/intensity?zone=DE&from=2020-01-01&to=2020-02-01'),
      );
      expect(old.count).toBe(0);
    });

    it('serves GB half-hourly, actuals then the forecast', async () => {
      const body = json<History>(await api.get('/v1/intensity?zone=gb'));
      // The actuals of the window, and the forecast of the half-hour after the newest one.
      const expected = GB.filter((r) => r.ts >= NOW_S - 24 * H && r.ts < NOW_S);
      expect(body.count).toBe(expected.length + 1);
      expect(body.data[0]!.ts).toBe(iso(GB_LAST_ACTUAL - 46 * 1800));
      expect(body.data[1]!.ts).toBe(iso(GB_LAST_ACTUAL - 45 * 1800));
      expect(body.data.at(-1)).toEqual({
        ts: iso(GB_LAST_ACTUAL + 1800),
        gco2eq_kwh: 142,
        method: 'upstream:uk-operator:forecast',
      });
      expect(body.data.at(-2)!.method).toBe('upstream:uk-operator:actual');
    });

    it('truncates at 5000 points, keeps the earliest and says where to continue', async () => {
      const from = iso(FR_FIRST);
      const to = iso(HOUR_NOW);
      const body = json<History>(await api.get(`/v1/intensity?zone=FR&from=${from}&to=${to}`));
      expect(body.count).toBe(5000);
      expect(body.data).toHaveLength(5000);
      expect(body.truncated).toBe(true);
      expect(body.from).toBe(from);
      expect(body.to).toBe(to);
      expect(body.data[0]!.ts).toBe(from);
      const next = iso(FR_FIRST + 5000 * H);
      expect(body.data[4999]!.ts).toBe(iso(FR_FIRST + 4999 * H));
      expect(body.note).toContain(next);
      expect(Object.keys(body)).toEqual([
        'zone',
        'from',
        'to',
        'unit',
        'count',
        'truncated',
        'note',
        'data',
      ]);
      const rest = json<History>(await api.get(`/v1/intensity?zone=FR&from=${next}&to=${to}`));
      expect(rest.count).toBe(FR_COUNT - 5000);
      expect(rest.truncated).toBe(false);
    });

    it('names the next page of a truncated history in a Link header, and only then', async () => {
      const to = iso(HOUR_NOW);
      const first = await api.get(`/v1/intensity?zone=fr&to=${to}&from=${iso(FR_FIRST)}&x=%3E`);
      const next = iso(FR_FIRST + 5000 * H);
      expect(first.headers.get('link')).toBe(
        `</v1/intensity?zone=fr&to=${to}&from=${next}&x=%3E>; rel="next"`,
      );
      expect(first.headers.get('access-control-expose-headers')).toContain('Link');
      const target = /^<([^>]+)>/.exec(first.headers.get('link')!)![1]!;
      const rest = await api.get(target);
      expect(json<History>(rest).count).toBe(FR_COUNT - 5000);
      expect(rest.headers.get('link')).toBeNull();
      expect(rest.headers.get('access-control-expose-headers')).not.toContain('Link');
      // Without from (default 24 h) nothing is truncated, so no Link either.
      expect((await api.get('/v1/intensity?zone=FR')).headers.get('link')).toBeNull();
    });

    it('does not flag a window of exactly 5000 points as truncated', async () => {
      const body = json<History>(
        await api.get(`/v1/intensity?zone=FR&from=${iso(FR_FIRST)}&to=${iso(FR_FIRST + 5000 * H)}`),
      );
      expect(body.count).toBe(5000);
      expect(body.truncated).toBe(false);
    });
  });

  describe('GET /v1/status', () => {
    it('is 200 and ok when every source is within its window, with lags from the store', async () => {
      const response = await api.get('/v1/status');
      expect(response.status).toBe(200);
      const body = json<{
        ok: boolean;
        ts: string;
        note: string;
        sources: Record<string, unknown>[];
      }>(response);
      expect(body.ok).toBe(true);
      expect(body.ts).toBe('2026-11-21T13:20:00Z');
      const lag = (ts: number) => Math.round(((NOW_S - ts) / H) * 100) / 100;
      const europeStalest = lag(Date.parse('2024-08-01T00:00:00Z') / 1000); // zones without data
      expect(body.sources).toEqual([
        {
          source: 'europe-tso',
          zones: 33,
          freshest_lag_hours: lag(DE_LAST),
          stalest_lag_hours: europeStalest,
          stale_after_hours: 8,
          ok: true,
        },
        {
          source: 'us-agency',
          zones: 11,
          freshest_lag_hours: lag(US_LAST),
          stalest_lag_hours: lag(Date.parse('2019-01-01T00:00:00Z') / 1000),
          stale_after_hours: 36,
          ok: true,
        },
        {
          source: 'uk-operator',
          zones: 1,
          freshest_lag_hours: lag(GB_LAST_ACTUAL + 1800),
          stalest_lag_hours: lag(GB_LAST_ACTUAL + 1800),
          stale_after_hours: 4,
          ok: true,
        },
      ]);
      expect(body.note).toContain('FR (10.33 h)');
    });

    it('is 503 with the same body shape when a source is behind, and says there is no data yet', async () => {
      const empty = await start({}, { fill: false });
      try {
        const client = new ApiClient(empty.url);
        await client.loadOpenApi();
        const response = await client.get('/v1/status');
        expect(response.status).toBe(503);
        const body = json<{ ok: boolean; note: string; sources: { ok: boolean }[] }>(response);
        expect(body.ok).toBe(false);
        expect(body.sources.map((s) => s.ok)).toEqual([false, false, false]);
        expect(body.note).toMatch(/no data yet/);
        expect(response.headers.get('cache-control')).toBe('max-age=120');
        // An empty store: latest per zone is 404, everything else works.
        expect((await client.get('/v1/intensity/latest?zone=DE')).status).toBe(404);
        expect(json<{ data: unknown[] }>(await client.get('/v1/intensity/latest')).data).toEqual(
          [],
        );
        expect((await client.get('/v1/zones')).status).toBe(200);
        expect(client.validated).toBeGreaterThan(3);
      } finally {
        await empty.close();
      }
    });
  });

  describe('conditional requests', () => {
    it.each([
      '/v1/zones',
      '/v1/intensity/latest',
      '/v1/intensity?zone=DE&from=2026-11-01&to=2026-11-02',
      '/v1/status',
      '/v1',
    ])('%s carries an ETag and answers 304 to a matching If-None-Match', async (path) => {
      const first = await api.get(path);
      const etag = first.headers.get('etag');
      expect(etag).toMatch(/^"[^"]+"$/);
      const again = await api.get(path, { 'if-none-match': etag! });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
      const weakList = await api.get(path, { 'if-none-match': `"other", W/${etag}` });
      expect(weakList.status).toBe(304);
      const stale = await api.get(path, { 'if-none-match': '"stale"' });
      expect(stale.status).toBe(first.status);
      expect(stale.text).toBe(first.text);
    });

    it('gives different ETags to different data', async () => {
      const a = await api.get('/v1/intensity?zone=DE&from=2026-11-01&to=2026-11-02');
      const b = await api.get('/v1/intensity?zone=DE&from=2026-11-02&to=2026-11-03');
      expect(a.headers.get('etag')).not.toBe(b.headers.get('etag'));
    });
  });

  describe('fast path and framework path', () => {
    // The same store served from memory (the fast path answers) and without the reading cache
    // (every request goes through Fastify): both must answer the same bytes and headers.
    let fromMemory: RunningServer;
    let throughFramework: RunningServer;
    beforeAll(async () => {
      fromMemory = await sharedServer('ready');
      throughFramework = await sharedServer('off');
    });

    it.each([
      '/v1/intensity/latest',
      '/v1/intensity/latest?zone=gb',
      '/v1/intensity?zone=DE',
      '/v1/intensity?zone=DE&unknown=1',
      `/v1/intensity?zone=FR&from=${iso(FR_FIRST)}&to=${iso(HOUR_NOW)}`,
      `/v1/intensity?to=${iso(HOUR_NOW)}&zone=FR&x=1&from=${iso(FR_FIRST)}`,
      '/v1/intensity?zone=IE&from=2026-11-01T00:00Z',
      '/v1/intensity?zone=+de+&from=2026-11-20T10:00:00%2B01:00',
    ])('%s', async (path) => {
      for (const headers of [
        {},
        { 'accept-encoding': 'br' },
        { 'accept-encoding': 'gzip' },
      ] as Record<string, string>[]) {
        const direct = await rawGet(fromMemory.url, path, headers);
        const framework = await rawGet(throughFramework.url, path, headers);
        expect(framework.status).toBe(direct.status);
        expect(framework.raw.equals(direct.raw)).toBe(true);
        const comparable = (all: Record<string, string | undefined>) => {
          const {
            date: _date,
            'ratelimit-remaining': _remaining,
            'ratelimit-reset': _reset,
            ...rest
          } = all;
          return rest;
        };
        expect(comparable(framework.headers)).toEqual(comparable(direct.headers));
      }
    });
  });

  describe('compression', () => {
    it.each([
      ['br', brotliDecompressSync],
      ['gzip', gunzipSync],
    ] as const)(
      'sends %s to clients that accept it, with its own ETag',
      async (encoding, decode) => {
        const path = `/v1/intensity?zone=DE&from=${iso(DE_LAST - 200 * H)}&to=${iso(DE_LAST)}`;
        const plain = await rawGet(server.url, path);
        const packed = await rawGet(server.url, path, {
          'accept-encoding': `${encoding}, deflate`,
        });
        expect(packed.headers['content-encoding']).toBe(encoding);
        expect(packed.headers['vary']).toBe('accept-encoding');
        expect(decode(packed.raw).toString()).toBe(plain.body);
        expect(packed.raw.length).toBeLessThan(plain.raw.length / 3);
        expect(packed.headers['etag']).not.toBe(plain.headers['etag']);
        const again = await rawGet(server.url, path, {
          'accept-encoding': encoding,
          'if-none-match': packed.headers['etag']!,
        });
        expect(again.status).toBe(304);
      },
    );

    it('sends identity when the client refuses encodings with q=0', async () => {
      const response = await rawGet(server.url, '/v1/zones', {
        'accept-encoding': 'br;q=0, gzip;q=0',
      });
      expect(response.headers['content-encoding']).toBeUndefined();
    });
  });

  it('serves a newly written hour on every data endpoint within 10 seconds', async () => {
    const fresh = await start({});
    try {
      const next = DE_LAST + H;
      await fresh.store.upsertReadings([computed('DE', next, 555.56)]);
      const started = Date.now();
      await waitFor(async () => {
        const latest = await fetch(`${fresh.url}/v1/intensity/latest?zone=DE`);
        return ((await latest.json()) as { data: { ts: string }[] }).data[0]?.ts === iso(next);
      });
      expect(Date.now() - started).toBeLessThan(10_000);
      const all = (await (await fetch(`${fresh.url}/v1/intensity/latest`)).json()) as {
        data: { zone: string; ts: string; gco2eq_kwh: number }[];
      };
      expect(all.data[0]).toMatchObject({ zone: 'DE', ts: iso(next), gco2eq_kwh: 555.6 });
      const history = (await (await fetch(`${fresh.url}/v1/intensity?zone=DE`)).json()) as History;
      expect(history.data.at(-1)?.ts).toBe(iso(next));
    } finally {
      await fresh.close();
    }
  });

  describe('methods and paths', () => {
    it('answers HEAD like GET without a body', async () => {
      const get = await api.get('/v1/zones');
      const head = await api.request('/v1/zones', { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
      for (const name of ['content-type', 'cache-control', 'etag', 'access-control-allow-origin']) {
        expect(head.headers.get(name)).toBe(get.headers.get(name));
      }
    });

    it.each(['/v1/zones', '/v1/intensity', '/v1/nope'])(
      'answers OPTIONS %s as a CORS preflight',
      async (path) => {
        const response = await api.request(path, {
          method: 'OPTIONS',
          headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' },
        });
        expect(response.status).toBe(204);
        expect(response.headers.get('access-control-allow-origin')).toBe('*');
        expect(response.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS');
        const plain = await api.request(path, { method: 'OPTIONS' });
        expect(plain.status).toBe(204);
      },
    );

    it.each(['POST', 'PUT', 'DELETE', 'PATCH'])('answers %s with 405 and Allow', async (method) => {
      for (const path of [
        '/v1',
        '/v1/zones',
        '/v1/intensity',
        '/v1/intensity/latest',
        '/v1/status',
        '/v1/health',
      ]) {
        const response = await api.request(path, {
          method,
          body: method === 'DELETE' ? null : '{}',
        });
        expect(response.status).toBe(405);
        expect(response.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
        expect(response.headers.get('cache-control')).toBe('no-store');
        expect(json<{ error: string }>(response).error).toBe(`method not allowed: ${method}`);
      }
    });

    it.each(['/v1/nope', '/v2/zones', '/', '/v1/intensity/latest/DE', '/v1/zones.json'])(
      'answers unknown path %s with 404',
      async (path) => {
        const response = await api.get(path);
        expect(response.status).toBe(404);
        expect(response.json).toEqual({
          error: `not found: ${path}`,
          hint: 'see /v1 for the endpoints',
        });
      },
    );

    it('answers odd and oversized requests with a JSON error, never a 5xx', async () => {
      const cases = [
        `/v1/${'x'.repeat(20_000)}`,
        '/v1/%E0%A4%A',
        '/v1/%00',
        '/v1/zones?%ZZ=1',
        `/v1/intensity?zone=DE&from=${'9'.repeat(3000)}`,
        '/v1/intensity?zone=DE&from=2026-11-20T00:00:00Z&to=9999-12-31T23:59:59Z',
        '/v1/intensity?zone=DE&from=0000-01-01',
        '/v1/intensity?zone[]=DE',
        '/v1/intensity?zone[a]=DE',
        '/v1/intensity?zone=%F0%9F%98%80',
        '/v1//intensity',
      ];
      expect((await rawGet(server.url, cases[0]!)).status).toBe(431);
      for (const path of cases) {
        const response = await rawGet(server.url, path);
        expect(response.status, path).toBeLessThan(500);
        expect(response.headers['content-type'], path).toBe('application/json; charset=utf-8');
        const body = JSON.parse(response.body) as { error?: string };
        if (response.status >= 400) expect(typeof body.error, path).toBe('string');
        expect(response.body).not.toMatch(/at .*\.(js|ts):\d+/);
      }
    });
  });

  describe('rate limit', () => {
    it('allows 60 requests a minute per IP on limited endpoints, then 429 with retry-after', async () => {
      const limited = await start({});
      try {
        const client = new ApiClient(limited.url);
        await client.loadOpenApi();
        const statuses: number[] = [];
        for (let i = 0; i < 60; i++) {
          const path = ['/v1/zones', '/v1/status', '/v1/intensity/latest', '/v1/intensity?zone=DE'][
            i % 4
          ]!;
          const response = await client.get(path);
          statuses.push(response.status);
          expect(response.headers.get('ratelimit-limit')).toBe('60');
          expect(response.headers.get('ratelimit-remaining')).toBe(String(59 - i));
          expect(Number(response.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
        }
        expect(statuses.every((status) => status === 200)).toBe(true);
        const over = await client.get('/v1/intensity/latest');
        expect(over.status).toBe(429);
        expect(json<{ error: string; hint: string }>(over).error).toBe('rate limit exceeded');
        expect(over.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
        expect(over.headers.get('cache-control')).toBe('no-store');
        // The index and health are never limited and carry no RateLimit headers.
        for (const path of ['/v1', '/v1/health']) {
          const response = await client.get(path);
          expect(response.status).toBe(200);
          expect(response.headers.get('ratelimit-limit')).toBeNull();
        }
      } finally {
        await limited.close();
      }
    });

    it('believes X-Forwarded-For only from configured proxies', async () => {
      const trusting = await start({ RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY: '127.0.0.1' });
      const distrusting = await start({ RATE_LIMIT_PER_MINUTE: '2' });
      try {
        const statuses = async (url: string) => {
          const result: number[] = [];
          for (const ip of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) {
            result.push(
              (await fetch(`${url}/v1/zones`, { headers: { 'x-forwarded-for': ip } })).status,
            );
          }
          return result;
        };
        expect(await statuses(trusting.url)).toEqual([200, 200, 200]);
        expect(await statuses(distrusting.url)).toEqual([200, 200, 429]);
      } finally {
        await trusting.close();
        await distrusting.close();
      }
    });
  });

  describe('store outage', () => {
    it('keeps health at 200 and answers data endpoints 503 with retry-after', async () => {
      const broken = await start({});
      try {
        await broken.store.close();
        const client = new ApiClient(broken.url);
        await client.loadOpenApi();
        expect((await client.get('/v1/health')).status).toBe(200);
        // The in-memory cache notices at its next poll (every 2 s).
        await waitFor(async () => (await client.get('/v1/intensity/latest')).status === 503);
        for (const path of ['/v1/intensity/latest', '/v1/intensity?zone=DE']) {
          const response = await client.get(path);
          expect(response.status, path).toBe(503);
          expect(json<{ error: string }>(response).error).toBe('data store unavailable');
          expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
        }
        const status = await client.get('/v1/status');
        expect(status.status).toBe(503);
        expect(json<{ ok: boolean; note: string }>(status)).toMatchObject({ ok: false });
        expect(json<{ note: string }>(status).note).toMatch(/data store unavailable/);
        expect(status.headers.get('retry-after')).toMatch(/^\d+$/);
      } finally {
        await broken.close();
      }
    });
  });

  it('covers every zone in the registry with a unique upstream id', () => {
    expect(new Set(ZONES.map((zone) => zone.upstreamId)).size).toBe(45);
    expect(api.validated).toBeGreaterThan(50);
  });
});

describe('the fast path keeps what a request target means only while it cannot change', () => {
  let now = NOW;
  let running: RunningServer;
  beforeAll(async () => {
    running = await start(
      { RATE_LIMIT_PER_MINUTE: '1000000' },
      { clock: () => now, cache: 'ready' },
    );
  });
  afterAll(async () => {
    await running?.close();
  });

  it('moves a window without both ends with the clock', async () => {
    const firstTs = async () => {
      const response = await fetch(`${running.url}/v1/intensity?zone=DE`);
      return ((await response.json()) as { data: { ts: string }[] }).data[0]?.ts;
    };
    now = NOW;
    expect(await firstTs()).toBe(iso(HOUR_NOW - 23 * H));
    now = NOW + 3 * H * 1000;
    expect(await firstTs()).toBe(iso(HOUR_NOW - 20 * H));
  });

  it('asks memory again for a zone that had no reading', async () => {
    const path = `${running.url}/v1/intensity/latest?zone=PL`;
    expect((await fetch(path)).status).toBe(404);
    await running.store.upsertReadings([computed('PL', HOUR_NOW - 2 * H, 612.34)]);
    await waitFor(async () => (await fetch(path)).status === 200);
    const body = (await (await fetch(path)).json()) as { data: { gco2eq_kwh: number }[] };
    expect(body.data[0]?.gco2eq_kwh).toBe(612.3);
  });
});

describe('the OpenAPI document', () => {
  let running: RunningServer;
  beforeAll(async () => {
    running = await start({});
  });
  afterAll(async () => {
    await running?.close();
  });

  it('is built as the server starts, not by the first request for it', async () => {
    const build = vi.spyOn(running.app, 'swagger');
    const first = await fetch(`${running.url}/v1/openapi.json`);
    const second = await fetch(`${running.url}/v1/openapi.json`);
    expect(build).not.toHaveBeenCalled();
    build.mockRestore();
    const body = await first.text();
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(body).toBe(JSON.stringify(running.app.swagger()));
    expect(await second.text()).toBe(body);
    expect(second.headers.get('etag')).toBe(first.headers.get('etag'));
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A GET over a bare socket, so that URLs fetch() would normalise or refuse reach the server. */
function rawGet(
  baseUrl: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
  raw: Buffer;
}> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ hostname, port, path, method: 'GET', headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const raw = Buffer.concat(chunks);
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers as Record<string, string | undefined>,
          body: raw.toString('utf8'),
          raw,
        });
      });
    });
    request.on('error', reject);
    request.end();
  });
}
