import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstHourAtOrAfter, loadRealHistory } from '../bench/real-history/history.js';
import { loadConfig } from '../src/config.js';
import type { Basis } from '../src/core/factors.js';
import { intensityOfMix } from '../src/core/method.js';
import type { StoredReading } from '../src/core/reading.js';
import { SOURCES } from '../src/core/sources.js';
import { formatTs } from '../src/core/time.js';
import { ZONES } from '../src/core/zones.js';
import { buildApp } from '../src/http/app.js';
import { runBackfill } from '../src/ingest/backfill.js';
import { createSourceAdapter } from '../src/ingest/sources.js';
import { ReadingCache } from '../src/read/reading-cache.js';
import { startSimulator } from '../src/simulator/index.js';
import { createStore } from '../src/storage/create-store.js';
import type { Store } from '../src/storage/store.js';

/**
 * `GET /v1/intensity/level` against a brute-force computation (issue 24, extensions §11) on real
 * data and on the demo's: every zone's served percentile and level, on each basis, equal the
 * spec's formula applied to the values `/v1/intensity` serves for the same 30 days.
 *
 * - Real recorded history (bench/real-history: eighteen months of ten grids' generation by fuel,
 *   with the hours the source left out missing): its last 45 days, each hour's value computed
 *   from its mix by the method's categories (the files' `other` counted as other), so the
 *   reference windows hold real gaps and real distributions.
 * - The demo: every zone of the three sources backfilled from the upstream simulator over 31
 *   days, as `gridco2 demo` fills its store (GB's half hours included).
 */

const H = 3600;
const DAY = 86_400;
const BASES = [undefined, 'lifecycle', 'direct'] as const;

interface Point {
  readonly ts: string;
  readonly gco2eq_kwh: number;
}
interface LevelEntry {
  readonly zone: string;
  readonly reference: { readonly from: string; readonly to: string; readonly count: number };
  readonly now: {
    readonly ts: string;
    readonly gco2eq_kwh: number;
    readonly percentile: number | null;
    readonly level: string | null;
  };
}

/** The spec's mid-rank percentile, in integers, rounded half up to 1 decimal. */
function percentileOf(values: readonly number[], v: number): number {
  const tenths = (x: number) => Math.round(x * 10);
  const below = values.filter((x) => tenths(x) < tenths(v)).length;
  const equal = values.filter((x) => tenths(x) === tenths(v)).length;
  return Math.floor((1000 * (2 * below + equal) + values.length) / (2 * values.length)) / 10;
}
/** The bands of extensions §11, written out here rather than read from the code's table. */
const levelOf = (p: number) =>
  p < 10 ? 'very-low' : p < 30 ? 'low' : p < 70 ? 'moderate' : p < 90 ? 'high' : 'very-high';

