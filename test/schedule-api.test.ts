import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { Basis } from '../src/core/factors.js';
import { ZONES } from '../src/core/zones.js';
import type { ForecastBook, ZoneForecast } from '../src/forecast/book.js';
import { buildApp } from '../src/http/app.js';
import { ScheduleResponse, ScheduleWindow } from '../src/http/contract/schemas.js';
import { ReadingCache } from '../src/read/reading-cache.js';
import { createStore } from '../src/storage/create-store.js';
import type { Store } from '../src/storage/store.js';
import { ApiClient } from './support/api-client.js';
import { computed, gb, gbForecast, H, HOUR_NOW, iso, NOW } from './support/fixed-store.js';
import { createThrowawayDatabase, isPostgresAvailable } from './support/postgres.js';

/**
 * Black-box suite of `GET /v1/schedule` (extensions §5) over real HTTP, with the reading cache
 * loaded and without it (then published values come from the store: SQLite, and PostgreSQL where
 * it runs). Forecasts come from a
 * ForecastBook built here from known series: the seam the app reads, not our store. Every
 * response is validated against the OpenAPI document.
 *
 * The clock is pinned at 13:20Z, so with the default earliest the first whole hour is 14:00 and
 * the first whole half hour of GB 13:30. Every forecast starts at 13:00 (HOUR_NOW).
 */

const HALF = 1800;
const at = (hours: number) => HOUR_NOW + hours * H;

/** An hourly (or half-hourly) forecast from 13:00 of `length` intervals: `base`, with dips. */
function forecast(
  zone: string,
  base: number,
  dips: Record<number, number>,
  options: { step?: number; length?: number; p90?: Record<number, number>; startTs?: number } = {},
): ZoneForecast {
  const step = options.step ?? H;
  const length = options.length ?? (80 * H) / step;
  const values = new Float64Array(length).fill(base);
  for (const [index, value] of Object.entries(dips)) values[Number(index)] = value;
  const p90 = values.map((value) => value + 40);
  for (const [index, value] of Object.entries(options.p90 ?? {})) p90[Number(index)] = value;
  return {
    zone,
    basis: 'lifecycle',
    model: 'test@1',
    generatedAt: NOW / 1000,
    startTs: options.startTs ?? HOUR_NOW,
    stepSeconds: step,
    values,
    p10: values.map((value) => value - 40),
    p90,
  };
}

// DE: 400 but 150 at 18:00, 160 at 20:00 and 22:00; its p90 is high at 18:00 (300), so the
// pessimistic plan goes to 20:00 (p90 200... 160 + 40) instead.
const DE_FORECAST = forecast('DE', 400, { 5: 150, 7: 160, 9: 160 }, { p90: { 5: 300 } });
// FR: 90 but 50 at 16:00 and 70 at 17:00.
const FR_FORECAST = forecast('FR', 90, { 3: 50, 4: 70 });
// GB on a basis, half-hourly: 200 but 40 at 17:00 and 60 at 17:30: a one-hour job there has 50,
// as FR's at 16:00 (which starts earlier and so wins the tie).
const GB_FORECAST = forecast('GB', 200, { 8: 40, 9: 60 }, { step: HALF });
// DE on the direct basis: 300 but 10 at 15:00.
const DE_DIRECT = forecast('DE', 300, { 2: 10 });
// zones=all: every other zone flat at 250 + its place; NO-2 lowest at 20 from 19:00 for 3 hours.
const NO2_FORECAST = forecast('NO-2', 300, { 6: 20, 7: 20, 8: 20 });
// US lags: its forecast starts at 08:00, after its newest published hour (07:00, 500); 600 but
// 30 at 09:00. Its published 09:00 (5, as if revised later) is never planned on.
const US_FORECAST = forecast('US', 600, { 1: 30 }, { startTs: HOUR_NOW - 5 * H });

/** The book of the test: a forecast per zone and basis; PL (and GB without basis) have none. */
class FixedBook implements ForecastBook {
  forecast(zone: string, basis: Basis | undefined): ZoneForecast | null {
    if (zone === 'PL') return null;
    if (zone === 'GB') return basis === undefined ? null : GB_FORECAST;
    if (zone === 'DE') return basis === 'direct' ? DE_DIRECT : DE_FORECAST;
    if (zone === 'FR') return FR_FORECAST;
    if (zone === 'NO-2') return NO2_FORECAST;
    if (zone === 'US') return US_FORECAST;
    const place = ZONES.findIndex((candidate) => candidate.code === zone);
    return forecast(zone, 250 + place, {});
  }
}

