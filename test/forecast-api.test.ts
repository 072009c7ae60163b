import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { StoredForecast, StoredReading } from '../src/core/reading.js';
import { SkillRow } from '../src/http/contract/schemas.js';
import { startServer, type RunningServer } from '../src/server.js';
import { createStore } from '../src/storage/create-store.js';
import { ApiClient } from './support/api-client.js';
import { computed, gb, H, HOUR_NOW, iso, NOW, NOW_S } from './support/fixed-store.js';

/**
 * `GET /v1/intensity/forecast` and `/v1/intensity/forecast/skill` over real HTTP on a real SQLite
 * store: 40 days of DE and US history, GB's operator figures with a stored fw48h, FR without data.
 * The server prepares the forecasts and runs its first backtest itself; every response is
 * validated against the OpenAPI document.
 */

// Each server forks a forecast worker, which runs the backtest: from the build, not through tsx.
vi.mock('node:child_process', async (original) =>
  (await import('./support/built-workers.js')).forkingBuiltModules(await original()),
);

const DAYS = 40;
const DE_NEWEST = HOUR_NOW - 3 * H;
const US_NEWEST = HOUR_NOW - 26 * H;
// A daily cycle and a slower swing that no weekly profile repeats.
const deValue = (ts: number) =>
  320 +
  60 * Math.sin((2 * Math.PI * (ts / H)) / 24) +
  15 * Math.sin((2 * Math.PI * (ts / H)) / 250);
const history = (zone: string, newest: number): StoredReading[] =>
  Array.from({ length: DAYS * 24 }, (_, k) => newest - k * H).map((ts) =>
    computed(zone, ts, deValue(ts)),
  );
const GB_NEWEST = HOUR_NOW - 1800;
const GB_READINGS = Array.from({ length: DAYS * 48 }, (_, k) => GB_NEWEST - k * 1800).map((ts) =>
  gb(ts, 150 + ((ts / 1800) % 48)),
);
// The operator's fw48h as fetched at 13:00Z: from the half hour in progress, 96 half hours.
const FW48H: StoredForecast[] = Array.from({ length: 96 }, (_, k) => ({
  zone: 'GB',
  ts: HOUR_NOW + k * 1800,
  kind: 'uk-operator:fw48h',
  issuedAt: HOUR_NOW,
  value: 140 + k,
}));

interface Forecast {
  zone: string;
  unit: string;
  basis: string;
  model: string | null;
  generated_at: string | null;
  horizon_hours: number;
  count: number;
  note?: string;
  data: { ts: string; gco2eq_kwh: number; p10: number | null; p90: number | null }[];
}
interface Skill {
  generated_at: string | null;
  count: number;
  note?: string;
  data: {
    zone: string;
    basis: string;
    bucket: string;
    model: string;
    issues: number;
    n: number;
    rmse: number | null;
    skill_vs_persistence: number | null;
    p10_p90_coverage: number | null;
  }[];
}

