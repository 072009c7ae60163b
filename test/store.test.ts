import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { gb } from './support/fixed-store.js';
import { storedForecasts } from './support/stored-forecasts.js';
import type { ConsumptionRow } from '../src/core/consumption/series-row.js';
import type { DirectedFlow } from '../src/core/flows.js';
import type { BacktestRun } from '../src/core/forecast/backtest.js';
import type { IngestReport, StoredForecast, StoredReading } from '../src/core/reading.js';
import { CONSUMPTION_WRITES_KEPT } from '../src/storage/consumption-rows.js';
import type { Store } from '../src/storage/store.js';
import type { QueuedDelivery, StoredSubscription } from '../src/storage/webhook-store.js';
import { PostgresStore } from '../src/storage/postgres/postgres-store.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import type { ThrowawayDatabase } from './support/postgres.js';
import { createThrowawayDatabase, isPostgresAvailable } from './support/postgres.js';

/**
 * The store contract: every backend runs this same suite on a real database.
 * Each backend entry opens a fresh, empty store for every test.
 */
interface Backend {
  name: string;
  open(): Promise<Store>;
  /** Another handle on the store `open` last made, as a second process would get. */
  reopen(): Promise<Store>;
  cleanup(): Promise<void>;
}

function sqliteBackend(): Backend {
  const dir = mkdtempSync(join(tmpdir(), 'gridco2-store-'));
  let count = 0;
  return {
    name: 'sqlite',
    open: async () => new SqliteStore(join(dir, `store-${++count}.db`)),
    reopen: async () => new SqliteStore(join(dir, `store-${count}.db`)),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** One throwaway database for the whole suite, emptied before each test. */
function postgresBackend(): Backend {
  let database: ThrowawayDatabase | undefined;
  return {
    name: 'postgres',
    open: async () => {
      database ??= await createThrowawayDatabase();
      await database.resetSchema();
      return PostgresStore.open(database.url);
    },
    reopen: async () => PostgresStore.open(database!.url),
    cleanup: async () => database?.drop(),
  };
}

const backends: Backend[] = [
  sqliteBackend(),
  ...((await isPostgresAvailable('postgres store contract suite')) ? [postgresBackend()] : []),
];

const H = 3600;
const T0 = Date.UTC(2026, 10, 20, 0) / 1000;

const computed = (zone: string, ts: number, value: number, complete = true): StoredReading => ({
  zone,
  ts,
  value,
  method: 'computed:v1',
  lifecycle: complete ? value : null,
  direct: complete ? value / 2 : null,
  complete,
  mix: { gas: 100, wind: value },
});

const forecast = (zone: string, ts: number, issuedAt: number, value: number): StoredForecast => ({
  zone,
  ts,
  kind: 'uk-operator:intensity',
  issuedAt,
  value,
});

describe.each(backends)('store contract: $name', (backend) => {
  let store: Store;
  beforeEach(async () => {
    store = await backend.open();
    return () => store.close();
  });
  afterAll(() => backend.cleanup());

  it('returns published readings of a window, ascending, from inclusive and to exclusive', async () => {
    await store.upsertReadings([
      computed('DE', T0 + 2 * H, 300),
      computed('DE', T0, 100),
      computed('DE', T0 + H, 200),
      computed('DE', T0 + 3 * H, 400),
      computed('FR', T0 + H, 50),
    ]);
    const rows = await store.readingsInWindow('DE', T0 + H, T0 + 3 * H, 100);
    expect(rows).toEqual([
      { ts: T0 + H, value: 200, method: 'computed:v1' },
      { ts: T0 + 2 * H, value: 300, method: 'computed:v1' },
    ]);
  });

  it('honours the limit and keeps the earliest rows', async () => {
    await store.upsertReadings([0, 1, 2, 3, 4].map((i) => computed('FI', T0 + i * H, i)));
    const rows = await store.readingsInWindow('FI', T0, T0 + 10 * H, 3);
    expect(rows.map((row) => row.value)).toEqual([0, 1, 2]);
  });

  it('replaces a reading in place when the same interval is ingested again', async () => {
    await store.upsertReadings([computed('DE', T0, 100)]);
    await store.upsertReadings([computed('DE', T0, 123.456)]);
    const rows = await store.readStored('DE', T0, T0 + H);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.value).toBe(123.456);
    expect(rows[0]?.mix).toEqual({ gas: 100, wind: 123.456 });
  });

  it('keeps incomplete hours stored but never serves them', async () => {
    await store.upsertReadings([computed('IE', T0, 500), computed('IE', T0 + H, 820, false)]);
    expect(await store.readingsInWindow('IE', T0, T0 + 2 * H, 10)).toHaveLength(1);
    expect((await store.latestPerZone()).find((r) => r.zone === 'IE')?.ts).toBe(T0);
    const stored = await store.readStored('IE', T0, T0 + 2 * H);
    expect(stored.map((row) => row.complete)).toEqual([true, false]);
    expect(await store.newestStoredTs('IE')).toBe(T0 + H);
    expect(await store.storedTimes('IE')).toEqual([T0, T0 + H]);
    expect(await store.storedTimes('FR')).toEqual([]);
  });

  it('gives the newest published reading of each zone that has one', async () => {
    await store.upsertReadings([computed('DE', T0, 1), computed('DE', T0 + 5 * H, 2), gb(T0, 90)]);
    const latest = await store.latestPerZone();
    const byZone = Object.fromEntries(latest.map((r) => [r.zone, r]));
    expect(Object.keys(byZone).sort()).toEqual(['DE', 'GB']);
    expect(byZone.DE).toEqual({ zone: 'DE', ts: T0 + 5 * H, value: 2, method: 'computed:v1' });
    expect(byZone.GB?.method).toBe('upstream:uk-operator:actual');
    expect(await store.newestStoredTs('FR')).toBeNull();
  });

  it('keeps forecasts apart, by interval and issue time, and names the newest of each zone', async () => {
    await store.upsertForecasts([
      forecast('GB', T0, T0 - 600, 100),
      forecast('GB', T0 + 1800, T0 - 600, 110),
      forecast('GB', T0 + 1800, T0, 120),
      forecast('XX', T0, T0, 5),
    ]);
    // A repeat of the same interval and issue time replaces its value.
    await store.upsertForecasts([forecast('GB', T0 + 1800, T0, 121)]);
    const newest = await store.newestForecasts('uk-operator:intensity');
    expect(newest).toEqual([forecast('GB', T0 + 1800, T0, 121), forecast('XX', T0, T0, 5)]);
    // Never readings.
    expect(await store.readStored('GB', T0 - H, T0 + H)).toEqual([]);
    expect(await store.latestPerZone()).toEqual([]);
  });

  it('writes a chunk (readings, mixes, forecasts, backfilled windows) in one version', async () => {
    const before = await store.dataVersion();
    await store.writeChunk({
      readings: [gb(T0, 90), computed('DE', T0, 100)],
      mixes: [{ zone: 'GB', ts: T0, mix: { wind: 5 }, lifecycle: 80, direct: 20 }],
      forecasts: [forecast('GB', T0, T0 - 600, 95), forecast('GB', T0, T0 - 600, 96)],
      backfilled: [
        { zone: 'GB', fromTs: T0, toTs: T0 + H },
        { zone: 'DE', fromTs: T0, toTs: T0 + H },
      ],
    });
    const { version, changes } = await store.changesSince(before, 100);
    expect(version).toBe(before + 1);
    expect(changes.map((change) => change.version)).toEqual([version, version]);
    expect(await store.readStored('GB', T0, T0 + H)).toMatchObject([
      { value: 90, mix: { wind: 5 }, lifecycle: 80, direct: 20 },
    ]);
    // A repeat of one forecast key inside a chunk: the later one stands.
    expect(await storedForecasts(store, 'GB', 'uk-operator:intensity', T0, T0 + H)).toEqual([
      forecast('GB', T0, T0 - 600, 96),
    ]);
    expect(await store.backfilledWindows('GB', T0, T0 + H)).toEqual([
      { zone: 'GB', fromTs: T0, toTs: T0 + H },
    ]);
  });

  it('writes a chunk whole or not at all', async () => {
    const unstorable = { ...forecast('GB', T0, T0, 1), value: Number.NaN };
    await expect(
      store.writeChunk({
        readings: [gb(T0, 90)],
        mixes: [{ zone: 'GB', ts: T0 + H, mix: { wind: 5 }, lifecycle: 80, direct: 20 }],
        forecasts: [forecast('GB', T0, T0 - 600, 95), unstorable],
        backfilled: [{ zone: 'GB', fromTs: T0, toTs: T0 + 2 * H }],
      }),
    ).rejects.toThrow();
    expect(await store.readStored('GB', T0, T0 + 2 * H)).toEqual([]);
    expect(await storedForecasts(store, 'GB', 'uk-operator:intensity', T0, T0 + H)).toEqual([]);
    expect(await store.backfilledWindows('GB', T0, T0 + 2 * H)).toEqual([]);
  });

  it('lists the backfilled windows of a zone that overlap a window, by start', async () => {
    await store.writeChunk({
      readings: [],
      mixes: [],
      forecasts: [],
      backfilled: [
        { zone: 'DE', fromTs: T0 + 10 * H, toTs: T0 + 20 * H },
        { zone: 'DE', fromTs: T0, toTs: T0 + 5 * H },
        { zone: 'DE', fromTs: T0 + 30 * H, toTs: T0 + 40 * H },
        { zone: 'FR', fromTs: T0, toTs: T0 + 40 * H },
      ],
    });
    // Recording a window again changes nothing.
    await store.writeChunk({
      readings: [],
      mixes: [],
      forecasts: [],
      backfilled: [{ zone: 'DE', fromTs: T0, toTs: T0 + 5 * H }],
    });
    expect(await store.backfilledWindows('DE', T0 + 5 * H, T0 + 31 * H)).toEqual([
      { zone: 'DE', fromTs: T0 + 10 * H, toTs: T0 + 20 * H },
      { zone: 'DE', fromTs: T0 + 30 * H, toTs: T0 + 40 * H },
    ]);
  });

  it('reads upstream forecasts of one kind over a window, every issue, and keeps them out of the changes', async () => {
    const wind = (ts: number, issuedAt: number, value: number): StoredForecast => ({
      zone: 'DE',
      ts,
      kind: 'europe-tso:wind',
      issuedAt,
      value,
    });
    const before = await store.dataVersion();
    await store.upsertForecasts([
      wind(T0 + H, T0 - 2 * H, 900),
      wind(T0, T0 - H, 1000),
      wind(T0, T0 - 2 * H, 800),
      wind(T0 + 2 * H, T0 - H, 700),
      { ...wind(T0, T0 - H, 30), kind: 'europe-tso:solar' },
      { ...wind(T0, T0 - H, 1), zone: 'FR' },
    ]);
    expect(await storedForecasts(store, 'DE', 'europe-tso:wind', T0, T0 + 2 * H)).toEqual([
      wind(T0, T0 - 2 * H, 800),
      wind(T0, T0 - H, 1000),
      wind(T0 + H, T0 - 2 * H, 900),
    ]);
    expect(await storedForecasts(store, 'DE', 'uk-operator:fw48h', T0, T0 + 2 * H)).toEqual([]);
    // Only the kind served in place of a reading goes to the caches' change feed.
    await store.upsertForecasts([forecast('GB', T0, T0, 90)]);
    const changes = await store.changesSince(before, 100);
    expect(changes.forecasts).toEqual([forecast('GB', T0, T0, 90)]);
    expect(changes.complete).toBe(true);
  });

  it('keeps backtests and returns the newest', async () => {
    expect(await store.newestBacktest()).toBeNull();
    const run = (createdAt: number): BacktestRun => ({
      createdAt,
      zones: [
        {
          zone: 'DE',
          basis: 'lifecycle',
          from: T0,
          to: T0 + 24 * H,
          issues: 2,
          rows: [],
          served: { '1-6': 'a@1', '7-24': 'a@1', '25-48': 'b@1', '49-72': 'b@1' },
          bands: { 'a@1': { q10: [-1.5], q90: [2.25] } },
        },
      ],
    });
    await store.saveBacktest(run(T0));
    await store.saveBacktest(run(T0 + H));
    expect(await store.newestBacktest()).toEqual(run(T0 + H));
    // A caller holding the newest is not sent it again; one holding an older one is.
    expect(await store.newestBacktest(T0 + H)).toBeNull();
    expect(await store.newestBacktest(T0)).toEqual(run(T0 + H));
  });

  it("keeps the newest backtest's states for the next run to resume from, and no older ones", async () => {
    expect((await store.newestBacktestStates()).size).toBe(0);
    const run = (createdAt: number): BacktestRun => ({ createdAt, zones: [] });
    const bytes = Uint8Array.from({ length: 70_000 }, (_, k) => (k * 7) % 256);
    const read = async () =>
      new Map(
        [...(await store.newestBacktestStates())].map(([key, state]) => [
          key,
          Uint8Array.from(state),
        ]),
      );
    const first = new Map([
      ['DE|lifecycle', bytes],
      ['DE|direct', bytes.subarray(1000, 2000)],
    ]);
    await store.saveBacktest(run(T0), first);
    expect(await read()).toEqual(first);
    // The next run's states replace them all: a zone-basis it kept none of has none.
    const second = new Map([['FR|direct', bytes.subarray(5, 50)]]);
    await store.saveBacktest(run(T0 + H), second);
    expect(await read()).toEqual(second);
    // A save that fails part-way leaves the newest run and its states as they were.
    const broken = new Map([
      ['PL|direct', bytes],
      ['PL|lifecycle', null as unknown as Uint8Array],
    ]);
    await expect(store.saveBacktest(run(T0 + 2 * H), broken)).rejects.toThrow();
    expect(await read()).toEqual(second);
    expect((await store.newestBacktest())?.createdAt).toBe(T0 + H);
    // A run stored without any (`gridco2 backtest` of some zones) leaves none to resume from.
    await store.saveBacktest(run(T0 + 3 * H));
    expect((await store.newestBacktestStates()).size).toBe(0);
    expect((await store.newestBacktest())?.createdAt).toBe(T0 + 3 * H);
  });

  it('serves each basis from its own column, and the mix of published intervals', async () => {
    await store.upsertReadings([
      { ...computed('DE', T0, 400), mix: { coal: 1, gas: 1 }, lifecycle: 400, direct: 300 },
      computed('DE', T0 + H, 9, false),
      gb(T0, 150),
    ]);
    // GB's mix comes from its own feed, beside the operator's figure, without touching it.
    await store.upsertMixes([
      { zone: 'GB', ts: T0, mix: { gas: 40, 'wind-onshore': 60 }, lifecycle: 200, direct: 148 },
      { zone: 'GB', ts: T0 + 1800, mix: { gas: 50 }, lifecycle: 245, direct: 185 },
    ]);
    expect(await store.readingsInWindow('GB', T0, T0 + H, 10)).toEqual([
      { ts: T0, value: 150, method: 'upstream:uk-operator:actual' },
    ]);
    expect(await store.readingsInWindow('GB', T0, T0 + H, 10, 'lifecycle')).toEqual([
      { ts: T0, value: 200, method: 'computed:v1' },
      { ts: T0 + 1800, value: 245, method: 'computed:v1' },
    ]);
    expect(await store.readingsInWindow('DE', T0, T0 + 2 * H, 10, 'direct')).toEqual([
      { ts: T0, value: 300, method: 'computed:v1:direct' },
    ]);
    const latestDirect = await store.latestPerZone('direct');
    expect(latestDirect.sort((a, b) => a.zone.localeCompare(b.zone))).toEqual([
      { zone: 'DE', ts: T0, value: 300, method: 'computed:v1:direct' },
      { zone: 'GB', ts: T0 + 1800, value: 185, method: 'computed:v1:direct' },
    ]);
    expect(await store.mixesInWindow('DE', T0, T0 + 2 * H, 10)).toEqual([
      { ts: T0, mix: { coal: 1, gas: 1 } },
    ]);
    expect(await store.mixesInWindow('GB', T0, T0 + H, 1)).toEqual([
      { ts: T0, mix: { gas: 40, 'wind-onshore': 60 } },
    ]);
    // A later operator figure leaves the interval's mix and basis values where they were.
    await store.upsertReadings([gb(T0, 155)]);
    const [row] = await store.readStored('GB', T0, T0 + 1);
    expect(row).toMatchObject({
      value: 155,
      lifecycle: 200,
      direct: 148,
      mix: { gas: 40, 'wind-onshore': 60 },
    });
    // A mix alone does not publish the interval on the default basis.
    expect(await store.readingsInWindow('GB', T0 + 1800, T0 + H, 10)).toEqual([]);
  });

  it('pages through every stored row by key', async () => {
    await store.upsertReadings([
      computed('FR', T0, 1),
      computed('DE', T0 + H, 2),
      computed('DE', T0, 3, false),
    ]);
    const first = await store.scanStored(null, 2);
    expect(first.map((r) => [r.zone, r.ts])).toEqual([
      ['DE', T0],
      ['DE', T0 + H],
    ]);
    const second = await store.scanStored({ zone: 'DE', ts: T0 + H }, 2);
    expect(second.map((r) => [r.zone, r.ts])).toEqual([['FR', T0]]);
  });

  it('counts committed writes in its data version', async () => {
    const before = await store.dataVersion();
    await store.upsertReadings([computed('DE', T0, 1)]);
    expect(await store.dataVersion()).toBeGreaterThan(before);
  });

  it('lists the changes since a data version, with each basis and the forecasts, in write order', async () => {
    const start = await store.dataVersion();
    await store.upsertReadings([computed('DE', T0, 1), computed('FR', T0, 2)]);
    const middle = await store.dataVersion();
    await store.upsertReadings([computed('DE', T0, 3, false)]);
    const third = await store.dataVersion();
    await store.upsertForecasts([forecast('GB', T0, T0, 90)]);

    const all = await store.changesSince(start, 100);
    expect(all.complete).toBe(true);
    expect(all.version).toBe(await store.dataVersion());
    // The net effect per key, in the order of the writes that left it so.
    expect(all.changes.map((c) => [c.zone, c.published])).toEqual([
      ['FR', true],
      ['DE', false],
    ]);
    expect(all.forecasts).toEqual([forecast('GB', T0, T0, 90)]);
    const later = await store.changesSince(middle, 100);
    expect(later.changes).toEqual([
      {
        zone: 'DE',
        ts: T0,
        value: 3,
        method: 'computed:v1',
        published: false,
        lifecycle: null,
        direct: null,
        version: third,
      },
    ]);
    expect(all.changes.find((c) => c.zone === 'FR')).toMatchObject({
      lifecycle: 2,
      direct: 1,
      version: middle,
    });
    // Each row carries the version of the write that left it so: what a stream resumes after.
    expect(middle).toBeGreaterThan(start);
    expect(third).toBeGreaterThan(middle);
    const none = await store.changesSince(all.version, 100);
    expect(none).toEqual({ version: all.version, changes: [], forecasts: [], complete: true });
    const capped = await store.changesSince(start, 1);
    expect(capped.complete).toBe(false);
    expect(capped.changes).toHaveLength(1);
  });

  it('pages inside a write larger than the page by (version, zone, ts), each change once', async () => {
    const start = await store.dataVersion();
    const large = ['PL', 'DE', 'FR'].flatMap((zone) =>
      Array.from({ length: 4 }, (_, i) => computed(zone, T0 + (3 - i) * H, i)),
    );
    await store.upsertReadings(large);
    const largeVersion = await store.dataVersion();
    await store.upsertReadings([computed('AT', T0, 9)]);
    const end = await store.dataVersion();
    const keys = (changes: readonly { zone: string; ts: number }[]) =>
      changes.map((change) => `${change.zone} ${change.ts - T0}`);

    const first = await store.changesSince(start, 5);
    expect(first.complete).toBe(false);
    expect(keys(first.changes)).toEqual(['DE 0', 'DE 3600', 'DE 7200', 'DE 10800', 'FR 0']);
    const last = first.changes.at(-1)!;
    const second = await store.changesSince(start, 5, { zone: last.zone, ts: last.ts });
    expect(keys(second.changes)).toEqual(['FR 3600', 'FR 7200', 'FR 10800', 'PL 0', 'PL 3600']);
    expect(second.changes.every((change) => change.version === largeVersion)).toBe(true);
    const after = second.changes.at(-1)!;
    const third = await store.changesSince(start, 5, { zone: after.zone, ts: after.ts });
    // The rest of the write, then the writes after it.
    expect(keys(third.changes)).toEqual(['PL 7200', 'PL 10800', 'AT 0']);
    expect(third.changes.map((change) => change.version)).toEqual([
      largeVersion,
      largeVersion,
      end,
    ]);
    expect(third.complete).toBe(true);
    expect(third.version).toBe(end);
    // Every change of the write once, across the pages.
    const paged = [...first.changes, ...second.changes, ...third.changes.slice(0, 2)];
    expect(keys(paged).sort()).toEqual(keys(large).sort());
  });

  it('grants a lease to one holder at a time until it expires or is released', async () => {
    expect(await store.acquireLease('ingest', 'a', 60_000)).toBe(true);
    expect(await store.acquireLease('ingest', 'b', 60_000)).toBe(false);
    expect(await store.acquireLease('ingest', 'a', 60_000)).toBe(true);
    expect(await store.acquireLease('other', 'b', 60_000)).toBe(true);
    await store.releaseLease('ingest', 'b');
    expect(await store.acquireLease('ingest', 'b', 60_000)).toBe(false);
    await store.releaseLease('ingest', 'a');
    expect(await store.acquireLease('ingest', 'b', 50)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(await store.acquireLease('ingest', 'a', 60_000)).toBe(true);
  });

  it('keeps the newest ingestion report of each source', async () => {
    const report = (startedAt: number, points: number): IngestReport => ({
      source: 'europe-tso',
      startedAt,
      finishedAt: startedAt + 10,
      zones: 33,
      pointsStored: points,
      incompleteHours: 0,
      errors: [],
      quality: [],
    });
    await store.recordIngestReport(report(T0, 1));
    await store.recordIngestReport(report(T0 + H, 2));
    const reports = await store.latestIngestReports();
    expect(reports['europe-tso']?.pointsStored).toBe(2);
    expect(reports['us-agency']).toBeUndefined();
  });

  it('is not synthetic until marked, then stays marked for every handle', async () => {
    await store.upsertReadings([computed('DE', T0, 1)]);
    expect(await store.isSynthetic()).toBe(false);
    await store.markSynthetic();
    await store.markSynthetic(); // idempotent
    expect(await store.isSynthetic()).toBe(true);
    const other = await backend.reopen();
    try {
      expect(await other.isSynthetic()).toBe(true);
      expect(await other.readStored('DE', T0, T0 + H)).toHaveLength(1);
    } finally {
      await other.close();
    }
  });

  it('answers ping while open', async () => {
    await expect(store.ping()).resolves.toBeUndefined();
  });

  it('has no problem to report while healthy', async () => {
    await store.upsertReadings([computed('DE', T0, 1)]);
    await store.acquireLease('ingest', 'a', 60_000);
    expect(await store.problems()).toEqual([]);
  });
  describe('flows', () => {
    const flow = (from: string, to: string, ts: number, mw: number): DirectedFlow => ({
      from,
      to,
      ts,
      mw,
    });

    it('keeps each graph, direction and hour, and reads a window in (ts, from, to) order', async () => {
      expect(
        await store.upsertFlows('europe', [
          flow('GB', 'DK-1', T0, 0),
          flow('DK-1', 'GB', T0 + H, 102),
          flow('DK-1', 'GB', T0, 1362),
          flow('DK-1', 'GB', T0 + 2 * H, 7),
        ]),
      ).toBe(4);
      // Both reports of a US pair, each as its reporter gave it: signed, kept apart.
      await store.upsertFlows('us', [
        flow('US-FPC', 'US-FPL', T0, -329.5),
        flow('US-FPL', 'US-FPC', T0, 330),
      ]);
      expect(await store.flowsInWindow('europe', T0, T0 + 2 * H)).toEqual([
        flow('DK-1', 'GB', T0, 1362),
        flow('GB', 'DK-1', T0, 0),
        flow('DK-1', 'GB', T0 + H, 102),
      ]);
      expect(await store.flowsInWindow('us', T0 - H, T0 + H)).toEqual([
        flow('US-FPC', 'US-FPL', T0, -329.5),
        flow('US-FPL', 'US-FPC', T0, 330),
      ]);
      // Never readings.
      expect(await store.readStored('GB', T0, T0 + 3 * H)).toEqual([]);
    });

    it('revises a flow in place; an unchanged one keeps its version, a write changing nothing takes none', async () => {
      const before = await store.dataVersion();
      await store.upsertFlows('europe', [
        flow('DK-1', 'GB', T0, 10),
        flow('DK-1', 'GB', T0 + H, 20),
      ]);
      const first = await store.dataVersion();
      expect(first).toBe(before + 1);
      expect(await store.flowChangesSince('europe', before)).toEqual({
        version: first,
        hours: [T0, T0 + H],
      });

      // The trailing window fetched again, unrevised.
      expect(
        await store.upsertFlows('europe', [
          flow('DK-1', 'GB', T0, 10),
          flow('DK-1', 'GB', T0 + H, 20),
        ]),
      ).toBe(0);
      expect(await store.dataVersion()).toBe(first);
      expect(await store.flowChangesSince('europe', first)).toEqual({ version: first, hours: [] });

      // One hour revised, one new direction in an earlier hour.
      expect(
        await store.upsertFlows('europe', [
          flow('DK-1', 'GB', T0, 10),
          flow('DK-1', 'GB', T0 + H, 25),
          flow('GB', 'DK-1', T0 - H, 0),
        ]),
      ).toBe(2);
      expect(await store.flowChangesSince('europe', first)).toEqual({
        version: first + 1,
        hours: [T0 - H, T0 + H],
      });
      expect(await store.flowChangesSince('us', before)).toEqual({ version: first + 1, hours: [] });
      expect((await store.flowsInWindow('europe', T0 + H, T0 + 2 * H))[0]?.mw).toBe(25);
      // Readings followers see the version move, and no reading change.
      expect(await store.changesSince(before, 10)).toMatchObject({
        version: first + 1,
        changes: [],
        complete: true,
      });
    });

    it('stores the last of flows repeating a key in one write, counted once', async () => {
      expect(
        await store.upsertFlows('us', [
          flow('US-BPA', 'US-CAISO', T0, 1),
          flow('US-BPA', 'US-CAISO', T0, 2),
        ]),
      ).toBe(1);
      expect(await store.flowsInWindow('us', T0, T0 + H)).toEqual([
        flow('US-BPA', 'US-CAISO', T0, 2),
      ]);
    });

    it('records the first stored hour of each direction, an earlier write moving it back', async () => {
      await store.upsertFlows('europe', [
        flow('FR-COR', 'IT-SARD', T0 + 5 * H, 47),
        flow('IT-SARD', 'FR-COR', T0 + 6 * H, 10),
      ]);
      await store.upsertFlows('europe', [
        flow('FR-COR', 'IT-SARD', T0 + 2 * H, 40),
        flow('FR-COR', 'IT-SARD', T0 + 9 * H, 41),
        flow('IT-SARD', 'FR-COR', T0 + 8 * H, 3),
      ]);
      await store.upsertFlows('us', [flow('US-MISO', 'IESO', T0, -200)]);
      expect(await store.flowBorders('europe')).toEqual([
        { from: 'FR-COR', to: 'IT-SARD', firstTs: T0 + 2 * H },
        { from: 'IT-SARD', to: 'FR-COR', firstTs: T0 + 6 * H },
      ]);
      expect(await store.flowBorders('us')).toEqual([{ from: 'US-MISO', to: 'IESO', firstTs: T0 }]);
    });

    it('writes flows whole or not at all', async () => {
      const before = await store.dataVersion();
      await expect(
        store.upsertFlows('europe', [
          flow('DK-1', 'GB', T0, 1),
          flow('GB', 'DK-1', T0, Number.NaN),
        ]),
      ).rejects.toThrow();
      expect(await store.flowsInWindow('europe', T0, T0 + H)).toEqual([]);
      expect(await store.flowBorders('europe')).toEqual([]);
      expect(await store.dataVersion()).toBe(before);
    });
  });

  describe('consumption series', () => {
    const row = (zone: string, ts: number, lifecycle: number): ConsumptionRow => ({
      zone,
      ts,
      lifecycle,
      direct: lifecycle / 3,
      consumption: { coal: 25.5, 'wind-onshore': 0.1 + 0.2, 'imported-estimated': 50 },
      imports: { 'NO-2': 100, DE: 1 / 3 },
      exports: { SE: 75 },
      estimatedPct: 100 / 3,
      estimatedBorders: ['DE', 'NO-2'],
      renewablePct: 12.5,
      lowCarbonPct: 40.25,
    });
    const mixOf = ({
      zone: _zone,
      lifecycle: _lifecycle,
      direct: _direct,
      ...mix
    }: ConsumptionRow) => mix;

    it('keeps each basis and the traced mix unrounded, read by window, ascending, with the limit', async () => {
      const rows = [0, 1, 2, 3].map((k) => row('DK-2', T0 + k * H, 300.123456789 + k));
      expect(
        await store.replaceConsumption('europe', {
          hours: [T0, T0 + H, T0 + 2 * H, T0 + 3 * H],
          rows: [...rows].reverse(),
        }),
      ).toBe(4);
      expect(await store.consumptionInWindow('DK-2', T0 + H, T0 + 4 * H, 2, 'lifecycle')).toEqual([
        { ts: T0 + H, value: 301.123456789, method: 'computed:v1:consumption' },
        { ts: T0 + 2 * H, value: 302.123456789, method: 'computed:v1:consumption' },
      ]);
      expect(await store.consumptionInWindow('DK-2', T0, T0 + H, 10, 'direct')).toEqual([
        { ts: T0, value: 300.123456789 / 3, method: 'computed:v1:direct:consumption' },
      ]);
      const mixes = await store.consumptionMixesInWindow('DK-2', T0, T0 + 2 * H, 10);
      expect(mixes).toEqual([mixOf(rows[0]!), mixOf(rows[1]!)]);
      // Records in one order on every backend: categories as traced, neighbours by code.
      expect(Object.keys(mixes[0]!.consumption)).toEqual([
        'coal',
        'wind-onshore',
        'imported-estimated',
      ]);
      expect(Object.keys(mixes[0]!.imports)).toEqual(['DE', 'NO-2']);
      // Never readings, and no other zone's.
      expect(await store.readStored('DK-2', T0, T0 + 4 * H)).toEqual([]);
      expect(await store.consumptionInWindow('DK-1', T0, T0 + 4 * H, 10, 'lifecycle')).toEqual([]);
    });

    it("replaces a graph's hours: a zone no longer solved is removed, other hours and graphs stay", async () => {
      await store.replaceConsumption('europe', {
        hours: [T0, T0 + H],
        rows: [row('AT', T0, 1), row('HU', T0, 2), row('AT', T0 + H, 3), row('HU', T0 + H, 4)],
      });
      await store.replaceConsumption('us', { hours: [T0], rows: [row('US-ISONE', T0, 5)] });
      expect(
        await store.replaceConsumption('europe', { hours: [T0], rows: [row('AT', T0, 10)] }),
      ).toBe(2);
      const values = async (zone: string) =>
        (await store.consumptionInWindow(zone, T0, T0 + 2 * H, 10, 'lifecycle')).map(
          (point) => point.value,
        );
      expect(await values('AT')).toEqual([10, 3]);
      expect(await values('HU')).toEqual([4]);
      expect(await values('US-ISONE')).toEqual([5]);
      // An hour solved with nothing in it empties it.
      await store.replaceConsumption('us', { hours: [T0], rows: [] });
      expect(await values('US-ISONE')).toEqual([]);
    });

    it('leaves a row stored again unchanged; a write changing nothing takes no data version', async () => {
      const before = await store.dataVersion();
      const write = { hours: [T0], rows: [row('BE', T0, 200), row('NL', T0, 300)] };
      expect(await store.replaceConsumption('europe', write)).toBe(2);
      const first = await store.dataVersion();
      expect(first).toBe(before + 1);
      expect(await store.replaceConsumption('europe', write)).toBe(0);
      expect(await store.dataVersion()).toBe(first);
      const revised = { ...row('NL', T0, 300), estimatedBorders: ['DE'] };
      expect(
        await store.replaceConsumption('europe', {
          hours: [T0],
          rows: [row('BE', T0, 200), revised],
        }),
      ).toBe(1);
      expect(await store.dataVersion()).toBe(first + 1);
      expect(
        (await store.consumptionMixesInWindow('NL', T0, T0 + H, 1))[0]?.estimatedBorders,
      ).toEqual(['DE']);
      // Readings followers see the version move, and no reading change.
      expect(await store.changesSince(before, 10)).toMatchObject({ changes: [], complete: true });
    });

    it("serves each zone's newest value on each basis", async () => {
      expect(await store.latestConsumptionPerZone('lifecycle')).toEqual([]);
      await store.replaceConsumption('europe', {
        hours: [T0, T0 + H, T0 + 2 * H],
        rows: [row('CH', T0, 1), row('CH', T0 + 2 * H, 2), row('AT', T0 + H, 3)],
      });
      await store.replaceConsumption('us', { hours: [T0 - H], rows: [row('US', T0 - H, 4)] });
      const latest = await store.latestConsumptionPerZone('direct');
      expect([...latest].sort((a, b) => (a.zone < b.zone ? -1 : 1))).toEqual([
        { zone: 'AT', ts: T0 + H, value: 1, method: 'computed:v1:direct:consumption' },
        { zone: 'CH', ts: T0 + 2 * H, value: 2 / 3, method: 'computed:v1:direct:consumption' },
        { zone: 'US', ts: T0 - H, value: 4 / 3, method: 'computed:v1:direct:consumption' },
      ]);
    });

    it('keeps a cursor per graph, set with a write or alone, without a data version', async () => {
      expect(await store.consumptionCursor('europe')).toBeNull();
      await store.replaceConsumption('europe', {
        hours: [T0],
        rows: [row('PL', T0, 1)],
        cursor: 7,
      });
      const version = await store.dataVersion();
      expect(await store.replaceConsumption('europe', { hours: [], rows: [], cursor: 9 })).toBe(0);
      expect(await store.consumptionCursor('europe')).toBe(9);
      expect(await store.consumptionCursor('us')).toBeNull();
      expect(await store.dataVersion()).toBe(version);
    });

    it('tells followers the first hour a write after their version replaced, removals included', async () => {
      const start = await store.dataVersion();
      expect(await store.consumptionChangedFrom(start)).toBeNull();
      await store.replaceConsumption('europe', {
        hours: [T0 + 5 * H, T0 + 6 * H],
        rows: [row('PL', T0 + 5 * H, 1), row('CZ', T0 + 6 * H, 2)],
      });
      const afterFirst = await store.dataVersion();
      expect(await store.consumptionChangedFrom(start)).toBe(T0 + 5 * H);
      expect(await store.consumptionChangedFrom(afterFirst)).toBeNull();
      // The same rows again change nothing: no hour to read again.
      await store.replaceConsumption('europe', {
        hours: [T0 + 5 * H, T0 + 6 * H],
        rows: [row('PL', T0 + 5 * H, 1), row('CZ', T0 + 6 * H, 2)],
      });
      expect(await store.consumptionChangedFrom(afterFirst)).toBeNull();
      // CZ is no longer solved at T0 + 6 h: only a removal, which no row's version shows.
      await store.replaceConsumption('europe', { hours: [T0 + 6 * H], rows: [] });
      expect(await store.consumptionChangedFrom(afterFirst)).toBe(T0 + 6 * H);
      await store.replaceConsumption('us', {
        hours: [T0 + 2 * H],
        rows: [row('US', T0 + 2 * H, 3)],
      });
      expect(await store.consumptionChangedFrom(afterFirst)).toBe(T0 + 2 * H);
      expect(await store.consumptionChangedFrom(start)).toBe(T0 + 2 * H);
    });

    it('lists only its newest writes; a follower older than a pruned one reloads from its first hour', async () => {
      const start = await store.dataVersion();
      // Two writes that will be pruned, the first of an early hour, then the kept ones, later.
      await store.replaceConsumption('europe', { hours: [T0], rows: [row('SK', T0, 1)] });
      const afterEarly = await store.dataVersion();
      await store.replaceConsumption('europe', {
        hours: [T0 + 300 * H],
        rows: [row('SK', T0 + 300 * H, 1)],
      });
      const afterPruned = await store.dataVersion();
      for (let k = 0; k < CONSUMPTION_WRITES_KEPT; k++) {
        const ts = T0 + (400 + k) * H;
        await store.replaceConsumption('europe', { hours: [ts], rows: [row('SK', ts, k)] });
      }
      // Every write is listed to a follower from before them all, as before any pruning.
      expect(await store.consumptionChangedFrom(start)).toBe(T0);
      // The follower after the first write missed the second, pruned: it reloads from the first
      // pruned write's hour, T0, where the listed writes would say T0 + 300 h.
      expect(await store.consumptionChangedFrom(afterEarly)).toBe(T0);
      // A follower after the pruned writes is told exactly.
      expect(await store.consumptionChangedFrom(afterPruned)).toBe(T0 + 400 * H);
      expect(await store.consumptionChangedFrom(await store.dataVersion())).toBeNull();
    });

    it('replaces only the hours written, not those between them', async () => {
      await store.replaceConsumption('europe', {
        hours: [T0, T0 + H, T0 + 2 * H],
        rows: [row('SI', T0, 1), row('SI', T0 + H, 2), row('SI', T0 + 2 * H, 3)],
      });
      expect(
        await store.replaceConsumption('europe', {
          hours: [T0, T0 + 2 * H],
          rows: [row('SI', T0, 1), row('SI', T0 + 2 * H, 4)],
        }),
      ).toBe(1);
      expect(
        (await store.consumptionInWindow('SI', T0, T0 + 3 * H, 10, 'lifecycle')).map(
          (point) => point.value,
        ),
      ).toEqual([1, 2, 4]);
    });

    it('refuses a row outside the hours written, twice, or not finite, storing nothing of it', async () => {
      const bad = [
        { hours: [T0], rows: [row('FR', T0, 1), row('FR', T0 + H, 2)] },
        { hours: [T0], rows: [row('FR', T0, 1), row('FR', T0, 2)] },
        { hours: [T0], rows: [row('FR', T0, 1), row('ES', T0, Number.NaN)] },
        { hours: [T0], rows: [{ ...row('FR', T0, 1), imports: { ES: Infinity } }] },
      ];
      for (const write of bad) {
        await expect(store.replaceConsumption('europe', { ...write, cursor: 3 })).rejects.toThrow(
          RangeError,
        );
      }
      expect(await store.consumptionInWindow('FR', T0, T0 + 2 * H, 10, 'lifecycle')).toEqual([]);
      expect(await store.consumptionCursor('europe')).toBeNull();
    });
  });

  describe('webhooks', () => {
    const subscription = (
      id: string,
      clientAddress: string,
      createdAt = 1,
    ): StoredSubscription => ({
      id,
      secret: `whsec_${id}`,
      url: `https://hooks.example.org/${id}`,
      zones: id.endsWith('all') ? 'all' : ['DE', 'FR'],
      basis: id.endsWith('direct') ? 'direct' : undefined,
      condition: { type: 'below', gco2eq_kwh: 150.5 },
      clientAddress,
      clientNetwork: clientAddress.slice(0, clientAddress.lastIndexOf('.')),
      createdAt,
      memory: {},
    });
    const delivery = (eventId: string, subscriptionId: string, dueAt: number): QueuedDelivery => ({
      eventId,
      subscriptionId,
      body: `{"id":"${eventId}"}`,
      firstDueAt: dueAt,
      dueAt,
      failures: 0,
    });

    it('keeps subscriptions as given, and caps them per address and in all', async () => {
      const caps = { perAddress: 2, perNetwork: 10, total: 3 };
      expect(
        await store.webhooks.createSubscription(subscription('a-all', '10.0.0.1', 1), caps),
      ).toBe('created');
      expect(
        await store.webhooks.createSubscription(subscription('b-direct', '10.0.0.1', 2), caps),
      ).toBe('created');
      expect(await store.webhooks.createSubscription(subscription('c', '10.0.0.1', 3), caps)).toBe(
        'address-cap',
      );
      expect(await store.webhooks.createSubscription(subscription('d', '10.0.0.2', 4), caps)).toBe(
        'created',
      );
      expect(await store.webhooks.createSubscription(subscription('e', '10.0.0.3', 5), caps)).toBe(
        'total-cap',
      );
      expect(await store.webhooks.subscription('a-all')).toEqual(
        subscription('a-all', '10.0.0.1', 1),
      );
      expect(await store.webhooks.subscription('b-direct')).toEqual(
        subscription('b-direct', '10.0.0.1', 2),
      );
      expect(await store.webhooks.subscription('c')).toBeNull();
      expect((await store.webhooks.subscriptions()).map((s) => s.id)).toEqual([
        'a-all',
        'b-direct',
        'd',
      ]);
      await store.webhooks.remember('d', { DE: 1, FR: 0 });
      expect((await store.webhooks.subscription('d'))!.memory).toEqual({ DE: 1, FR: 0 });
      expect(await store.webhooks.deleteSubscription('a-all')).toBe(true);
      expect(await store.webhooks.deleteSubscription('a-all')).toBe(false);
      // Room again: under the total cap, and for the address.
      expect(await store.webhooks.createSubscription(subscription('c', '10.0.0.1', 6), caps)).toBe(
        'created',
      );
    });

    it('caps subscriptions per network', async () => {
      const caps = { perAddress: 2, perNetwork: 3, total: 10 };
      const outcomes = [];
      for (const [i, address] of [
        '10.0.0.1',
        '10.0.0.1',
        '10.0.0.2',
        '10.0.0.3',
        '10.0.1.1',
      ].entries()) {
        outcomes.push(
          await store.webhooks.createSubscription(subscription(`n${i}`, address, i), caps),
        );
      }
      expect(outcomes).toEqual(['created', 'created', 'created', 'network-cap', 'created']);
      expect((await store.webhooks.subscription('n4'))?.clientNetwork).toBe('10.0.1');
    });

    it('holds the caps when many creations race from two handles', async () => {
      const other = await backend.reopen();
      try {
        const caps = { perAddress: 5, perNetwork: 10, total: 8 };
        const outcomes = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            (i % 2 ? other : store).webhooks.createSubscription(
              subscription(`s${i}`, `10.0.0.${i % 3}`, i),
              caps,
            ),
          ),
        );
        expect(outcomes.filter((outcome) => outcome === 'created')).toHaveLength(8);
        const stored = await store.webhooks.subscriptions();
        expect(stored).toHaveLength(8);
        for (const address of ['10.0.0.0', '10.0.0.1', '10.0.0.2']) {
          expect(stored.filter((s) => s.clientAddress === address).length).toBeLessThanOrEqual(5);
        }
      } finally {
        await other.close();
      }
    });

    it('queues each event id once, serves due deliveries in order, and settles them', async () => {
      const caps = { perAddress: 10, perNetwork: 10, total: 10 };
      await store.webhooks.createSubscription(subscription('s', '10.0.0.1'), caps);
      expect(
        await store.webhooks.enqueue([
          delivery('e2', 's', 2000),
          delivery('e1', 's', 1000),
          delivery('e3', 's', 9000),
          delivery('gone', 'no-such-subscription', 1000),
        ]),
      ).toBe(3);
      expect(await store.webhooks.enqueue([delivery('e1', 's', 5)])).toBe(0);
      expect(await store.webhooks.due(2000, 10)).toEqual([
        delivery('e1', 's', 1000),
        delivery('e2', 's', 2000),
      ]);
      expect(await store.webhooks.due(2000, 1)).toEqual([delivery('e1', 's', 1000)]);
      await store.webhooks.retryAt('e1', 3000);
      expect(await store.webhooks.due(2500, 10)).toEqual([delivery('e2', 's', 2000)]);
      expect(await store.webhooks.due(3000, 10)).toEqual([
        delivery('e2', 's', 2000),
        { ...delivery('e1', 's', 1000), dueAt: 3000, failures: 1 },
      ]);
      await store.webhooks.delivered('e1', 3100);
      await store.webhooks.drop('e2', 3200);
      expect(await store.webhooks.due(10_000, 10)).toEqual([delivery('e3', 's', 9000)]);
      // Delivered and dropped event ids are not queued again until pruned.
      expect(await store.webhooks.enqueue([delivery('e1', 's', 1), delivery('e2', 's', 1)])).toBe(
        0,
      );
      expect(await store.webhooks.pruneSettled(3150)).toBe(1);
      expect(await store.webhooks.enqueue([delivery('e1', 's', 1)])).toBe(1);
      // Deleting the subscription takes its pending deliveries with it.
      await store.webhooks.deleteSubscription('s');
      expect(await store.webhooks.due(10_000, 10)).toEqual([]);
    });

    it('remembers the evaluated data version for every handle', async () => {
      expect(await store.webhooks.evaluatedVersion()).toBe(-1);
      await store.webhooks.setEvaluatedVersion(41);
      await store.webhooks.setEvaluatedVersion(42);
      const other = await backend.reopen();
      try {
        expect(await other.webhooks.evaluatedVersion()).toBe(42);
      } finally {
        await other.close();
      }
    });
  });
});
