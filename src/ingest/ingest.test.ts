import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  startReplayUpstreams,
  type ReplayFault,
  type ReplayRequest,
  type ReplayUpstreams,
} from '../../test/support/replay-upstreams.js';
import { loadConfig, type Config } from '../config.js';
import type { StoredReading } from '../core/reading.js';
import { findZone, type SourceId, type Zone } from '../core/zones.js';
import type { Clock } from '../sources/http.js';
import { SqliteStore } from '../storage/sqlite/sqlite-store.js';
import type { Store } from '../storage/store.js';
import { runBackfill } from './backfill.js';
import { recomputeStored } from './recompute.js';
import { reportDisabledSource, runIngestion } from './run-ingestion.js';
import { startIngestionScheduler, type Timers } from './scheduler.js';
import { createSourceAdapter, sourceDisabledReason } from './sources.js';
import { storeZoneReadings } from './store-readings.js';

const H = 3600;
const ANCHOR = Date.UTC(2026, 10, 20, 12) / 1000;
const TOKEN = 'entsoe-token-5e0c';
const KEY = 'eia-key-77aa';

const dir = mkdtempSync(join(tmpdir(), 'gridco2-ingest-'));
let storeCount = 0;
let store: Store;
let replay: ReplayUpstreams;
let fault: ((request: ReplayRequest) => ReplayFault | undefined) | undefined;
let logLines: string[];

const logger = pino(
  { level: 'debug' },
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  }),
);

function clockAt(epochSeconds: number): Clock & { set(seconds: number): void } {
  let nowMs = epochSeconds * 1000;
  return {
    now: () => nowMs,
    sleep: async (ms) => {
      nowMs += ms;
    },
    set: (seconds) => {
      nowMs = seconds * 1000;
    },
  };
}

function configFor(upstreams: ReplayUpstreams, overrides: Record<string, string> = {}): Config {
  return loadConfig({
    DATABASE_URL: 'sqlite::memory:',
    ENTSOE_TOKEN: TOKEN,
    EIA_API_KEY: KEY,
    ENTSOE_BASE_URL: upstreams.entsoeBaseUrl,
    EIA_BASE_URL: upstreams.eiaBaseUrl,
    NESO_BASE_URL: upstreams.nesoBaseUrl,
    ...overrides,
  });
}

const adapterFor = (source: SourceId, config = configFor(replay), clock = clockAt(ANCHOR)) =>
  createSourceAdapter(config, source, {
    logger,
    clock,
    http: { retries: 1, backoffMs: 1 },
  });

const zone = (code: string) => findZone(code) as Zone;

beforeAll(async () => {
  replay = await startReplayUpstreams({
    anchorTs: ANCHOR,
    entsoeToken: TOKEN,
    eiaApiKey: KEY,
    fault: (request) => fault?.(request),
  });
});
afterAll(async () => {
  await replay.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  store = new SqliteStore(join(dir, `store-${storeCount++}.db`));
  fault = undefined;
  logLines = [];
  replay.requests.length = 0;
  return () => store.close();
});

/** An adapter on a clock the test sets, and one ingestion pass at a given time. */
function ingestion(source: SourceId, config = configFor(replay)) {
  const clock = clockAt(ANCHOR);
  const adapter = adapterFor(source, config, clock);
  return {
    adapter,
    clock,
    runAt: (epochSeconds: number) => {
      clock.set(epochSeconds);
      return runIngestion({ store, adapter, logger });
    },
  };
}

