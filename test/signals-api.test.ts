import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { Basis } from '../src/core/factors.js';
import type { StoredReading } from '../src/core/reading.js';
import type { ForecastBook, ZoneForecast } from '../src/forecast/book.js';
import { buildApp } from '../src/http/app.js';
import { ReadingCache } from '../src/read/reading-cache.js';
import { createStore } from '../src/storage/create-store.js';
import type { Store } from '../src/storage/store.js';
import { ApiClient } from './support/api-client.js';
import { computed, gb, gbForecast, H, HOUR_NOW, iso, NOW } from './support/fixed-store.js';
import { createThrowawayDatabase, isPostgresAvailable } from './support/postgres.js';

/**
 * Black-box suite of `GET /v1/intensity/level` and `GET /v1/intensity/stats` (extensions §11,
 * §12) over real HTTP, with the reading cache loaded and without it (SQLite, and PostgreSQL where
 * it runs). Every figure is checked against a brute-force computation from the `/v1/intensity`
 * pages of the same server (following `Link: rel="next"`), written from the spec's formulas.
 */

const HALF = 1800;
const DAY = 86_400;
/** A deterministic pseudo-random walk with many repeated values (ties matter to mid-ranks). */
function series(seed: number, count: number, low: number, high: number): number[] {
  let state = seed;
  const values: number[] = [];
  for (let i = 0; i < count; i++) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    values.push(low + (state % ((high - low) * 4)) / 4 + 0.04 * (i % 3));
  }
  return values;
}

// DE: 45 days hourly up to 12:00 (values with ties and 2-3 decimals); a hole of 30 hours.
const DE_LAST = HOUR_NOW - H;
const DE_VALUES = series(7, 45 * 24, 80, 520);
const DE: StoredReading[] = DE_VALUES.map((value, i) =>
  computed('DE', DE_LAST - (DE_VALUES.length - 1 - i) * H, value),
).filter((reading) => reading.ts < DE_LAST - 200 * H || reading.ts >= DE_LAST - 170 * H);
// GB: 35 days of half hours up to 12:30, and the operator's provisional 13:00 (served as newest).
const GB_LAST = HOUR_NOW - HALF;
const GB_VALUES = series(11, 35 * 48, 20, 260);
const GB = GB_VALUES.map((value, i) => gb(GB_LAST - (GB_VALUES.length - 1 - i) * HALF, value));
// FR: 5 days only: not enough for a level.
const FR = series(3, 5 * 24, 10, 60).map((value, i) =>
  computed('FR', DE_LAST - (119 - i) * H, value),
);

/** A forecast from the hour after DE's newest reading, 48 h, crossing the reference's range. */
function deForecast(basis: Basis | undefined): ZoneForecast {
  const values = Float64Array.from({ length: 48 }, (_, i) => 60 + i * 20.37);
  return {
    zone: 'DE',
    basis: basis ?? 'lifecycle',
    model: 'test@1',
    generatedAt: NOW / 1000,
    startTs: DE_LAST + H,
    stepSeconds: H,
    values,
    p10: values,
    p90: values,
  };
}
const BOOK: ForecastBook = {
  forecast: (zone, basis) => (zone === 'DE' ? deForecast(basis) : null),
};

interface Point {
  ts: string;
  gco2eq_kwh: number;
}

const postgres = await isPostgresAvailable('levels and statistics suite (PostgreSQL)');
const cases = [
  { backend: 'sqlite', cacheMode: 'ready' },
  { backend: 'sqlite', cacheMode: 'off' },
  ...(postgres ? [{ backend: 'postgres', cacheMode: 'ready' }] : []),
  ...(postgres ? [{ backend: 'postgres', cacheMode: 'off' }] : []),
] as const;