// Published values: DE 08:00-12:00 (direct = 0.75 x value, as the store keeps it); GB's operator
// half hours 11:00-12:30 and its provisional forecast at 13:00 (very low: never planned on).
const DE_PUBLISHED = [310, 305.04, 120, 480, 330];
const READINGS = [
  ...DE_PUBLISHED.map((value, i) => computed('DE', at(-5 + i), value)),
  ...[90, 80, 70, 95].map((value, i) => gb(HOUR_NOW - 2 * H + i * HALF, value)),
  computed('US', at(-6), 500),
  computed('US', at(-4), 5),
];

interface Window {
  zone: string;
  start: string;
  end: string;
  gco2eq_kwh: number;
}
interface Schedule {
  unit: string;
  basis: string;
  estimator: string;
  duration_minutes: number;
  earliest: string;
  deadline: string;
  best: Window & { slots?: { ts: string; gco2eq_kwh: number }[] };
  now: Window | null;
  savings: { gco2eq_kwh: number; pct: number; grams?: number } | null;
  options: Window[];
  note?: string;
}

const win = (zone: string, start: number, end: number, gco2eq_kwh: number): Window => ({
  zone,
  start: iso(start),
  end: iso(end),
  gco2eq_kwh,
});

const postgres = await isPostgresAvailable('schedule suite (PostgreSQL)');
const cases = [
  { backend: 'sqlite', cacheMode: 'ready' },
  { backend: 'sqlite', cacheMode: 'off' },
  ...(postgres ? [{ backend: 'postgres', cacheMode: 'off' }] : []),
] as const;