describe('runIngestion', () => {
  it('fetches the initial window, stores readings and the report, logs one line', async () => {
    const report = await ingestion('us-agency').runAt(ANCHOR + 600);
    expect(report).toMatchObject({ source: 'us-agency', zones: 11, errors: [] });
    expect(report.pointsStored).toBeGreaterThan(100);
    expect(report.incompleteHours).toBe(
      report.quality.reduce((total, zone) => total + zone.incompleteHours, 0),
    );
    expect(await store.latestIngestReports()).toEqual({ 'us-agency': report });
    // Hour starts [now − 7 days, current hour + 1) as inclusive hour-ending labels.
    const query = replay.requests[0]?.url.searchParams;
    expect(query?.get('start')).toBe('2026-11-13T14');
    expect(query?.get('end')).toBe('2026-11-20T13');
    const lines = logLines.filter((line) => line.includes('points stored'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`us-agency: 11 zones, ${report.pointsStored} points stored`);
  });

  it('re-fetches from 72 h before the newest stored hour', async () => {
    const { runAt } = ingestion('us-agency');
    await runAt(ANCHOR + 600);
    replay.requests.length = 0;
    await runAt(ANCHOR + 2 * H);
    // Newest stored hour starts at ANCHOR − 1 h; 72 h before it, as an hour-ending label.
    expect(replay.requests[0]?.url.searchParams.get('start')).toBe('2026-11-17T12');
  });

  it('keeps what is stored and goes on when one zone fails', async () => {
    const { runAt } = ingestion('europe-tso');
    await runAt(ANCHOR);
    const fiBefore = await store.readStored('FI', 0, ANCHOR + H);
    expect(fiBefore).toHaveLength(72);

    fault = ({ url }) =>
      url.searchParams.get('in_Domain') === zone('FI').upstreamId ? { status: 500 } : undefined;
    replay.requests.length = 0;
    const report = await runAt(ANCHOR + H);
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0]).toMatch(/^FI: europe-tso: GET .*securityToken=REDACTED.*HTTP 500$/);
    expect(report.zones).toBe(32);
    expect(await store.readStored('FI', 0, ANCHOR + H)).toEqual(fiBefore);
    // Every other zone was still asked (FI twice: one retry).
    expect(replay.requests).toHaveLength(34);
    expect(await store.readStored('NO-5', 0, ANCHOR + H)).toHaveLength(47);
    expect(logLines.join('')).not.toContain(TOKEN);
  });

  it('stops the source at refused credentials', async () => {
    const config = configFor(replay, { ENTSOE_TOKEN: 'revoked-token' });
    const report = await ingestion('europe-tso', config).runAt(ANCHOR);
    expect(replay.requests).toHaveLength(1);
    expect(report.errors).toEqual([
      expect.stringMatching(/^DE: .*credentials refused; check ENTSOE_TOKEN/),
    ]);
    expect(report.zones).toBe(0);
  });

  it('never publishes a bad payload and keeps the stored values', async () => {
    const { runAt } = ingestion('us-agency');
    await runAt(ANCHOR);
    const before = await store.readStored('US-PJM', 0, ANCHOR + H);
    fault = () => ({ status: 200, body: '{"response": {"data": "oops"}}' });
    const report = await runAt(ANCHOR + H);
    expect(report.errors).toEqual([
      expect.stringMatching(/^US, US-PJM, .*, US-BPA: us-agency: unusable payload/),
    ]);
    expect(await store.readStored('US-PJM', 0, ANCHOR + H)).toEqual(before);
  });

  it('keeps at most one GB forecast, the newest half-hour without a settled value', async () => {
    const { runAt } = ingestion('uk-operator');
    const forecasts = async () =>
      (await store.readStored('GB', 0, ANCHOR + 24 * H)).filter(
        (reading) => reading.method === 'upstream:uk-operator:forecast',
      );
    await runAt(ANCHOR + 10 * 60);
    expect((await forecasts()).map((reading) => reading.ts)).toEqual([ANCHOR]);
    await runAt(ANCHOR + 70 * 60);
    expect((await forecasts()).map((reading) => reading.ts)).toEqual([ANCHOR + H]);
    expect(await store.readStored('GB', ANCHOR - H, ANCHOR)).toHaveLength(2);
  });
});