describe('forecast API', () => {
  let server: RunningServer;
  let api: ApiClient;
  let dir: string;
  let databaseUrl: string;

  /** A server on the test store, its forecasts prepared; `off`: every request through Fastify. */
  const startOn = async (cache: 'ready' | 'off', ratePerMinute: number) => {
    const config = loadConfig({
      PORT: '0',
      DATABASE_URL: databaseUrl,
      INGEST: 'off',
      LOG_LEVEL: 'silent',
      RATE_LIMIT_PER_MINUTE: String(ratePerMinute),
    });
    const started = await startServer(config, { clock: () => NOW, cache });
    // The first check runs the backtest (unless one is stored) and prepares every zone.
    await started.forecasts.tick();
    return started;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gridco2-forecast-'));
    databaseUrl = `sqlite:${join(dir, 'forecast.db')}`;
    const store = await createStore(databaseUrl);
    await store.upsertReadings([
      ...history('DE', DE_NEWEST),
      ...history('US', US_NEWEST),
      ...GB_READINGS,
    ]);
    await store.upsertForecasts(FW48H);
    await store.close();
    server = await startOn('ready', 1_000_000);
    api = new ApiClient(server.url);
    await api.loadOpenApi();
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const forecast = async (query: string) => {
    const response = await api.get(`/v1/intensity/forecast?${query}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    return response.json as Forecast;
  };

  it('forecasts every interval after the newest reading up to now + horizon, with a band', async () => {
    const body = await forecast('zone=de');
    expect(body).toMatchObject({
      zone: 'DE',
      unit: 'gCO2eq/kWh',
      basis: 'lifecycle',
      generated_at: iso(NOW_S),
      horizon_hours: 48,
    });
    expect(body.model).toMatch(/^(climatology|daily-profile|upstream-regression|persistence)@\d+$/);
    // From 11:00Z (the newest is 10:00Z) to the last hour starting before now + 48 h (13:20Z).
    expect(body.data[0]!.ts).toBe(iso(DE_NEWEST + H));
    expect(body.data.at(-1)!.ts).toBe(iso(HOUR_NOW + 48 * H));
    expect(body.count).toBe(body.data.length);
    expect(body.count).toBe(51);
    for (const point of body.data) {
      expect(point.p10).not.toBeNull();
      expect(point.p10!).toBeLessThanOrEqual(point.p90!);
      // The series is deterministic, swinging over 150 g: the forecast follows it, within a
      // quarter of that swing up to 48 h ahead (its slow wave, ±15 g over 250 h, is what a
      // forecast from 40 days of history misses: 30.2 g at most, 33 hours ahead, measured).
      const truth = deValue(Date.parse(point.ts) / 1000);
      expect(Math.abs(point.gco2eq_kwh - truth), point.ts).toBeLessThan(37.5);
    }
    const short = await forecast('zone=DE&horizon_hours=6');
    expect(short.horizon_hours).toBe(6);
    expect(short.data).toEqual(body.data.slice(0, short.count));
    expect(short.data.at(-1)!.ts).toBe(iso(HOUR_NOW + 6 * H));
  });

  it('never serves a band that leaves out its own value (p10 <= value <= p90)', async () => {
    // GB on a basis has no values here (no mix): GB is checked on its own figure.
    const queries = ['zone=DE', 'zone=DE&basis=direct', 'zone=US', 'zone=GB'];
    let checked = 0;
    for (const query of queries) {
      const body = await forecast(`${query}&horizon_hours=72`);
      expect(body.count, query).toBeGreaterThan(0);
      for (const point of body.data) {
        if (point.p10 === null || point.p90 === null) continue;
        expect(point.p10, `${query} ${point.ts}`).toBeLessThanOrEqual(point.gco2eq_kwh);
        expect(point.gco2eq_kwh, `${query} ${point.ts}`).toBeLessThanOrEqual(point.p90);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(200);
  });

  it('forecasts the US from now too, over the hours the EIA has not published', async () => {
    const body = await forecast('zone=US&horizon_hours=1');
    expect(body.data[0]!.ts).toBe(iso(US_NEWEST + H));
    expect(body.data.at(-1)!.ts).toBe(iso(HOUR_NOW + H));
  });

  it('serves each basis; GB without one is the operator forecast republished unchanged', async () => {
    const direct = await forecast('zone=DE&basis=direct');
    const lifecycle = await forecast('zone=DE');
    expect(direct.basis).toBe('direct');
    // The stand-in store keeps direct at three quarters of lifecycle.
    expect(direct.data[5]!.gco2eq_kwh).toBeCloseTo(0.75 * lifecycle.data[5]!.gco2eq_kwh, 0);

    const gbBody = await forecast('zone=GB&horizon_hours=72');
    expect(gbBody.basis).toBe('operator');
    expect(gbBody.model).toBe('upstream:uk-operator:forecast');
    expect(gbBody.data.map(({ ts, gco2eq_kwh }) => ({ ts, gco2eq_kwh }))).toEqual(
      FW48H.map(({ ts, value }) => ({ ts: iso(ts), gco2eq_kwh: value })),
    );
    // GB on a basis has no mix here, so no values to forecast from.
    const gbLifecycle = await forecast('zone=GB&basis=lifecycle');
    expect(gbLifecycle).toMatchObject({ count: 0, basis: 'lifecycle', model: null, data: [] });
  });

  it('says in words why a zone without history has no forecast', async () => {
    const body = await forecast('zone=FR');
    expect(body).toMatchObject({ zone: 'FR', count: 0, model: null, generated_at: null, data: [] });
    expect(body.note).toMatch(/7 days/);
  });

  it.each([
    ['zone=DE&horizon_hours=0', 400, 'invalid param: horizon_hours'],
    ['zone=DE&horizon_hours=73', 400, 'invalid param: horizon_hours'],
    ['zone=DE&horizon_hours=1.5', 400, 'invalid param: horizon_hours'],
    ['zone=DE&horizon_hours=', 400, 'invalid param: horizon_hours'],
    ['zone=DE&horizon_hours=12&horizon_hours=24', 400, 'invalid param: horizon_hours'],
    ['zone=DE&basis=market', 400, 'invalid param: basis'],
    ['horizon_hours=12', 400, 'missing required param: zone'],
    ['zone=XX', 404, 'unknown or empty zone: XX'],
  ])('%s: %i %s', async (query, status, error) => {
    const response = await api.get(`/v1/intensity/forecast?${query}`);
    expect(response.status).toBe(status);
    expect((response.json as { error: string }).error).toBe(error);
  });

  it('publishes the backtest behind the forecasts, per zone, basis and bucket', async () => {
    const response = await api.get('/v1/intensity/forecast/skill?zone=DE');
    expect(response.status).toBe(200);
    const body = response.json as Skill;
    expect(body.generated_at).toBe(iso(NOW_S));
    expect(body.data.map(({ basis, bucket }) => `${basis} ${bucket}`)).toEqual([
      'lifecycle 1-6',
      'lifecycle 7-24',
      'lifecycle 25-48',
      'lifecycle 49-72',
      'direct 1-6',
      'direct 7-24',
      'direct 25-48',
      'direct 49-72',
    ]);
    for (const row of body.data) {
      expect(row.zone).toBe('DE');
      // Issue times from 14 days after the first value to 72 h before now, one every 6 hours
      // (both ends on the 6-hour grid).
      expect(row.issues).toBeGreaterThanOrEqual((DAYS - 14 - 3) * 4 - 3);
      expect(row.issues).toBeLessThanOrEqual((DAYS - 14 - 3) * 4 + 1);
      expect(row.n, `${row.basis} ${row.bucket}`).toBeGreaterThan(0);
      expect(row.rmse).toBeGreaterThan(0);
      // A daily cycle: holding the last value loses to any model of the cycle.
      expect(row.skill_vs_persistence!).toBeGreaterThan(0.5);
      // The forecast as served, whose band was measured: its coverage is published.
      expect(row.p10_p90_coverage, `${row.basis} ${row.bucket}`).toBeGreaterThan(0);
      expect(row.p10_p90_coverage!).toBeLessThanOrEqual(1);
    }
    // The first bucket is named by the model the forecast names.
    const forecast = (await api.get('/v1/intensity/forecast?zone=DE')).json as { model: string };
    expect(body.data[0]!.model).toBe(forecast.model);
    const all = (await api.get('/v1/intensity/forecast/skill')).json as Skill;
    // GB on its own basis is the operator forecast, measured only over issues collected before
    // an issue time: the one stored here came after them all. FR has no history.
    expect(new Set(all.data.map(({ zone }) => zone))).toEqual(new Set(['DE', 'US']));
    const unknown = await api.get('/v1/intensity/forecast/skill?zone=XX');
    expect(unknown.status).toBe(404);
  });

  it('keeps the member order the skill body had before it was stringified as built', async () => {
    // The schema serializer sent `note` (optional) after `data`; the body is now built that way.
    const keys = (value: unknown) => Object.keys(value as object);
    const rows = (await api.get('/v1/intensity/forecast/skill?zone=DE')).json as Skill;
    expect(keys(rows)).toEqual(['generated_at', 'count', 'data']);
    for (const row of rows.data) expect(keys(row)).toEqual(keys(SkillRow.properties));
    const none = (await api.get('/v1/intensity/forecast/skill?zone=FR')).json as Skill;
    expect(keys(none)).toEqual(['generated_at', 'count', 'data', 'note']);
  });

  it('answers 304 to a current ETag', async () => {
    const first = await api.get('/v1/intensity/forecast?zone=DE');
    const etag = first.headers.get('etag')!;
    expect(etag).toBeTruthy();
    const again = await api.get('/v1/intensity/forecast?zone=DE', { 'if-none-match': etag });
    expect(again.status).toBe(304);
  });
  describe('fast path and framework path', () => {
    // The same store with the reading cache loaded (the fast path answers forecasts) and without
    // it (every request goes through Fastify): both must send the same bytes and headers.
    let throughFramework: RunningServer;
    beforeAll(async () => {
      throughFramework = await startOn('off', 1_000_000);
    });
    afterAll(async () => {
      await throughFramework?.close();
    });

    const comparable = ({ headers }: RawResponse) => {
      const {
        date: _date,
        'ratelimit-remaining': _left,
        'ratelimit-reset': _reset,
        ...rest
      } = headers;
      return rest;
    };

    it.each([
      '/v1/intensity/forecast?zone=DE',
      '/v1/intensity/forecast?zone=+de+&horizon_hours=6&unknown=1',
      '/v1/intensity/forecast?horizon_hours=72&zone=GB',
      '/v1/intensity/forecast?zone=DE&basis=direct&horizon_hours=1',
      '/v1/intensity/forecast?zone=aws:eu-central-1',
      '/v1/intensity/forecast?zone=FR',
      '/v1/intensity/forecast?zone=DE&horizon_hours=0',
      '/v1/intensity/forecast?zone=XX',
    ])('%s: same bytes and headers, GET and HEAD', async (path) => {
      for (const method of ['GET', 'HEAD'] as const) {
        for (const encoding of [undefined, 'br', 'gzip', 'br;q=0, gzip;q=0']) {
          const headers: Record<string, string> = encoding ? { 'accept-encoding': encoding } : {};
          const fast = await rawRequest(server.url, path, headers, method);
          const framework = await rawRequest(throughFramework.url, path, headers, method);
          const label = `${method} ${encoding ?? 'identity'}`;
          expect(fast.status, label).toBe(framework.status);
          expect(fast.raw.equals(framework.raw), label).toBe(true);
          expect(comparable(fast), label).toEqual(comparable(framework));
          expect(fast.headers['ratelimit-remaining'], label).toMatch(/^\d+$/);
          if (method === 'HEAD') expect(fast.raw.length).toBe(0);
        }
      }
    });

    it('answers successful forecasts on the fast path, errors through Fastify', async () => {
      // The fast path writes its headers in its own order, CORS first, so the two paths can be
      // told apart on the wire although they send the same set.
      const order = async (url: string, path: string) =>
        (await rawRequest(url, path)).names.filter((name) => name !== 'date').join(' ');
      const ok = '/v1/intensity/forecast?zone=DE';
      expect(await order(server.url, ok)).not.toBe(await order(throughFramework.url, ok));
      const bad = '/v1/intensity/forecast?zone=XX';
      expect(await order(server.url, bad)).toBe(await order(throughFramework.url, bad));
    });

    it('compresses a forecast for clients that accept it, with its own ETag and 304', async () => {
      const path = '/v1/intensity/forecast?zone=DE';
      for (const url of [server.url, throughFramework.url]) {
        const plain = await rawRequest(url, path);
        expect(plain.headers['content-encoding']).toBeUndefined();
        expect(plain.headers['vary']).toBe('accept-encoding');
        for (const [encoding, decode] of [
          ['br', brotliDecompressSync],
          ['gzip', gunzipSync],
        ] as const) {
          const packed = await rawRequest(url, path, { 'accept-encoding': `${encoding}, deflate` });
          expect(packed.headers['content-encoding']).toBe(encoding);
          expect(decode(packed.raw).equals(plain.raw)).toBe(true);
          expect(packed.headers['etag']).toBe(
            `${plain.headers['etag']!.slice(0, -1)}-${encoding}"`,
          );
          const again = await rawRequest(url, path, {
            'accept-encoding': encoding,
            'if-none-match': packed.headers['etag']!,
          });
          expect(again.status).toBe(304);
          // The identity tag does not match the compressed representation.
          const other = await rawRequest(url, path, {
            'accept-encoding': encoding,
            'if-none-match': plain.headers['etag']!,
          });
          expect(other.status).toBe(200);
        }
      }
    });

    it('answers 304 to a current ETag the same way on both paths, HEAD included', async () => {
      const path = '/v1/intensity/forecast?zone=DE&horizon_hours=12';
      const etag = (await rawRequest(server.url, path)).headers['etag']!;
      expect(etag).toMatch(/^"[\w-]+"$/);
      for (const method of ['GET', 'HEAD'] as const) {
        for (const condition of [etag, `"other", W/${etag}`, '*']) {
          const headers = { 'if-none-match': condition };
          const fast = await rawRequest(server.url, path, headers, method);
          const framework = await rawRequest(throughFramework.url, path, headers, method);
          expect(fast.status).toBe(304);
          expect(framework.status).toBe(304);
          expect(fast.raw.length + framework.raw.length).toBe(0);
          expect(comparable(fast)).toEqual(comparable(framework));
          expect(fast.headers['etag']).toBe(etag);
          expect(fast.headers['cache-control']).toBe('public, max-age=300');
        }
      }
      const stale = await rawRequest(server.url, path, { 'if-none-match': '"stale"' });
      expect(stale.status).toBe(200);
    });

    it('counts every forecast request against the rate limit, 429 once it is spent', async () => {
      // Two fresh servers with a limit of 4 a minute get the same sequence: remaining counts
      // down alike, a 400 counts too, and the fifth request is refused with the same body.
      const limited = [await startOn('ready', 4), await startOn('off', 4)];
      try {
        const sequence = [
          '/v1/intensity/forecast?zone=DE',
          '/v1/intensity/forecast?zone=DE&basis=market',
          '/v1/intensity/forecast?zone=GB',
          '/v1/intensity/forecast?zone=FR',
          '/v1/intensity/forecast?zone=DE',
        ];
        const answers = await Promise.all(
          limited.map(async ({ url }) => {
            const responses: RawResponse[] = [];
            for (const path of sequence) responses.push(await rawRequest(url, path));
            responses.push(await rawRequest(url, sequence[0]!, {}, 'HEAD'));
            return responses;
          }),
        );
        const [fast, framework] = answers as [RawResponse[], RawResponse[]];
        expect(fast.map(({ status }) => status)).toEqual([200, 400, 200, 200, 429, 429]);
        expect(fast.map(({ headers }) => headers['ratelimit-remaining'])).toEqual([
          '3',
          '2',
          '1',
          '0',
          '0',
          '0',
        ]);
        fast.forEach((response, i) => {
          const other = framework[i]!;
          expect(response.status, sequence[i]).toBe(other.status);
          expect(response.raw.equals(other.raw), sequence[i]).toBe(true);
          const { date: _a, 'ratelimit-reset': _b, ...headers } = response.headers;
          const { date: _c, 'ratelimit-reset': _d, ...otherHeaders } = other.headers;
          expect(headers, sequence[i]).toEqual(otherHeaders);
          expect(response.headers['ratelimit-limit']).toBe('4');
          expect(Number(response.headers['ratelimit-reset'])).toBeGreaterThan(0);
        });
        expect(JSON.parse(fast[4]!.raw.toString())).toMatchObject({
          error: expect.stringMatching(/rate limit/),
        });
        expect(fast[4]!.headers['retry-after']).toMatch(/^\d+$/);
      } finally {
        await Promise.all(limited.map((running) => running.close()));
      }
    });
  });
});

interface RawResponse {
  status: number;
  headers: Record<string, string | undefined>;
  /** Header names in the order they were sent. */
  names: string[];
  raw: Buffer;
}

/** One request over node:http: the bytes as sent (no decompression) and the headers in order. */
function rawRequest(
  baseUrl: string,
  path: string,
  headers: Record<string, string> = {},
  method: 'GET' | 'HEAD' = 'GET',
): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ hostname, port, path, method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers as Record<string, string | undefined>,
          names: response.rawHeaders
            .filter((_, i) => i % 2 === 0)
            .map((name) => name.toLowerCase()),
          raw: Buffer.concat(chunks),
        }),
      );
    });
    request.on('error', reject);
    request.end();
  });
}
