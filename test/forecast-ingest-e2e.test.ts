import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.js';
import type { StoredForecast, StoredReading } from '../src/core/reading.js';
import { ZONES } from '../src/core/zones.js';
import { runIngestion } from '../src/ingest/run-ingestion.js';
import { createSourceAdapter } from '../src/ingest/sources.js';
import { FAULT_KINDS, startSimulator, type Simulator } from '../src/simulator/index.js';
import type { Clock } from '../src/core/time.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { FORECAST_KINDS, SOURCES, type SourceId } from '../src/core/sources.js';
import { storedForecasts } from './support/stored-forecasts.js';

/**
 * The upstreams' own forecasts, end to end: the real ingester against the simulator over HTTP,
 * into a real SQLite store. Every fault on the forecast feeds of every source: the actuals are
 * still fetched and stored, nothing stored is lost, no forecast ever becomes a reading. Once
 * the faults clear, the forecasts are stored with their kinds and issue times.
 */

const H = 3600;
let nowMs = Date.UTC(2026, 10, 21, 13, 20, 0);
const TIMEOUT_MS = 400;
const EUROPE_ZONES = ['DE', 'CZ'];
const logger = pino({ level: 'silent' });
const requestTimeouts: Record<SourceId, AbortController[]> = {
  'europe-tso': [],
  'us-agency': [],
  'uk-operator': [],
};
/** The clock of the simulator-e2e suite: time stands still, waits are granted at once. */
const clockOf = (source: SourceId): Clock => ({
  now: () => nowMs,
  sleep: async () => undefined,
  timeout: () => {
    const controller = new AbortController();
    requestTimeouts[source].push(controller);
    return controller.signal;
  },
});
/** A request the simulator holds (`slow`, `hang`) times out on the test's clock. */
function expireHeldRequests(): () => void {
  const timer = setInterval(() => {
    const { held } = simulator.state();
    for (const source of SOURCES) {
      const newest = requestTimeouts[source].at(-1);
      if (held[source] > 0 && newest && !newest.signal.aborted) {
        newest.abort(new DOMException('timed out on the test clock', 'TimeoutError'));
      }
    }
  }, 5);
  return () => clearInterval(timer);
}

const dir = mkdtempSync(join(tmpdir(), 'gridco2-forecast-e2e-'));
let simulator: Simulator;
let config: Config;
let store: SqliteStore;

beforeAll(async () => {
  simulator = await startSimulator({ seed: 11, now: () => nowMs });
  config = loadConfig({
    // The simulator signs its answers: only a demo ingests them.
    DEMO: 'on',
    DATABASE_URL: `sqlite:${join(dir, 'forecasts.db')}`,
    ENTSOE_BASE_URL: `${simulator.url}/api`,
    ENTSOE_TOKEN: 'simulated',
    EIA_BASE_URL: `${simulator.url}/v2`,
    EIA_API_KEY: 'simulated',
    NESO_BASE_URL: simulator.url,
    // The zones' suite: the flow graphs (on by default) have theirs.
    FLOWS: 'off',
  });
  store = new SqliteStore(join(dir, 'forecasts.db'));
});
afterAll(async () => {
  await store?.close();
  await simulator?.close();
  rmSync(dir, { recursive: true, force: true });
});

function ingest(source: SourceId) {
  const adapter = createSourceAdapter(config, source, {
    logger,
    clock: clockOf(source),
    http: { timeoutMs: TIMEOUT_MS, retries: 1 },
  });
  const zones =
    source === 'europe-tso'
      ? adapter.zones.filter((zone) => EUROPE_ZONES.includes(zone.code))
      : adapter.zones;
  return runIngestion({ store, adapter: { ...adapter, zones }, logger });
}

async function everyRow(): Promise<StoredReading[]> {
  const rows: StoredReading[] = [];
  for (let page = await store.scanStored(null, 5000); page.length > 0;) {
    rows.push(...page);
    const last = page.at(-1)!;
    page = await store.scanStored({ zone: last.zone, ts: last.ts }, 5000);
  }
  return rows;
}

async function everyForecast(): Promise<StoredForecast[]> {
  const all: StoredForecast[] = [];
  for (const zone of ZONES) {
    for (const kind of FORECAST_KINDS) {
      all.push(...(await storedForecasts(store, zone.code, kind, 0, 2 ** 40)));
    }
  }
  return all;
}

const key = (row: StoredReading) => `${row.zone} ${row.ts}`;