describe.each(cases)(
  'GET /v1/schedule on $backend, reading cache $cacheMode',
  ({ backend, cacheMode }) => {
    let drop: () => Promise<void> = async () => undefined;
    let store: Store;
    let cache: ReadingCache | undefined;
    let app: FastifyInstance;
    let api: ApiClient;

    beforeAll(async () => {
      let databaseUrl: string;
      if (backend === 'sqlite') {
        const dir = mkdtempSync(join(tmpdir(), 'gridco2-schedule-'));
        databaseUrl = `sqlite:${join(dir, 'schedule.db')}`;
        drop = async () => rmSync(dir, { recursive: true, force: true });
      } else {
        const database = await createThrowawayDatabase();
        databaseUrl = database.url;
        drop = () => database.drop();
      }
      store = await createStore(databaseUrl);
      await store.upsertReadings(READINGS);
      await store.upsertForecasts([gbForecast(HOUR_NOW, 5)]);
      if (cacheMode === 'ready') {
        cache = new ReadingCache(store, undefined);
        await cache.refresh();
      }
      app = await buildApp({
        config: loadConfig({
          DATABASE_URL: databaseUrl,
          LOG_LEVEL: 'silent',
          RATE_LIMIT_PER_MINUTE: '1000000',
        }),
        store,
        clock: () => NOW,
        forecasts: new FixedBook(),
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

    const schedule = async (query: string): Promise<Schedule> => {
      const response = await api.get(`/v1/schedule?${query}`);
      expect(response.status, response.text).toBe(200);
      return response.json as Schedule;
    };

    it('places a job in the zone and hour of lowest forecast; now is the first whole hour at home', async () => {
      const response = await api.get('/v1/schedule?zones=DE,FR,GB&basis=lifecycle&energy_kwh=2');
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('etag')).toBeNull();
      expect(response.headers.get('ratelimit-limit')).toBe('1000000');
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.json).toEqual({
        unit: 'gCO2eq/kWh',
        basis: 'lifecycle',
        estimator: 'expected',
        duration_minutes: 60,
        earliest: '2026-11-21T13:20:00Z',
        deadline: '2026-11-22T13:20:00Z',
        // FR at 16:00 and GB at 17:00 both average 50: the earlier start wins.
        best: win('FR', at(3), at(4), 50),
        now: win('DE', at(1), at(2), 400),
        savings: { gco2eq_kwh: 350, pct: 87.5, grams: 700 },
        options: [
          win('FR', at(3), at(4), 50),
          win('GB', at(4), at(5), 50),
          win('DE', at(5), at(6), 150),
        ],
      });
    });

    it('takes now in the first zone listed, and breaks an equal start by the order listed', async () => {
      const body = await schedule('zones=GB,FR,DE&basis=lifecycle');
      expect(body.now).toEqual(win('GB', at(0.5), at(1.5), 200));
      expect(body.savings).toEqual({ gco2eq_kwh: 150, pct: 75 });
      expect(body.options.map((option) => option.zone)).toEqual(['FR', 'GB', 'DE']);
      // A zone listed twice counts once.
      const twice = await schedule('zones=FR,fr');
      expect(twice.options).toEqual([win('FR', at(3), at(4), 50)]);
    });

    it('rounds the duration up to whole intervals of each zone', async () => {
      // 45 minutes: one hour in FR (16:00-17:00), two half hours in GB (17:00-18:00, mean 50).
      const body = await schedule('zones=GB,FR&basis=lifecycle&duration_minutes=45');
      expect(body.duration_minutes).toBe(45);
      expect(body.options).toEqual([win('FR', at(3), at(4), 50), win('GB', at(4), at(5), 50)]);
      // 30 minutes: GB's 17:00 half hour alone (40) beats FR's hour.
      const half = await schedule('zones=FR,GB&basis=lifecycle&duration_minutes=30');
      expect(half.best).toEqual(win('GB', at(4), at(4.5), 40));
      expect(half.now).toEqual(win('FR', at(1), at(2), 90));
      expect(half.savings).toEqual({ gco2eq_kwh: 50, pct: 55.6 });
    });

    it('runs a contiguous job over several hours, and an interruptible one in the lowest hours', async () => {
      const contiguous = await schedule('zones=DE&duration_minutes=120');
      // 17:00-19:00 and 18:00-20:00 both average 275: the earlier.
      expect(contiguous.best).toEqual(win('DE', at(4), at(6), 275));
      expect(contiguous.now).toEqual(win('DE', at(1), at(3), 400));
      const interruptible = await schedule('zones=DE&duration_minutes=120&interruptible=true');
      // 150 at 18:00, then the earlier of the two 160s (20:00 and 22:00).
      expect(interruptible.best).toEqual({
        ...win('DE', at(5), at(8), 155),
        slots: [
          { ts: iso(at(5)), gco2eq_kwh: 150 },
          { ts: iso(at(7)), gco2eq_kwh: 160 },
        ],
      });
      expect(interruptible.now).toEqual(win('DE', at(1), at(3), 400));
      expect(interruptible.options).toEqual([win('DE', at(5), at(8), 155)]);
      expect(interruptible.savings).toEqual({ gco2eq_kwh: 245, pct: 61.3 });
      const notInterrupted = await schedule('zones=DE&duration_minutes=60&interruptible=false');
      expect(notInterrupted.best.slots).toBeUndefined();
    });

    it('plans on the p90 band with estimator=p90', async () => {
      const body = await schedule('zones=DE&estimator=p90');
      expect(body.estimator).toBe('p90');
      // p90: 18:00 is 300, 20:00 is 200, elsewhere 440.
      expect(body.best).toEqual(win('DE', at(7), at(8), 200));
      expect(body.now).toEqual(win('DE', at(1), at(2), 440));
    });

    it('uses published values before the forecast starts, exact under p90 too', async () => {
      const earliest = iso(at(-3));
      const deadline = iso(at(3));
      const body = await schedule(`zones=DE&earliest=${earliest}&deadline=${deadline}`);
      expect(body.earliest).toBe(earliest);
      expect(body.best).toEqual(win('DE', at(-3), at(-2), 120));
      expect(body.now).toEqual(win('DE', at(-3), at(-2), 120));
      expect(body.savings).toEqual({ gco2eq_kwh: 0, pct: 0 });
      // Two hours: 10:00-12:00 (120, 480) = 300; 12:00-14:00 (330, then the forecast 400) = 365.
      const two = await schedule(
        `zones=DE&earliest=${earliest}&deadline=${deadline}&duration_minutes=120`,
      );
      expect(two.options).toEqual([win('DE', at(-3), at(-1), 300)]);
      const p90 = await schedule(
        `zones=DE&earliest=${earliest}&deadline=${deadline}&duration_minutes=180&estimator=p90`,
      );
      // 10:00-13:00 from published values only: (120 + 480 + 330) / 3 = 310; any later start
      // takes p90 hours of 440.
      expect(p90.best).toEqual(win('DE', at(-3), at(0), 310));
      // A value of many decimals is planned on as served (305.04 -> 305.0).
      const early = await schedule(
        `zones=DE&earliest=${iso(at(-4))}&deadline=${iso(at(-3))}&duration_minutes=60`,
      );
      expect(early.best.gco2eq_kwh).toBe(305);
    });

    it('plans on the forecast from its start, also where that start is in the past', async () => {
      const body = await schedule(`zones=US&earliest=${iso(at(-7))}&deadline=${iso(at(-2))}`);
      // 06:00 has no value; 07:00 published 500; from 08:00 the forecast: 600, 30 at 09:00.
      expect(body.best).toEqual(win('US', at(-4), at(-3), 30));
      expect(body.now).toBeNull();
      expect(body.note).toBe('now is null: the job cannot start at earliest in US.');
      const two = await schedule(
        `zones=US&earliest=${iso(at(-6))}&deadline=${iso(at(-2))}&duration_minutes=120`,
      );
      expect(two.options).toEqual([win('US', at(-5), at(-3), 315)]);
      expect(two.now).toEqual(win('US', at(-6), at(-4), 550));
    });

    it('reads published values and the forecast on the basis asked', async () => {
      const earliest = iso(at(-3));
      const body = await schedule(
        `zones=DE&basis=direct&earliest=${earliest}&deadline=${iso(at(3))}`,
      );
      expect(body.basis).toBe('direct');
      // Direct: published 0.75 x (120, 480, 330) = 90, 360, 247.5; forecast 300, 10 at 15:00.
      expect(body.best).toEqual(win('DE', at(2), at(3), 10));
      expect(body.now).toEqual(win('DE', at(-3), at(-2), 90));
      const own = await schedule(`zones=DE&earliest=${earliest}&deadline=${iso(at(3))}`);
      expect(own.basis).toBe('default');
    });

    it('never plans on the GB provisional forecast reading; GB without a forecast uses only published half hours', async () => {
      const body = await schedule(
        `zones=GB&duration_minutes=30&earliest=${iso(at(-2))}&deadline=${iso(at(0.5))}`,
      );
      // 11:00 90, 11:30 80, 12:00 70, 12:30 95; 13:00 has only the provisional 5: not a value.
      expect(body.best).toEqual(win('GB', at(-1), at(-0.5), 70));
      expect(body.options).toHaveLength(1);
      expect(body.note).toBeUndefined();
      const later = await api.get(
        `/v1/schedule?zones=GB&duration_minutes=30&earliest=${iso(at(0))}&deadline=${iso(at(2))}`,
      );
      expect(later.status).toBe(404);
    });

    it('leaves a zone without values out of options and says so; now null when it is the home zone', async () => {
      const body = await schedule('zones=DE,PL&energy_kwh=1');
      expect(body.options).toEqual([win('DE', at(5), at(6), 150)]);
      expect(body.note).toBe(
        'no forecast or published values for the whole job between earliest and deadline: PL.',
      );
      const home = await schedule('zones=PL,DE&energy_kwh=1');
      expect(home.best).toEqual(win('DE', at(5), at(6), 150));
      expect(home.now).toBeNull();
      expect(home.savings).toBeNull();
      expect(home.note).toBe(
        'no forecast or published values for the whole job between earliest and deadline: PL; ' +
          'now is null: the job cannot start at earliest in PL.',
      );
    });

    it('schedules where the grid has room and names the zones where it has none', async () => {
      // 14:20-15:30: no whole hour, but the half hours 14:30 and 15:00 of GB.
      const query = `zones=DE,GB&basis=lifecycle&duration_minutes=60&earliest=${iso(at(1) + 1200)}&deadline=${iso(at(2.5))}`;
      const body = await schedule(query);
      expect(body.best).toEqual(win('GB', at(1.5), at(2.5), 200));
      expect(body.now).toBeNull();
      expect(body.note).toBe(
        'the window holds too few whole intervals for the job: DE; ' +
          'now is null: the job cannot start at earliest in DE.',
      );
    });

    it('answers zones=all with every zone that has a forecast, ascending', async () => {
      const body = await schedule('zones=all&duration_minutes=180&deadline=2026-11-24T13:00:00Z');
      expect(body.deadline).toBe('2026-11-24T13:00:00Z');
      // PL has no forecast; GB has none without basis.
      expect(body.options).toHaveLength(ZONES.length - 2);
      expect(body.note).toBe(
        'no forecast or published values for the whole job between earliest and deadline: PL, GB.',
      );
      expect(body.best).toEqual(win('NO-2', at(6), at(9), 20));
      expect(body.now).toEqual(win('DE', at(1), at(4), 400));
      expect(body.options.slice(0, 4)).toEqual([
        win('NO-2', at(6), at(9), 20),
        // FR: 15:00-18:00 (90, 50, 70) and 16:00-19:00 (50, 70, 90) are both 70: the earlier.
        win('FR', at(2), at(5), 70),
        // DE: 18:00-21:00 (150, 400, 160) = 236.7.
        win('DE', at(5), at(8), 236.7),
        // The flat zones at 250 + their place in /v1/zones: the first after DE and FR is ES.
        win('ES', at(1), at(4), 252),
      ]);
      const means = body.options.map((option) => option.gco2eq_kwh);
      expect(means).toEqual([...means].sort((a, b) => a - b));
      expect(new Set(body.options.map((option) => option.zone)).size).toBe(body.options.length);
    });

    it('sends every member in the order of its schema (the body is built in it, then stringified)', async () => {
      const body = await schedule(
        'zones=DE,PL&duration_minutes=120&interruptible=true&energy_kwh=2',
      );
      const keys = (value: unknown) => Object.keys(value as object);
      const { properties } = ScheduleResponse;
      const window = keys(ScheduleWindow.properties);
      // Every optional member present: the job's slots, the saving in grams, and the note.
      expect(keys(body)).toEqual(keys(properties));
      expect(keys(body.best)).toEqual(keys(properties.best.properties));
      expect(keys(body.best.slots![0])).toEqual(
        keys(properties.best.properties.slots.items.properties),
      );
      expect(keys(body.now)).toEqual(window);
      expect(keys(body.savings)).toEqual(keys(properties.savings.anyOf[0].properties));
      for (const option of body.options) expect(keys(option)).toEqual(window);
    });

    it('caps the default deadline at 72 hours after now', async () => {
      const body = await schedule('zones=FR&earliest=2026-11-24T00:00:00Z');
      expect(body.deadline).toBe('2026-11-24T13:20:00Z');
    });

    it('answers HEAD like GET without a body, OPTIONS as a preflight, POST with 405', async () => {
      const head = await api.request('/v1/schedule?zones=FR', { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
      expect(head.headers.get('cache-control')).toBe('no-store');
      const options = await api.request('/v1/schedule', { method: 'OPTIONS' });
      expect(options.status).toBe(204);
      expect(options.headers.get('access-control-allow-origin')).toBe('*');
      const post = await api.request('/v1/schedule?zones=FR', { method: 'POST' });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    });

    it('is listed in the index', async () => {
      const index = (await api.get('/v1')).json as { other_endpoints: Record<string, string> };
      expect(index.other_endpoints.schedule).toMatch(/^GET \/v1\/schedule\?zones=/);
    });

    const fits = 'invalid window: the job does not fit between earliest and deadline';
    const badRequests: [string, number, string][] = [
      ['', 400, 'missing required param: zones'],
      ['zones=', 400, 'missing required param: zones'],
      ['zones=%20', 400, 'missing required param: zones'],
      ['zones=DE,,FR', 400, 'invalid param: zones'],
      ['zones=DE,all', 400, 'invalid param: zones'],
      ['zones=DE&zones=FR', 400, 'invalid param: zones'],
      ['zones=XX', 404, 'unknown or empty zone: XX'],
      ['zones=DE,xx', 404, 'unknown or empty zone: xx'],
      ['zones=DE&duration_minutes=0', 400, 'invalid param: duration_minutes'],
      ['zones=DE&duration_minutes=4321', 400, 'invalid param: duration_minutes'],
      ['zones=DE&duration_minutes=1.5', 400, 'invalid param: duration_minutes'],
      ['zones=DE&duration_minutes=-5', 400, 'invalid param: duration_minutes'],
      ['zones=DE&duration_minutes=abc', 400, 'invalid param: duration_minutes'],
      ['zones=DE&duration_minutes=', 400, 'invalid param: duration_minutes'],
      ['zones=DE&duration_minutes=60&duration_minutes=60', 400, 'invalid param: duration_minutes'],
      ['zones=DE&earliest=tomorrow', 400, 'invalid param: earliest'],
      ['zones=DE&earliest=', 400, 'invalid param: earliest'],
      ['zones=DE&deadline=2026-13-01', 400, 'invalid param: deadline'],
      ['zones=DE&interruptible=yes', 400, 'invalid param: interruptible'],
      ['zones=DE&interruptible=TRUE', 400, 'invalid param: interruptible'],
      ['zones=DE&interruptible=', 400, 'invalid param: interruptible'],
      ['zones=DE&estimator=p50', 400, 'invalid param: estimator'],
      ['zones=DE&estimator=', 400, 'invalid param: estimator'],
      ['zones=DE&basis=operator', 400, 'invalid param: basis'],
      ['zones=DE&energy_kwh=0', 400, 'invalid param: energy_kwh'],
      ['zones=DE&energy_kwh=-1', 400, 'invalid param: energy_kwh'],
      ['zones=DE&energy_kwh=1e3', 400, 'invalid param: energy_kwh'],
      ['zones=DE&energy_kwh=abc', 400, 'invalid param: energy_kwh'],
      ['zones=DE&energy_kwh=2e12', 400, 'invalid param: energy_kwh'],
      ['zones=DE&energy_kwh=10000000000000', 400, 'invalid param: energy_kwh'],
      ['zones=DE&energy_kwh=', 400, 'invalid param: energy_kwh'],
      // The window: 72 hours ahead at most, 72 hours long at most, long enough for the job.
      [
        'zones=DE&deadline=2026-11-24T13:21:00Z',
        400,
        'invalid window: deadline is more than 72 hours after now',
      ],
      [
        'zones=DE&earliest=2026-11-18T13:00:00Z&deadline=2026-11-21T14:00:00Z',
        400,
        'invalid window: a schedule covers at most 72 hours',
      ],
      ['zones=DE&duration_minutes=1441', 400, fits],
      ['zones=DE&earliest=2026-11-21T15:00:00Z&deadline=2026-11-21T14:00:00Z', 400, fits],
      [
        'zones=DE&earliest=2026-11-21T14:00:00Z&deadline=2026-11-21T15:00:00Z&duration_minutes=61',
        400,
        fits,
      ],
      // Long enough by the clock, but no whole hour of DE between 14:20 and 15:30.
      ['zones=DE&earliest=2026-11-21T14:20:00Z&deadline=2026-11-21T15:30:00Z', 400, fits],
      ['zones=DE&earliest=2026-11-24T00:00:00Z&duration_minutes=900', 400, fits],
      // Room, but no values: PL has no forecast, and nothing is published in 2020.
      [
        'zones=PL',
        404,
        'no schedule: no zone asked has values for the whole job between earliest and deadline',
      ],
      [
        'zones=DE&earliest=2020-01-01&deadline=2020-01-02',
        404,
        'no schedule: no zone asked has values for the whole job between earliest and deadline',
      ],
      // Which fault is named: the form of each parameter, then zones, then the window, basis last.
      ['zones=XX&duration_minutes=0', 400, 'invalid param: duration_minutes'],
      ['zones=XX&deadline=2030-01-01', 404, 'unknown or empty zone: XX'],
      ['zones=XX&basis=x', 404, 'unknown or empty zone: XX'],
      ['zones=DE&duration_minutes=1441&basis=x', 400, fits],
    ];

    it.each(badRequests)('GET /v1/schedule?%s -> %i %s', async (query, status, error) => {
      const response = await api.get(`/v1/schedule?${query}`);
      expect(response.status).toBe(status);
      const body = response.json as { error: string; hint: string };
      expect(body.error).toBe(error);
      expect(body.hint.length).toBeGreaterThan(10);
      expect(response.headers.get('cache-control')).toBe('no-store');
    });

    it('ignores unknown parameters', async () => {
      expect(await schedule('zones=FR&zone=DE&from=x')).toEqual(await schedule('zones=FR'));
    });
  },
);
