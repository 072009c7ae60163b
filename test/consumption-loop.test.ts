import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.js';
import { keepConsumptionUp } from '../src/consumption/keep-up.js';
import { SOURCES } from '../src/core/sources.js';
import { isServedZone, ZONES } from '../src/core/zones.js';
import { ingestSource } from '../src/ingest/ingest-source.js';
import { startSimulator, type Simulator } from '../src/simulator/index.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../src/storage/store.js';
import { loggerInto } from './support/log-lines.js';

/**
 * The consumption series kept up by the ingestion loop (extensions §15): a pass of every source
 * against the upstream simulator over HTTP, with FLOWS=on, into SQLite, traces the hours it
 * brought; a failed update loses nothing and is made good by the next pass.
 */

const H = 3600;
const NOW_MS = Date.UTC(2026, 10, 21, 13, 20, 0);
/** Two days of history: past the simulated EIA's publication lag (up to 30 h), quick to fetch. */
const WINDOW_SECONDS = 48 * H;

const dir = mkdtempSync(join(tmpdir(), 'gridco2-consumption-loop-'));
const lines: string[] = [];
const logger = loggerInto(lines);
let simulator: Simulator;
let config: Config;
let storeCount = 0;

beforeAll(async () => {
  simulator = await startSimulator({ seed: 3, now: () => NOW_MS });
  config = loadConfig({
    DEMO: 'on',
    DATABASE_URL: 'sqlite::memory:',
    FLOWS: 'on',
    ENTSOE_BASE_URL: `${simulator.url}/api`,
    ENTSOE_TOKEN: 'simulated',
    EIA_BASE_URL: `${simulator.url}/v2`,
    EIA_API_KEY: 'simulated',
    NESO_BASE_URL: simulator.url,
  });
});
afterAll(async () => {
  await simulator?.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  lines.length = 0;
});

const openStore = () => new SqliteStore(join(dir, `store-${storeCount++}.db`));
const clock = {
  now: () => NOW_MS,
  sleep: async () => undefined,
  timeout: () => new AbortController().signal,
};

/** One pass of every source, as the scheduler runs them: side by side. */
async function passOfEverySource(store: Store): Promise<void> {
  const signal = new AbortController().signal;
  await Promise.all(
    SOURCES.map((source) =>
      ingestSource({ config, store, logger, source, clock, localUpstream: true }).pass(
        signal,
        WINDOW_SECONDS,
      ),
    ),
  );
}

const servedZones = ZONES.map((zone) => zone.code);
const consumptionZones = async (store: Store) =>
  (await store.latestConsumptionPerZone('lifecycle')).map((reading) => reading.zone);
const logged = (text: string) => lines.filter((line) => line.includes(text));

describe('the consumption series in the ingestion loop (FLOWS=on)', () => {
  it('a pass of every source leaves a consumption value for every solved zone, none for GB', async () => {
    const store = openStore();
    try {
      expect(await consumptionZones(store)).toEqual([]);
      await passOfEverySource(store);
      const zones = await consumptionZones(store);
      const served = zones.filter(isServedZone).sort();
      expect(served).toEqual(servedZones.filter((zone) => zone !== 'GB').sort());
      expect(zones).not.toContain('GB');
      // The newest hour of each zone is the newest hour the pass stored a mix of.
      const latest = new Map(
        (await store.latestPerZone()).map((reading) => [reading.zone, reading.ts]),
      );
      for (const reading of await store.latestConsumptionPerZone('lifecycle')) {
        if (!isServedZone(reading.zone) || reading.zone === 'US') continue;
        expect(reading.ts, reading.zone).toBe(Math.floor(latest.get(reading.zone)! / H) * H);
      }
      expect(logged('consumption series of europe: ')).not.toEqual([]);
      expect(logged('consumption series of us: ')).not.toEqual([]);

      // The cursors moved past what the pass wrote: nothing is left to trace.
      const again = await keepConsumptionUp(store, logger, ['europe', 'us']);
      expect(again.map(({ graph, hours }) => ({ graph, hours }))).toEqual([
        { graph: 'europe', hours: [] },
        { graph: 'us', hours: [] },
      ]);
    } finally {
      await store.close();
    }
  });

  it('a failed update keeps what is stored, does not fail the pass, and the next pass makes it good', async () => {
    const store = openStore();
    let failures = 1;
    // The store's writes of consumption fail once, as a full disk or a lost connection would.
    const failing = new Proxy(store, {
      get(target, name, receiver) {
        if (name === 'replaceConsumption' && failures > 0) {
          failures -= 1;
          return () => Promise.reject(new Error('disk full'));
        }
        const value: unknown = Reflect.get(target, name, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    try {
      await passOfEverySource(failing);
      expect(logged('not updated; the next pass traces it again')).toHaveLength(1);
      expect(logged('"msg":"europe-tso: 33 zones')).toHaveLength(1);
      const mixes = (await store.latestPerZone()).length;
      expect(mixes).toBeGreaterThanOrEqual(ZONES.length);

      lines.length = 0;
      await passOfEverySource(failing);
      expect(logged('not updated')).toEqual([]);
      expect((await consumptionZones(store)).filter(isServedZone).sort()).toEqual(
        servedZones.filter((zone) => zone !== 'GB').sort(),
      );
      expect((await store.latestPerZone()).length).toBe(mixes);
    } finally {
      await store.close();
    }
  });
});