describe.each(cases)(
  'levels and statistics on $backend, reading cache $cacheMode',
  ({ backend, cacheMode }) => {
    let drop: () => Promise<void> = async () => undefined;
    let store: Store;
    let cache: ReadingCache | undefined;
    let app: FastifyInstance;
    let api: ApiClient;

    beforeAll(async () => {
      let databaseUrl: string;
      if (backend === 'sqlite') {
        const dir = mkdtempSync(join(tmpdir(), 'gridco2-signals-'));
        databaseUrl = `sqlite:${join(dir, 'signals.db')}`;
        drop = async () => rmSync(dir, { recursive: true, force: true });
      } else {
        const database = await createThrowawayDatabase();
        databaseUrl = database.url;
        drop = () => database.drop();
      }
      store = await createStore(databaseUrl);
      await store.upsertReadings([...DE, ...GB, ...FR]);
      await store.upsertForecasts([gbForecast(HOUR_NOW, 33.3)]);
      if (cacheMode === 'ready') {
        cache = new ReadingCache(store, undefined);
        await cache.refresh();
      }
      app = await buildApp({
        config: loadConfig({
          DATABASE_URL: databaseUrl,
          LOG_LEVEL: 'silent',
          RATE_LIMIT_PER_MINUTE: '1000000',
          METRICS: 'off',
          DASHBOARD: 'off',
        }),
        store,
        clock: () => NOW,
        forecasts: BOOK,
        ...(cache && { cache }),
      });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as { port: number };
      api = new ApiClient(`http://127.0.0.1:${port}`);
      await api.loadOpenApi();
    });

    afterAll(async () => {
      await app?.close();
      await cache?.stop();
      await store?.close();
      await drop();
    });

    /** Every point of `/v1/intensity` in the window, page after page. */
    async function history(
      zone: string,
      from: number,
      to: number,
      basis?: Basis,
    ): Promise<Point[]> {
      const points: Point[] = [];
      let path: string | null =
        `/v1/intensity?zone=${zone}&from=${iso(from)}&to=${iso(to)}` +
        (basis ? `&basis=${basis}` : '');
      while (path) {
        const response = await api.get(path);
        expect(response.status, response.text).toBe(200);
        points.push(...(response.json as { data: Point[] }).data);
        const link = response.headers.get('link');
        path = link ? /^<([^>]+)>/.exec(link)![1]! : null;
      }
      return points;
    }

    const percentileOf = (values: number[], v: number) => {
      const below = values.filter((x) => x < v).length;
      const equal = values.filter((x) => x === v).length;
      // Tenths of a percent, half up, in integers.
      const numerator = 1000 * (2 * below + equal);
      return Math.floor((2 * numerator + 2 * values.length) / (4 * values.length)) / 10;
    };
    const levelOf = (p: number) =>
      p < 10 ? 'very-low' : p < 30 ? 'low' : p < 70 ? 'moderate' : p < 90 ? 'high' : 'very-high';

    for (const basis of [undefined, 'lifecycle', 'direct'] as const) {
      it(`places now and the forecast as brute force over the same 30 days (basis ${basis ?? 'default'})`, async () => {
        const query = `zones=DE,GB,FR&horizon_hours=24${basis ? `&basis=${basis}` : ''}`;
        const response = await api.get(`/v1/intensity/level?${query}`);
        expect(response.status, response.text).toBe(200);
        expect(response.headers.get('cache-control')).toBe('public, max-age=300');
        expect(response.headers.get('etag')).toMatch(/^"/);
        const body = response.json as {
          basis: string;
          window_days: number;
          thresholds: Record<string, number>;
          data: {
            zone: string;
            reference: { from: string; to: string; count: number };
            now: {
              ts: string;
              gco2eq_kwh: number;
              method: string;
              percentile: number | null;
              level: string | null;
            };
            forecast: {
              ts: string;
              gco2eq_kwh: number;
              percentile: number | null;
              level: string | null;
            }[];
            note?: string;
          }[];
        };
        expect(body.basis).toBe(basis ?? 'default');
        expect(body.window_days).toBe(30);
        expect(body.thresholds).toEqual({ 'very-low': 10, low: 30, moderate: 70, high: 90 });
        // GB on a basis has no values (the operator's figures carry no mix): it is left out.
        expect(body.data.map((entry) => entry.zone)).toEqual(
          basis ? ['DE', 'FR'] : ['DE', 'FR', 'GB'],
        );
        for (const entry of body.data) {
          const step = entry.zone === 'GB' ? HALF : H;
          const latest = (
            await api.get(
              `/v1/intensity/latest?zone=${entry.zone}${basis ? `&basis=${basis}` : ''}`,
            )
          ).json as { data: Point[] };
          const newest = latest.data[0]!;
          expect(entry.now.ts).toBe(newest.ts);
          expect(entry.now.gco2eq_kwh).toBe(newest.gco2eq_kwh);
          const newestTs = Date.parse(newest.ts) / 1000;
          const from = newestTs + step - 30 * DAY;
          expect(entry.reference).toMatchObject({ from: iso(from), to: iso(newestTs + step) });
          const values = (await history(entry.zone, from, newestTs + step, basis)).map(
            (p) => p.gco2eq_kwh,
          );
          expect(entry.reference.count).toBe(values.length);
          if (entry.zone === 'FR') {
            expect(entry.now).toMatchObject({ percentile: null, level: null });
            expect(entry.note).toContain('fewer than 7 days');
            continue;
          }
          expect(values.length).toBeGreaterThan((7 * DAY) / step);
          expect(entry.now.percentile).toBe(percentileOf(values, entry.now.gco2eq_kwh));
          expect(entry.now.level).toBe(levelOf(entry.now.percentile!));
          if (entry.zone === 'DE') {
            expect(entry.forecast).toHaveLength(24);
            expect(entry.forecast[0]!.ts).toBe(iso(DE_LAST + H));
            const levels = new Set<string>();
            for (const interval of entry.forecast) {
              expect(interval.percentile).toBe(percentileOf(values, interval.gco2eq_kwh));
              expect(interval.level).toBe(levelOf(interval.percentile!));
              levels.add(interval.level!);
            }
            // The forecast walks through the reference's range: every band is met.
            expect(levels.size).toBe(5);
          } else {
            expect(entry.forecast).toEqual([]);
          }
        }
      });
    }

    it('answers one zone, horizon 0, 304 on its ETag, and the errors of §11', async () => {
      const one = await api.get('/v1/intensity/level?zone=de&horizon_hours=0');
      expect(one.status).toBe(200);
      const entry = (one.json as { data: { zone: string; forecast: unknown[] }[] }).data;
      expect(entry.map((e) => e.zone)).toEqual(['DE']);
      expect(entry[0]!.forecast).toEqual([]);
      const again = await api.get('/v1/intensity/level?zone=de&horizon_hours=0', {
        'if-none-match': one.headers.get('etag')!,
      });
      expect(again.status).toBe(304);
      expect((await api.get('/v1/intensity/level?zone=de&horizon_hours=0')).text).toBe(one.text);
      const all = await api.get('/v1/intensity/level?zones=all');
      expect((all.json as { data: { zone: string }[] }).data.map((e) => e.zone)).toEqual([
        'DE',
        'FR',
        'GB',
      ]);
      // Compressed as the data endpoints are, when accepted: the same JSON, an ETag of its own.
      const packed = await api.get('/v1/intensity/level?zones=all', { 'accept-encoding': 'br' });
      expect(packed.headers.get('content-encoding')).toBe('br');
      expect(packed.headers.get('vary')).toBe('accept-encoding');
      const plain = await api.get('/v1/intensity/level?zones=all', {
        'accept-encoding': 'identity',
      });
      expect(plain.headers.get('content-encoding')).toBeNull();
      expect(plain.text).toBe(packed.text);
      expect(plain.headers.get('etag')).not.toBe(packed.headers.get('etag'));
      const errors: [string, number, string][] = [
        ['', 400, 'missing required param: zone'],
        ['zone=DE&zones=FR', 400, 'invalid param: zones'],
        ['zone=DE&horizon_hours=73', 400, 'invalid param: horizon_hours'],
        ['zone=DE&horizon_hours=-1', 400, 'invalid param: horizon_hours'],
        ['zone=DE&basis=x', 400, 'invalid param: basis'],
        ['zone=XX', 404, 'unknown or empty zone: XX'],
        ['zone=PL', 404, 'unknown or empty zone: PL'],
        ['zone=DE&zone=FR', 400, 'invalid param: zone'],
      ];
      for (const [query, status, error] of errors) {
        const response = await api.get(`/v1/intensity/level?${query}`);
        expect([response.status, (response.json as { error: string }).error], query).toEqual([
          status,
          error,
        ]);
      }
    });

    it('gives the statistics of random windows as brute force from /v1/intensity pages', async () => {
      let state = backend === 'sqlite' ? 5 : 9;
      const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      const windows: [string, number, number, Basis | undefined][] = [
        ['DE', DE_LAST - 50 * DAY, DE_LAST + 5 * H, undefined],
        ['GB', GB_LAST - 3 * DAY + 17 * 60, GB_LAST + H, undefined],
        ['DE', DE_LAST - 400 * DAY + H, DE_LAST + H, 'direct'],
      ];
      for (let i = 0; i < 6; i++) {
        const zone = (['DE', 'FR', 'GB'] as const)[i % 3]!;
        const from = DE_LAST - Math.floor(random() * 40 * DAY);
        windows.push([
          zone,
          from,
          from + 1 + Math.floor(random() * 20 * DAY),
          i % 2 ? 'lifecycle' : undefined,
        ]);
      }
      for (const [zone, from, to, basis] of windows) {
        const query =
          `zone=${zone}&from=${iso(from)}&to=${iso(to)}&energy_kwh=2.5` +
          (basis ? `&basis=${basis}` : '');
        const response = await api.get(`/v1/intensity/stats?${query}`);
        expect(response.status, response.text).toBe(200);
        expect(response.headers.get('cache-control')).toBe('max-age=600');
        const stats = response.json as Record<string, unknown>;
        const points = await history(zone, from, to, basis);
        const step = zone === 'GB' ? HALF : H;
        const values = points.map((p) => p.gco2eq_kwh);
        const tenths = values.map((v) => Math.round(v * 10));
        const half = (sum: number, n: number) => Math.floor((2 * sum + n) / (2 * n)) / 10;
        const meanOf = (list: number[]) =>
          half(
            list.reduce((s, v) => s + v, 0),
            list.length,
          );
        const sorted = [...tenths].sort((a, b) => a - b);
        const q = (p: number) => {
          const at = (sorted.length - 1) * p;
          const lo = Math.floor(at);
          const hi = Math.min(lo + 1, sorted.length - 1);
          return Math.round(sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo)) / 10;
        };
        const covered = points.reduce(
          (s, p) => s + Math.min(step, to - Date.parse(p.ts) / 1000),
          0,
        );
        const byHour = Array.from({ length: 24 }, (_, h) => {
          const inHour = tenths.filter((_, k) => new Date(points[k]!.ts).getUTCHours() === h);
          return inHour.length ? meanOf(inHour) : null;
        });
        const mean = values.length ? meanOf(tenths) : null;
        expect(stats, query).toEqual({
          zone,
          basis: basis ?? 'default',
          unit: 'gCO2eq/kWh',
          from: iso(from),
          to: iso(to),
          count: values.length,
          coverage: Number((covered / (to - from)).toFixed(3)),
          mean,
          min: values.length ? Math.min(...values) : null,
          max: values.length ? Math.max(...values) : null,
          p10: values.length ? q(0.1) : null,
          p50: values.length ? q(0.5) : null,
          p90: values.length ? q(0.9) : null,
          by_hour_utc: byHour,
          energy_kwh: 2.5,
          emissions_g: mean === null ? null : Number((2.5 * mean).toFixed(1)),
        });
      }
    });

    it('refuses windows over 400 days and bad energy, and answers an empty window with nulls', async () => {
      const long = await api.get(
        `/v1/intensity/stats?zone=DE&from=${iso(DE_LAST - 401 * DAY)}&to=${iso(DE_LAST)}`,
      );
      expect([long.status, (long.json as { error: string }).error]).toEqual([
        400,
        'invalid window: at most 400 days',
      ]);
      const energy = await api.get('/v1/intensity/stats?zone=DE&energy_kwh=0');
      expect([energy.status, (energy.json as { error: string }).error]).toEqual([
        400,
        'invalid param: energy_kwh',
      ]);
      expect((await api.get('/v1/intensity/stats')).status).toBe(400);
      expect((await api.get('/v1/intensity/stats?zone=XX')).status).toBe(404);
      const empty = await api.get(
        `/v1/intensity/stats?zone=DE&from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z`,
      );
      expect(empty.json).toMatchObject({ count: 0, coverage: 0, mean: null, p90: null });
      expect((empty.json as { by_hour_utc: unknown[] }).by_hour_utc).toEqual(
        new Array(24).fill(null),
      );
      expect(empty.json).not.toHaveProperty('emissions_g');
      // The default window: the last 24 hours before the request.
      const day = (await api.get('/v1/intensity/stats?zone=DE')).json as {
        from: string;
        to: string;
        count: number;
      };
      expect(day).toMatchObject({ from: iso(NOW / 1000 - DAY), to: iso(NOW / 1000), count: 23 });
    });
  },
);