/** A server over `store` with its reading cache loaded, on a pinned clock. */
async function serve(store: Store, databaseUrl: string, nowMs: number, demo: boolean) {
  const cache = new ReadingCache(store, undefined);
  await cache.refresh();
  const app = await buildApp({
    config: loadConfig({
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'silent',
      RATE_LIMIT_PER_MINUTE: '1000000',
      METRICS: 'off',
      DASHBOARD: 'off',
      DEMO: demo ? 'on' : 'off',
    }),
    store,
    cache,
    clock: () => nowMs,
    forecasts: { forecast: () => null },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return { app, cache, base: `http://127.0.0.1:${port}` };
}

async function getJson<T>(url: string): Promise<{ body: T; link: string | null }> {
  const response = await fetch(url);
  expect(response.status, `${url}: ${response.status}`).toBe(200);
  return { body: (await response.json()) as T, link: response.headers.get('link') };
}

/** Every value `/v1/intensity` serves for `[from, to)`, page after page. */
async function served(base: string, zone: string, from: number, to: number, basis?: Basis) {
  const values: number[] = [];
  let path: string | null =
    `/v1/intensity?zone=${zone}&from=${formatTs(from)}&to=${formatTs(to)}` +
    (basis ? `&basis=${basis}` : '');
  while (path) {
    const page: { body: { data: Point[] }; link: string | null } = await getJson(`${base}${path}`);
    values.push(...page.body.data.map((point) => point.gco2eq_kwh));
    path = page.link ? /^<([^>]+)>/.exec(page.link)![1]! : null;
  }
  return values;
}

/**
 * Checks every zone of `/v1/intensity/level?zones=all` on `basis` against the brute force;
 * returns the zones checked and their reference counts.
 */
async function checkLevels(base: string, basis: Basis | undefined) {
  const { body } = await getJson<{ data: LevelEntry[] }>(
    `${base}/v1/intensity/level?zones=all&horizon_hours=0${basis ? `&basis=${basis}` : ''}`,
  );
  const counts = new Map<string, number>();
  for (const entry of body.data) {
    const step = ZONES.find((zone) => zone.code === entry.zone)!.resolutionMin * 60;
    const to = Date.parse(entry.now.ts) / 1000 + step;
    const from = to - 30 * DAY;
    expect(entry.reference, entry.zone).toEqual({
      from: formatTs(from),
      to: formatTs(to),
      count: expect.any(Number) as number,
    });
    const values = await served(base, entry.zone, from, to, basis);
    expect(entry.reference.count, entry.zone).toBe(values.length);
    expect(values.length * step, entry.zone).toBeGreaterThanOrEqual(7 * DAY);
    const percentile = percentileOf(values, entry.now.gco2eq_kwh);
    expect([entry.zone, entry.now.percentile, entry.now.level]).toEqual([
      entry.zone,
      percentile,
      levelOf(percentile),
    ]);
    counts.set(entry.zone, values.length);
  }
  return counts;
}

describe('levels on real recorded history', () => {
  const histories = loadRealHistory();
  const dir = mkdtempSync(join(tmpdir(), 'gridco2-level-real-'));
  const databaseUrl = `sqlite:${join(dir, 'level.db')}`;
  /** The hours each zone's file holds in the served reference window. */
  const fileHours = new Map<string, number>();
  let store: Store;
  let server: { app: FastifyInstance; cache: ReadingCache; base: string };

  beforeAll(async () => {
    store = await createStore(databaseUrl);
    const lastHour = Math.max(...histories.map((history) => history.hours.at(-1)!));
    for (const history of histories) {
      const readings: StoredReading[] = [];
      const newest = history.hours.at(-1)!;
      for (
        let i = firstHourAtOrAfter(history, lastHour - 45 * DAY);
        i < history.hours.length;
        i++
      ) {
        const mix: Record<string, number> = {};
        for (const [column, values] of history.generation) {
          // The files' columns are the method's categories, spelled with '_' (wind_onshore).
          if (Number.isFinite(values[i])) mix[column.replace('_', '-')] = Math.max(values[i]!, 0);
        }
        const value = intensityOfMix(mix);
        if (value === null) continue;
        readings.push({
          zone: history.zone,
          ts: history.hours[i]!,
          value,
          method: 'computed:v1',
          complete: true,
          mix,
          lifecycle: value,
          direct: intensityOfMix(mix, 'direct'),
        });
      }
      await store.upsertReadings(readings);
      const windowStart = newest + H - 30 * DAY;
      fileHours.set(history.zone, readings.filter((reading) => reading.ts >= windowStart).length);
    }
    server = await serve(store, databaseUrl, (lastHour + 2 * H) * 1000, false);
  });
  afterAll(async () => {
    await server?.app.close();
    await server?.cache.stop();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const basis of BASES) {
    it(`places every zone's newest hour as brute force does (basis ${basis ?? 'default'})`, async () => {
      const counts = await checkLevels(server.base, basis);
      // Every zone of the files is served, and its window holds exactly the file's hours
      // (fewer than 720 where the source left hours out).
      expect([...counts.keys()].sort()).toEqual(histories.map((history) => history.zone).sort());
      expect(Object.fromEntries(counts)).toEqual(Object.fromEntries(fileHours));
      expect([...counts.values()].some((count) => count < 720)).toBe(true);
    });
  }
});

describe('levels on the demo data', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gridco2-level-demo-'));
  const databaseUrl = `sqlite:${join(dir, 'demo.db')}`;
  const nowMs = Date.UTC(2026, 10, 21, 13, 20);
  let store: Store;
  let server: { app: FastifyInstance; cache: ReadingCache; base: string };
  let stopSimulator: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    const simulator = await startSimulator({ seed: 5, now: () => nowMs });
    stopSimulator = () => simulator.close();
    const config = loadConfig({
      DATABASE_URL: databaseUrl,
      DEMO: 'on',
      ENTSOE_BASE_URL: simulator.baseUrls['europe-tso'],
      EIA_BASE_URL: simulator.baseUrls['us-agency'],
      NESO_BASE_URL: simulator.baseUrls['uk-operator'],
      ENTSOE_TOKEN: 'simulated',
      EIA_API_KEY: 'simulated',
      // The zones' suite: the flow graphs (on by default) have theirs.
      FLOWS: 'off',
    });
    store = await createStore(databaseUrl);
    const logger = pino({ level: 'silent' });
    const toTs = Math.floor(nowMs / 1000 / H) * H;
    for (const source of SOURCES) {
      const result = await runBackfill({
        store,
        adapter: createSourceAdapter(config, source, { logger }),
        logger,
        window: { fromTs: toTs - 31 * DAY, toTs },
        // No upstream forecasts: the server has no forecast book and asks no horizon, and GB's
        // (the one kind served as a reading) has none over this past window. Every level body
        // and served value was checked the same without them.
        forecasts: false,
      });
      expect(result.errors).toEqual([]);
    }
    server = await serve(store, databaseUrl, nowMs, true);
  });
  afterAll(async () => {
    await server?.app.close();
    await server?.cache.stop();
    await store?.close();
    await stopSimulator();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const basis of BASES) {
    it(`places every zone's newest reading as brute force does (basis ${basis ?? 'default'})`, async () => {
      const counts = await checkLevels(server.base, basis);
      // Every zone of the demo has a level, on every basis (GB's from its generation mix).
      expect([...counts.keys()].sort()).toEqual(ZONES.map((zone) => zone.code).sort());
    });
  }
});