describe('upstream forecasts from the simulator', () => {
  it.each(FAULT_KINDS)(
    '%s on every forecast feed: actuals still fetched and stored, nothing lost, no forecast a reading',
    async (fault) => {
      const before = new Map((await everyRow()).map((row) => [key(row), row]));
      const forecastsBefore = (await everyForecast()).length;
      // An hour later each run has new hours of actuals to store.
      nowMs += H * 1000;
      for (const source of SOURCES) simulator.setFault({ source, fault, feed: 'forecasts' });
      const stopExpiring = expireHeldRequests();
      let reports;
      try {
        reports = await Promise.all(SOURCES.map((source) => ingest(source)));
      } finally {
        stopExpiring();
        simulator.clearFaults();
      }
      const after = await everyRow();
      const afterKeys = new Set(after.map(key));
      // Nothing stored is lost, and the actuals of the new hour(s) arrived on every source.
      for (const stored of before.keys()) expect(afterKeys.has(stored), stored).toBe(true);
      for (const report of reports) {
        expect(report.pointsStored, report.source).toBeGreaterThan(0);
        // No actual failed: every error line is the forecast feed's.
        for (const line of report.errors) expect(line).toMatch(/forecasts/);
        if (fault !== 'empty') expect(report.errors.length, report.source).toBeGreaterThan(0);
      }
      // No forecast became a reading: no reading lies ahead of the clock, every method is an
      // actual's, and no reading holds a forecast's value at a forecast's interval.
      expect(after.every((row) => row.ts <= nowMs / 1000)).toBe(true);
      expect(after.some((row) => row.method === 'upstream:uk-operator:forecast')).toBe(false);
      // A faulted feed stored no forecast (an `empty` answer has none to store); GB's forecast
      // of the half hour in progress comes with the actuals, as before.
      expect((await everyForecast()).length).toBe(forecastsBefore + 1);
    },
  );

  it('after the faults clear, every forecast kind is stored with its issue time', async () => {
    nowMs += H * 1000;
    const rowsBefore = (await everyRow()).length;
    const reports = await Promise.all(SOURCES.map((source) => ingest(source)));
    for (const report of reports) expect(report.errors).toEqual([]);
    for (const report of reports) expect(report.forecastsStored).toBeGreaterThan(0);
    expect((await everyRow()).length).toBeGreaterThan(rowsBefore);

    const now = nowMs / 1000;
    const forecasts = await everyForecast();
    const ofKind = (kind: StoredForecast['kind']) => forecasts.filter((f) => f.kind === kind);
    for (const kind of [
      'europe-tso:wind',
      'europe-tso:solar',
      'europe-tso:load',
      'europe-tso:generation',
      'us-agency:demand-forecast',
      'us-agency:demand',
      'uk-operator:fw48h',
    ] as const) {
      expect(ofKind(kind).length, kind).toBeGreaterThan(0);
    }
    // ENTSO-E day-ahead: issued six hours before a CET market day starts (22:00Z or 23:00Z),
    // never after the fetch; native resolution (DE quarter hours, CZ hours); from 24 h back
    // to at most 48 h ahead.
    for (const forecast of ofKind('europe-tso:wind').concat(ofKind('europe-tso:load'))) {
      expect(forecast.issuedAt).toBeLessThanOrEqual(now);
      expect([16, 17]).toContain(new Date(forecast.issuedAt * 1000).getUTCHours());
      expect(forecast.ts - forecast.issuedAt).toBeGreaterThanOrEqual(6 * H);
      expect(forecast.ts - forecast.issuedAt).toBeLessThanOrEqual(31 * H);
      expect(forecast.ts).toBeLessThan(now + 48 * H);
    }
    const de = ofKind('europe-tso:wind').filter((f) => f.zone === 'DE');
    expect(de.some((f) => f.ts % H === 15 * 60)).toBe(true);
    expect(
      ofKind('europe-tso:load')
        .filter((f) => f.zone === 'CZ')
        .every((f) => f.ts % H === 0),
    ).toBe(true);
    // Tomorrow's day-ahead is out (published 16:00Z/17:00Z, the clock is past 15:20Z+6h).
    expect(Math.max(...de.map((f) => f.ts))).toBeGreaterThan(now + 6 * H);
    // EIA: DF issued six hours ahead or at the fetch; D at the end of its hour, in the past.
    for (const forecast of ofKind('us-agency:demand-forecast')) {
      expect(forecast.issuedAt).toBe(Math.min(now, forecast.ts - 6 * H));
    }
    for (const forecast of ofKind('us-agency:demand')) {
      expect(forecast.issuedAt).toBe(forecast.ts + H);
      expect(forecast.issuedAt).toBeLessThanOrEqual(now);
    }
    // NESO: 96 half hours issued at the fetch's half hour, from the one in progress on.
    const issue = Math.floor(now / 1800) * 1800;
    const fw48h = ofKind('uk-operator:fw48h').filter((f) => f.issuedAt === issue);
    expect(fw48h).toHaveLength(96);
    expect(Math.min(...fw48h.map((f) => f.ts))).toBe(issue);
    // The forecasts are the simulated grid's, not a copy of it: wind differs from the actual
    // A75 wind it forecasts (checked on the served mix of DE's hours that have both).
    const readings = new Map(
      (await store.readStored('DE', 0, now)).map((row) => [
        row.ts,
        row.mix ? (row.mix['wind-onshore'] ?? 0) + (row.mix['wind-offshore'] ?? 0) : null,
      ]),
    );
    const hourly = new Map<number, number[]>();
    for (const f of de)
      hourly.set(f.ts - (f.ts % H), [...(hourly.get(f.ts - (f.ts % H)) ?? []), f.value]);
    const compared = [...hourly].filter(
      ([ts, values]) => values.length === 4 && readings.get(ts) != null,
    );
    expect(compared.length).toBeGreaterThan(0);
    const errors = compared.map(
      ([ts, values]) => values.reduce((a, b) => a + b, 0) / 4 - (readings.get(ts) as number),
    );
    expect(errors.some((error) => Math.abs(error) > 1)).toBe(true);
  });
});
