import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredReading } from '../core/reading.js';
import { SqliteStore } from '../storage/sqlite/sqlite-store.js';
import { ForecastEngine } from './engine.js';

// Each test its own store, in a folder of its own.
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gridco2-engine-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/**
 * An engine on a new store in the test's folder, on a clock the test moves (from 2026-11-20
 * 12:00Z); stopped and its store closed after `use`.
 */
async function withEngine(
  use: (engine: ForecastEngine, store: SqliteStore, clock: { nowMs: number }) => Promise<void>,
  logger?: Logger,
): Promise<void> {
  const store = new SqliteStore(join(dir, 'store.db'));
  const clock = { nowMs: Date.UTC(2026, 10, 20, 12) };
  const engine = new ForecastEngine({ store, clock: () => clock.nowMs, ...(logger && { logger }) });
  try {
    await use(engine, store, clock);
  } finally {
    await engine.stop();
    await store.close();
  }
}

describe('ForecastEngine.backtestNow', () => {
  it('runs a backtest at once although the newest is less than a day old', async () => {
    await withEngine(async (engine, store, clock) => {
      await engine.tick();
      const first = await store.newestBacktest();
      expect(first?.createdAt).toBe(clock.nowMs / 1000);

      clock.nowMs += 10 * 60_000;
      await engine.tick();
      // Fresh: the ordinary check leaves it.
      expect((await store.newestBacktest())?.createdAt).toBe(first?.createdAt);

      await engine.backtestNow();
      expect((await store.newestBacktest())?.createdAt).toBe(clock.nowMs / 1000);
    });
  });
});

describe("ForecastEngine's backtest log", () => {
  it('says how many zones and bases resumed, and which ran from their first issue and why', async () => {
    const lines: { msg: string; resumed?: number; fellBack?: Record<string, string[]> }[] = [];
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => lines.push(JSON.parse(line)) },
    );
    await withEngine(async (engine) => {
      await engine.tick();
    }, logger);
    const done = lines.find(({ msg }) => msg === 'forecasts: backtest done');
    // A new store: no state to resume from.
    expect(done?.resumed).toBe(0);
    expect(Object.keys(done?.fellBack ?? {})).toEqual(['no state']);
    expect(done?.fellBack?.['no state']).toContain('GB|operator');
  });
});

describe('ForecastEngine.computing', () => {
  it('is true from the start of a check to its end, and ready once forecasts were prepared', async () => {
    await withEngine(async (engine) => {
      expect([engine.computing, engine.ready]).toEqual([false, false]);
      const check = engine.tick();
      expect(engine.computing).toBe(true);
      await check;
      expect([engine.computing, engine.ready]).toEqual([false, true]);
    });
  });
});

describe('ForecastEngine backtest schedule', () => {
  it('reruns a backtest less than a day old that names a model this version does not have', async () => {
    await withEngine(async (engine, store, clock) => {
      const buckets = {
        '1-6': 'retired@1',
        '7-24': 'retired@1',
        '25-48': 'retired@1',
        '49-72': 'retired@1',
      };
      const byAnOlderVersion = {
        zone: 'DE',
        basis: 'lifecycle' as const,
        from: null,
        to: null,
        issues: 0,
        rows: [],
        served: buckets,
        bands: {},
      };
      const storedAt = clock.nowMs / 1000 - 600;
      await store.saveBacktest({ createdAt: storedAt, zones: [byAnOlderVersion] });
      await engine.tick();
      const newest = await store.newestBacktest();
      expect(newest?.createdAt).toBe(clock.nowMs / 1000);
      expect(newest?.zones.some(({ served }) => Object.values(served).includes('retired@1'))).toBe(
        false,
      );
      // One by this version is left alone until it is a day old (after a failure, the next
      // attempt would wait an hour).
      const rerunAt = clock.nowMs / 1000;
      clock.nowMs += 2 * 3_600_000;
      await engine.tick();
      expect((await store.newestBacktest())?.createdAt).toBe(rerunAt);
    });
  });
});

describe('ForecastEngine.whileFilling', () => {
  it('holds the rerun of a backtest that left out a zone with a forecast until the fill ends', async () => {
    await withEngine(async (engine, store, clock) => {
      // Eight days of DE: a forecast, but no issue after the backtest's two weeks of warm-up.
      const nowS = clock.nowMs / 1000;
      const readings: StoredReading[] = [];
      for (let ts = nowS - 8 * 86_400; ts < nowS - 3600; ts += 3600) {
        const value = 300 + ((ts / 3600) % 24);
        readings.push({
          zone: 'DE',
          ts,
          value,
          method: 'computed:v1',
          complete: true,
          mix: { gas: 1 },
          lifecycle: value,
          direct: value * 0.75,
        });
      }
      await store.upsertReadings(readings);
      await engine.tick();
      const first = await store.newestBacktest();
      expect(
        first?.zones.find(({ zone, basis }) => zone === 'DE' && basis === 'lifecycle'),
      ).toEqual(expect.objectContaining({ issues: 0 }));
      expect(engine.forecast('DE', 'lifecycle')).not.toBeNull();

      let endFill = () => {};
      const filling = engine.whileFilling(new Promise<void>((resolve) => (endFill = resolve)));
      // Past the recheck (at most ten times as long as the first run took), within the day.
      clock.nowMs += 30 * 60_000;
      await engine.tick();
      expect((await store.newestBacktest())?.createdAt).toBe(first?.createdAt);

      endFill();
      await filling;
      await engine.tick();
      expect((await store.newestBacktest())?.createdAt).toBe(clock.nowMs / 1000);
    });
  });
});