describe('storeZoneReadings', () => {
  const hour = (ts: number, value: number, complete = true): StoredReading => ({
    zone: 'DE',
    ts,
    value,
    method: 'computed:v1',
    complete,
    mix: { gas: value },
  });
  const quality = {
    zone: 'DE',
    pointsStored: 0,
    incompleteHours: 0,
    clampedNegatives: 0,
    unknownCodes: [],
  };
  const window = { fromTs: ANCHOR, toTs: ANCHOR + 3 * H };

  it('replaces values in place, but never a complete hour by an incomplete one', async () => {
    await store.upsertReadings([hour(ANCHOR, 100), hour(ANCHOR + H, 200)]);
    const fetched = [
      hour(ANCHOR, 110),
      hour(ANCHOR + H, 820, false),
      hour(ANCHOR + 2 * H, 820, false),
    ];
    const result = await storeZoneReadings(store, 'DE', { readings: fetched, quality }, window);
    expect(result).toMatchObject({ pointsStored: 2, incompleteHours: 1 });
    // The same answer again writes nothing.
    const version = await store.dataVersion();
    await storeZoneReadings(store, 'DE', { readings: fetched, quality }, window);
    expect(await store.dataVersion()).toBe(version);
    expect(
      (await store.readStored('DE', ANCHOR, ANCHOR + 3 * H)).map((r) => [r.value, r.complete]),
    ).toEqual([
      [110, true],
      [200, true],
      [820, false],
    ]);
  });

  it('keeps the live GB forecast when a reply stops short of it, and drops it once settled', async () => {
    const half = (ts: number, value: number, forecast = false): StoredReading => ({
      zone: 'GB',
      ts,
      value,
      method: forecast ? 'upstream:uk-operator:forecast' : 'upstream:uk-operator:actual',
      complete: true,
      mix: null,
    });
    const gbWindow = { fromTs: ANCHOR, toTs: ANCHOR + 2 * H };
    const gbQuality = { ...quality, zone: 'GB' };
    await store.upsertReadings([half(ANCHOR, 90), half(ANCHOR + 1800, 95, true)]);
    const methods = async () =>
      (await store.readStored('GB', ANCHOR, ANCHOR + 2 * H)).map((r) => [r.ts - ANCHOR, r.method]);
    // A lagging reply: only the already settled half-hour.
    await storeZoneReadings(
      store,
      'GB',
      { readings: [half(ANCHOR, 91)], quality: gbQuality },
      gbWindow,
    );
    expect(await methods()).toEqual([
      [0, 'upstream:uk-operator:actual'],
      [1800, 'upstream:uk-operator:forecast'],
    ]);
    // A reply that settles a later half-hour: the forecast is obsolete.
    await storeZoneReadings(
      store,
      'GB',
      { readings: [half(ANCHOR, 91), half(ANCHOR + 3600, 80)], quality: gbQuality },
      gbWindow,
    );
    expect(await methods()).toEqual([
      [0, 'upstream:uk-operator:actual'],
      [3600, 'upstream:uk-operator:actual'],
    ]);
  });

  it('writes nothing outside the window', async () => {
    const fetched = [hour(ANCHOR - H, 1), hour(ANCHOR, 2), hour(ANCHOR + 3 * H, 3)];
    await storeZoneReadings(store, 'DE', { readings: fetched, quality }, window);
    expect((await store.readStored('DE', 0, ANCHOR + 10 * H)).map((r) => r.ts)).toEqual([ANCHOR]);
  });
});

describe('sources without their key', () => {
  it('are named, with the variable to set, and reported as not configured', async () => {
    const config = loadConfig({ DATABASE_URL: 'sqlite::memory:' });
    expect(sourceDisabledReason(config, 'europe-tso')).toBe('ENTSOE_TOKEN is not set');
    expect(sourceDisabledReason(config, 'us-agency')).toBe('EIA_API_KEY is not set');
    expect(sourceDisabledReason(config, 'uk-operator')).toBeNull();
    expect(() => createSourceAdapter(config, 'europe-tso')).toThrow(/ENTSOE_TOKEN is not set/);
    await reportDisabledSource(store, 'us-agency', 'EIA_API_KEY is not set');
    expect((await store.latestIngestReports())['us-agency']?.errors).toEqual([
      'not configured: EIA_API_KEY is not set',
    ]);
  });
});

