import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { gb } from '../../test/support/fixed-store.js';
import type { StoredForecast, StoredReading } from '../core/reading.js';
import { SqliteStore } from '../storage/sqlite/sqlite-store.js';
import { ReadingCache } from './reading-cache.js';

const H = 3600;
const computed = (zone: string, ts: number, value: number, complete = true): StoredReading => ({
  zone,
  ts,
  value,
  method: 'computed:v1',
  complete,
  mix: null,
  lifecycle: null,
  direct: null,
});

const gbForecast = (ts: number, value: number): StoredForecast => ({
  zone: 'GB',
  ts,
  kind: 'uk-operator:intensity',
  issuedAt: ts,
  value,
});

const dir = mkdtempSync(join(tmpdir(), 'gridco2-cache-'));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function openPair() {
  const file = join(dir, `${Math.random().toString(36).slice(2)}.db`);
  // Two handles on one file: the cache follows writes made by another connection (or process).
  return { reader: new SqliteStore(file), writer: new SqliteStore(file) };
}

describe('ReadingCache', () => {
  it('loads every published reading, then follows changes incrementally', async () => {
    const { reader, writer } = await openPair();
    await writer.upsertReadings([computed('DE', 0, 100), computed('DE', H, 820, false)]);
    const cache = new ReadingCache(reader, undefined, { pollMs: 60_000 });
    await cache.refresh();
    expect(cache.ready).toBe(true);
    expect(cache.latest()).toEqual([{ zone: 'DE', ts: 0, value: 100, method: 'computed:v1' }]);

    await writer.upsertReadings([computed('DE', H, 200), computed('FR', 0, 50)]);
    await writer.upsertForecasts([gbForecast(0, 90)]);
    await cache.refresh();
    expect(cache.latest().map((r) => [r.zone, r.ts, r.value, r.method])).toEqual([
      ['DE', H, 200, 'computed:v1'],
      ['FR', 0, 50, 'computed:v1'],
      ['GB', 0, 90, 'upstream:uk-operator:forecast'],
    ]);

    // The settled figure replaces the forecast of its half-hour; a forecast of the next one shows.
    await writer.upsertReadings([computed('DE', H, 820, false), gb(0, 80)]);
    await cache.refresh();
    expect(cache.latest().map((r) => [r.zone, r.ts, r.value])).toEqual([
      ['DE', 0, 100],
      ['FR', 0, 50],
      ['GB', 0, 80],
    ]);
    /** GB holds two readings, the newest `newest`. */
    const expectGbNewest = (newest: { ts: number; value: number; method: string }) => {
      expect(cache.zone('GB')!.length).toBe(2);
      expect(cache.latest().at(-1)).toEqual({ zone: 'GB', ...newest });
    };
    await writer.upsertForecasts([gbForecast(1800, 95)]);
    await cache.refresh();
    expectGbNewest({ ts: 1800, value: 95, method: 'upstream:uk-operator:forecast' });
    // A later settled half-hour makes it obsolete, though its own one never settles.
    await writer.upsertReadings([gb(3600, 70)]);
    await cache.refresh();
    expectGbNewest({ ts: 3600, value: 70, method: 'upstream:uk-operator:actual' });
    expect(cache.version).toBe(await writer.dataVersion());
    await reader.close();
    await writer.close();
  });

  it('reloads everything when more changed than it follows incrementally', async () => {
    const { reader, writer } = await openPair();
    const cache = new ReadingCache(reader, undefined, { pollMs: 60_000, maxChanges: 10 });
    await cache.refresh();
    await writer.upsertReadings(Array.from({ length: 50 }, (_, i) => computed('FI', i * H, i)));
    let notified = 0;
    cache.onChange(() => notified++);
    await cache.refresh();
    expect(cache.zone('FI')?.length).toBe(50);
    expect(notified).toBe(1);
    await reader.close();
    await writer.close();
  });

  it('marks the store unreachable when a poll fails, and recovers', async () => {
    const { reader, writer } = await openPair();
    await writer.upsertReadings([computed('DE', 0, 1)]);
    let down = true;
    const flaky = Object.assign(Object.create(reader) as SqliteStore, {
      dataVersion: () => (down ? Promise.reject(new Error('down')) : reader.dataVersion()),
    });
    const cache = new ReadingCache(flaky, undefined, { pollMs: 60_000 });
    await cache.refresh();
    expect(cache.storeReachable).toBe(false);
    expect(cache.ready).toBe(false);
    down = false;
    await cache.refresh();
    expect(cache.storeReachable).toBe(true);
    expect(cache.latest()).toHaveLength(1);
    await reader.close();
    await writer.close();
  });

  it('waits in stop() for a load under way, so the store can close without a warning', async () => {
    const { reader, writer } = await openPair();
    await writer.upsertReadings([computed('DE', 0, 1), computed('FR', 0, 2)]);
    const warnings: unknown[] = [];
    const logger = {
      info: () => undefined,
      warn: (...args: unknown[]) => warnings.push(args),
    } as unknown as Logger;
    const cache = new ReadingCache(reader, logger, { pollMs: 60_000 });
    cache.start(); // the first load is under way, zone by zone
    await cache.stop();
    await reader.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(warnings).toEqual([]);
    await cache.refresh(); // a stopped cache no longer reads the store
    expect(warnings).toEqual([]);
    await writer.close();
  });
});