describe('startIngestionScheduler', () => {
  /** Timers that only fire when the test says so. */
  function manualTimers(): Timers & { pending: { callback: () => void; ms: number }[] } {
    const pending: { callback: () => void; ms: number }[] = [];
    return {
      pending,
      set: (callback, ms) => {
        const entry = { callback, ms };
        pending.push(entry);
        return entry;
      },
      clear: (handle) => {
        pending.splice(pending.indexOf(handle as (typeof pending)[number]), 1);
      },
    };
  }
  const fire = (timers: ReturnType<typeof manualTimers>) => timers.pending.shift()?.callback();
  const until = async (condition: () => boolean | Promise<boolean>) => {
    for (let tries = 0; tries < 200 && !(await condition()); tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  it('runs each configured source soon after start, then every hour', async () => {
    const config = configFor(replay, { ENTSOE_TOKEN: '', EIA_API_KEY: '' });
    const timers = manualTimers();
    const clock = clockAt(ANCHOR + 600);
    const scheduler = startIngestionScheduler({ config, store, logger, clock, timers });
    expect(logLines.filter((line) => line.includes('disabled'))).toHaveLength(2);
    expect(timers.pending.map((timer) => timer.ms)).toEqual([5000]);

    fire(timers);
    await until(() => timers.pending.length === 1);
    expect(timers.pending[0]?.ms).toBe(3600_000);
    const reports = await store.latestIngestReports();
    expect(reports['uk-operator']).toMatchObject({ zones: 1, errors: [] });
    expect(reports['europe-tso']?.errors).toEqual(['not configured: ENTSOE_TOKEN is not set']);

    await scheduler.stop();
    expect(timers.pending).toEqual([]);
  });

  it('stop() lets the run in progress finish its zone, then resolves', async () => {
    const slow = await startReplayUpstreams({
      anchorTs: ANCHOR,
      entsoeToken: TOKEN,
      eiaApiKey: KEY,
      delayMs: 300,
    });
    try {
      const config = configFor(slow, { ENTSOE_TOKEN: '', EIA_API_KEY: '' });
      const timers = manualTimers();
      const clock = clockAt(ANCHOR + 600);
      const scheduler = startIngestionScheduler({ config, store, logger, clock, timers });
      fire(timers);
      await until(() => slow.requests.length === 1);
      await scheduler.stop();
      expect(await store.readStored('GB', 0, ANCHOR + H)).toHaveLength(49);
      expect((await store.latestIngestReports())['uk-operator']?.errors).toEqual([]);
      expect(timers.pending).toEqual([]);
    } finally {
      await slow.close();
    }
  });
});

describe('runBackfill', () => {
  it('fills a window chunk by chunk and skips stored chunks when run again', async () => {
    const tiled = await startReplayUpstreams({
      anchorTs: ANCHOR,
      entsoeToken: TOKEN,
      eiaApiKey: KEY,
      tileEia: true,
    });
    try {
      const adapter = adapterFor('us-agency', configFor(tiled));
      const window = { fromTs: ANCHOR - 20 * 24 * H, toTs: ANCHOR };
      const progress: string[] = [];
      const first = await runBackfill({
        store,
        adapter,
        logger,
        window,
        zones: [zone('US-PJM'), zone('US-CAISO')],
        onProgress: ({ done, total, skipped }) => progress.push(`${done}/${total} ${skipped}`),
      });
      expect(first).toMatchObject({ chunks: 3, skipped: 0, pointsStored: 2 * 20 * 24, errors: [] });
      expect(progress).toEqual(['1/3 false', '2/3 false', '3/3 false']);
      const requests = tiled.requests.length;

      const second = await runBackfill({
        store,
        adapter,
        logger,
        window,
        zones: [zone('US-PJM'), zone('US-CAISO')],
      });
      expect(second).toMatchObject({ chunks: 3, skipped: 3, pointsStored: 0 });
      expect(tiled.requests).toHaveLength(requests);
    } finally {
      await tiled.close();
    }
  });
});

describe('recomputeStored', () => {
  it('recomputes computed values from their mix and leaves operator figures alone', async () => {
    const gb: StoredReading = {
      zone: 'GB',
      ts: ANCHOR,
      value: 96,
      method: 'upstream:uk-operator:actual',
      complete: true,
      mix: null,
    };
    await store.upsertReadings([
      {
        zone: 'DE',
        ts: ANCHOR,
        value: 1,
        method: 'computed:v1',
        complete: true,
        mix: { coal: 1, gas: 1 },
      },
      {
        zone: 'DE',
        ts: ANCHOR + H,
        value: 655,
        method: 'computed:v1',
        complete: true,
        mix: { coal: 1, gas: 1 },
      },
      { zone: 'FR', ts: ANCHOR, value: 5, method: 'computed:v1', complete: false, mix: {} },
      gb,
    ]);
    const progress: number[] = [];
    const result = await recomputeStored(store, ({ scanned }) => progress.push(scanned));
    expect(result).toEqual({ scanned: 4, changed: 2, unreadable: [] });
    expect(progress).toEqual([4]);
    const stored = await store.readStored('DE', ANCHOR, ANCHOR + 2 * H);
    expect(stored.map((reading) => reading.value)).toEqual([655, 655]);
    expect((await store.readStored('FR', ANCHOR, ANCHOR + H))[0]).toMatchObject({
      value: null,
      complete: false,
    });
    expect(await store.readStored('GB', ANCHOR, ANCHOR + H)).toEqual([gb]);
  });
});
