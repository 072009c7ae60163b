import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { readFixture } from '../../test/fixtures.js';
import {
  startReplayUpstreams,
  type ReplayFault,
  type ReplayRequest,
  type ReplayUpstreams,
} from '../../test/support/replay-upstreams.js';
import { loggerInto } from '../../test/support/log-lines.js';
import { timedClock } from '../../test/support/timed-clock.js';
import { loadConfig, type Config } from '../config.js';
import { assessFreshness } from '../core/freshness.js';
import type { IngestReport, StoredForecast, StoredReading } from '../core/reading.js';
import { servedForecast } from '../core/served-forecast.js';
import { findZone, zonesOfSource, type Zone } from '../core/zones.js';
import type { Clock } from '../core/time.js';
import { SqliteStore } from '../storage/sqlite/sqlite-store.js';
import type { Store } from '../storage/store.js';
import { type BackfillProgress, runBackfill } from './backfill.js';
import { recomputeStored } from './recompute.js';
import { reportDisabledSource, RUN_DEADLINE_MS, runIngestion } from './run-ingestion.js';
import { startIngestionScheduler, type Timers } from './scheduler.js';
import { createSourceAdapter, sourceDisabledReason } from './sources.js';
import { PendingChunk } from './pending-chunk.js';
import { addZoneReadings } from './store-readings.js';
import type { SourceId } from '../core/sources.js';

const H = 3600;
const ANCHOR = Date.UTC(2026, 10, 20, 12) / 1000;
const TOKEN = 'entsoe-token-5e0c';
const KEY = 'eia-key-77aa';

const dir = mkdtempSync(join(tmpdir(), 'gridco2-ingest-'));
let storeCount = 0;
let store: Store;
let replay: ReplayUpstreams;
let fault: ((request: ReplayRequest) => ReplayFault | undefined) | undefined;
const logLines: string[] = [];
const logger = loggerInto(logLines);

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
    // The zones alone: the flow graphs have their own suite (ingest-graph.test.ts).
    FLOWS: 'off',
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
  logLines.length = 0;
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

/** The GB forecast the API serves now: src/core/served-forecast.ts over what is stored. */
async function servedGbForecast() {
  const settled = (await store.latestPerZone()).find((reading) => reading.zone === 'GB');
  const [forecast] = await store.newestForecasts('uk-operator:intensity');
  return servedForecast(settled?.ts, forecast);
}

const replayedForecast = (ts: number) =>
  replay.payloads.nesoEntries.find(({ from }) => Date.parse(from) / 1000 === ts)?.intensity
    .forecast;

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
      url.searchParams.get('in_Domain') === zone('FI').upstreamId &&
      url.searchParams.get('documentType') === 'A75'
        ? { status: 500 }
        : undefined;
    replay.requests.length = 0;
    const report = await runAt(ANCHOR + H);
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0]).toMatch(/^FI: europe-tso: GET .*securityToken=REDACTED.*HTTP 500$/);
    expect(report.zones).toBe(32);
    expect(await store.readStored('FI', 0, ANCHOR + H)).toEqual(fiBefore);
    // Every other zone was still asked (FI twice: one retry), and every zone's forecasts.
    const actuals = replay.requests.filter(
      ({ url }) => url.searchParams.get('documentType') === 'A75',
    );
    expect(actuals).toHaveLength(34);
    expect(replay.requests).toHaveLength(34 + 3 * 33);
    expect(await store.readStored('NO-5', 0, ANCHOR + H)).toHaveLength(47);
    expect(logLines.join('')).not.toContain(TOKEN);
  });

  it('stops the source at refused credentials', async () => {
    const config = configFor(replay, { ENTSOE_TOKEN: 'revoked-token' });
    const report = await ingestion('europe-tso', config).runAt(ANCHOR);
    expect(replay.requests).toHaveLength(1);
    expect(report.errors).toEqual([
      expect.stringMatching(/^DE: .*credentials refused; check ENTSOE_TOKEN/),
      expect.stringMatching(
        /^source given up: credentials refused after 1 of 33 zones; not tried: FR, ES, .*, HU$/,
      ),
    ]);
    expect(report.failures).toEqual([
      { kind: 'auth', zones: ['DE'] },
      { kind: 'stopped', zones: expect.arrayContaining(['FR', 'HU']) as unknown },
    ]);
    expect(report.zones).toBe(0);
  });

  // Issue 10, finding 8.
  it('redacts a key holding a quote by its value, and keeps upstream text out of the note', async () => {
    const key = `eia'key-tail-9f3e`;
    const config = configFor(replay, { EIA_API_KEY: key });
    const report = await ingestion('us-agency', config).runAt(ANCHOR);
    expect(report.errors).toEqual([expect.stringMatching(/api_key=REDACTED&.*HTTP 403/)]);
    const note = assessFreshness(new Map(), await store.latestIngestReports(), ANCHOR).note;
    expect(note).toContain(
      'us-agency: last run failed: authentication refused for 11 zones (run 2026-11-20T12:00:00Z).',
    );
    expect(note).not.toMatch(/127\.0\.0\.1|GET|HTTP|api_key/);
    for (const text of [JSON.stringify(report), logLines.join(''), note]) {
      expect(text).not.toContain('tail-9f3e');
    }
  });

  // Issue 10, finding 9: an empty answer is not an error, but it is said everywhere.
  it('reports zones answered without data in the report, the log line and the note', async () => {
    fault = ({ source }) => {
      switch (source) {
        case 'europe-tso':
          return {
            status: 200,
            body: readFixture('europe-tso', 'entsoe_acknowledgement_no-matching-data.xml'),
          };
        case 'us-agency':
          return {
            status: 200,
            body: readFixture('us-agency', 'eia_fuel-type-data_SC_NUC_empty-result.json'),
          };
        case 'uk-operator':
          return { status: 200, body: '{"data":[]}' };
      }
    };
    const reports: IngestReport[] = [];
    for (const source of ['europe-tso', 'us-agency', 'uk-operator'] as const) {
      reports.push(await ingestion(source).runAt(ANCHOR));
    }
    for (const report of reports) {
      expect(report.errors).toEqual([]);
      expect(report.pointsStored).toBe(0);
      expect(report.zonesWithoutData).toEqual(zonesOfSource(report.source).map((z) => z.code));
    }
    const lines = logLines.filter((line) => line.includes('no data returned'));
    expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual([
      'europe-tso: 33 zones, 0 points stored, 0 incomplete hours, 0 errors, no data returned for 33 zones',
      'us-agency: 11 zones, 0 points stored, 0 incomplete hours, 0 errors, no data returned for 11 zones',
      'uk-operator: 1 zones, 0 points stored, 0 incomplete hours, 0 errors, no data returned for 1 zone',
    ]);
    const note = assessFreshness(new Map(), await store.latestIngestReports(), ANCHOR).note;
    expect(note).toContain(
      'last europe-tso run 2026-11-20T12:00:00Z: 33 zones, 0 points stored, 0 incomplete hours, ' +
        'no errors; warning: no data returned for 33 zones.',
    );
    expect(note).toContain('no errors; warning: no data returned for GB.');
  });

  it('never publishes a bad payload and keeps the stored values', async () => {
    const { runAt } = ingestion('us-agency');
    await runAt(ANCHOR);
    const before = await store.readStored('US-PJM', 0, ANCHOR + H);
    fault = ({ url }) =>
      url.pathname.includes('/fuel-type-data/')
        ? { status: 200, body: '{"response": {"data": "oops"}}' }
        : undefined;
    const report = await runAt(ANCHOR + H);
    expect(report.errors).toEqual([
      expect.stringMatching(/^US, US-PJM, .*, US-BPA: us-agency: unusable payload/),
    ]);
    expect(await store.readStored('US-PJM', 0, ANCHOR + H)).toEqual(before);
  });

  // Which forecast is served is decided at read time (src/core/served-forecast.ts): these check
  // that ingestion stores what that decision needs. The API serves it (test/http-api.test.ts).
  it('serves at most one GB forecast, the newest half-hour without a settled value', async () => {
    const { runAt } = ingestion('uk-operator');
    await runAt(ANCHOR + 10 * 60);
    expect(await servedGbForecast()).toEqual({
      ts: ANCHOR,
      value: replayedForecast(ANCHOR),
      method: 'upstream:uk-operator:forecast',
    });
    await runAt(ANCHOR + 70 * 60);
    expect((await servedGbForecast())?.ts).toBe(ANCHOR + H);
    // Forecasts are never readings.
    const stored = await store.readStored('GB', 0, ANCHOR + 24 * H);
    expect(stored.filter((row) => row.method === 'upstream:uk-operator:forecast')).toEqual([]);
    expect(await store.readStored('GB', ANCHOR - H, ANCHOR)).toHaveLength(2);
  });

  it('stores GB on every basis from the generation mix, beside the operator figure', async () => {
    const { runAt } = ingestion('uk-operator');
    const report = await runAt(ANCHOR + 10 * 60);
    expect(report.errors).toEqual([]);
    expect(replay.requests.map(({ url }) => url.pathname)).toEqual([
      '/intensity/2026-11-13T13:00Z/2026-11-20T13:00Z',
      '/generation/2026-11-13T13:00Z/2026-11-20T13:00Z',
      // The forecast feed: the operator's 48 hours from one minute past the half hour.
      '/intensity/2026-11-20T12:01Z/fw48h',
    ]);
    // The replayed mix ends at ANCHOR, like the settled figures; both start before the window.
    const stored = await store.readStored('GB', ANCHOR - 7 * 24 * H + H, ANCHOR + H);
    expect(stored).toHaveLength(7 * 48 - 2);
    expect(stored.every((row) => row.mix !== null && row.lifecycle !== null)).toBe(true);
    expect(stored.filter((row) => row.complete)).toHaveLength(48);
    // 48 values and 334 mixes written, as one zone.
    expect(report).toMatchObject({ zones: 1, pointsStored: 48 + 334 });
    const last = stored.at(-1);
    const entry = replay.payloads.nesoEntries.find(
      ({ from }) => Date.parse(from) / 1000 === ANCHOR - 1800,
    );
    expect(last).toMatchObject({
      ts: ANCHOR - 1800,
      value: entry?.intensity.actual,
      method: 'upstream:uk-operator:actual',
    });
    expect(await store.readingsInWindow('GB', ANCHOR - 1800, ANCHOR, 10, 'lifecycle')).toEqual([
      { ts: ANCHOR - 1800, value: last?.lifecycle, method: 'computed:v1' },
    ]);

    // The next run re-fetches the trailing window: no value or mix changed, none is rewritten
    // (only the forecast is issued anew).
    const version = await store.dataVersion();
    const again = await runAt(ANCHOR + 20 * 60);
    expect(again).toMatchObject({ errors: [], pointsStored: 0 });
    const changes = await store.changesSince(version, 1000);
    expect(changes.changes).toEqual([]);
    expect(
      changes.forecasts
        .filter(({ kind }) => kind === 'uk-operator:intensity')
        .map(({ ts, issuedAt }) => [ts, issuedAt]),
    ).toEqual([[ANCHOR, ANCHOR + 20 * 60]]);
  });

  it('reports a failed mix feed and still stores the operator figures', async () => {
    const { runAt } = ingestion('uk-operator');
    fault = ({ url }) =>
      url.pathname.startsWith('/generation/')
        ? { status: 200, body: '<html>oops</html>' }
        : undefined;
    const report = await runAt(ANCHOR + 10 * 60);
    expect(report.errors).toEqual([
      'GB: uk-operator: unusable generation mix payload: body is not a JSON object',
    ]);
    expect(report.failures).toEqual([{ kind: 'invalid-payload', zones: ['GB'] }]);
    const stored = await store.readStored('GB', 0, ANCHOR + H);
    expect(stored).toHaveLength(48);
    expect(stored.every((row) => row.complete && row.mix === null)).toBe(true);
    expect(await servedGbForecast()).toMatchObject({ ts: ANCHOR });
  });
});

// Issue 10, finding 9: a hanging ENTSO-E held one run for about 2.9 hours (5 attempts × 60 s ×
// 33 zones). These runs use the production retry and timeout settings on a fake fetch.
describe('runIngestion against a hanging or interrupted upstream', () => {
  const NO_DATA = readFixture('europe-tso', 'entsoe_acknowledgement_no-matching-data.xml');
  const zones = zonesOfSource('europe-tso');

  function hangingEurope(hangs: (zoneIndex: number) => boolean) {
    const clock = timedClock(ANCHOR);
    const requested: string[] = [];
    const adapter = createSourceAdapter(configFor(replay), 'europe-tso', {
      logger,
      clock,
      http: { random: () => 0 },
      fetch: async (input, init) => {
        // The forecast feeds (A69, A65, A71) answer at once, without data: these runs are about
        // the actuals; forecast-feed failures are src/ingest/forecasts.test.ts's.
        if (new URL(String(input)).searchParams.get('documentType') !== 'A75') {
          return new Response(NO_DATA, { status: 200 });
        }
        const eic = new URL(String(input)).searchParams.get('in_Domain');
        const index = zones.findIndex((zone) => zone.upstreamId === eic);
        requested.push(zones[index]?.code ?? '?');
        if (hangs(index)) return clock.hang(init?.signal);
        return new Response(NO_DATA, { status: 200 });
      },
    });
    return { adapter, requested };
  }

  it('gives a source up after 3 zones in a row time out, and says so', async () => {
    const { adapter, requested } = hangingEurope(() => true);
    const report = await runIngestion({ store, adapter, logger });
    // Three zones, each tried 1 + 4 times, instead of all 33.
    expect(requested).toEqual([
      ...Array(5).fill('DE'),
      ...Array(5).fill('FR'),
      ...Array(5).fill('ES'),
    ]);
    expect(report.failures).toEqual([
      { kind: 'timeout', zones: ['DE', 'FR', 'ES'] },
      { kind: 'stopped', zones: zones.slice(3).map((zone) => zone.code) },
    ]);
    expect(report.errors.at(-1)).toMatch(
      /^source given up: upstream looks down: 3 requests in a row failed \(timeout\) after 3 of 33 zones; not tried: PT, /,
    );
    // 3 × (5 × 60 s + 0.5 + 1 + 2 + 4 s of backoff).
    expect(report.finishedAt - report.startedAt).toBe(3 * 307.5 - 0.5);
    const note = assessFreshness(new Map(), await store.latestIngestReports(), ANCHOR).note;
    expect(note).toContain(
      'europe-tso: last run failed: upstream timeout for DE, FR, ES; ' +
        'source given up for this run, 30 zones not fetched',
    );
  });

  it('ends at its deadline when zones keep timing out between answers', async () => {
    // Every other zone hangs: never 3 in a row, so only the deadline ends the run.
    const { adapter, requested } = hangingEurope((index) => index % 2 === 0);
    const report = await runIngestion({ store, adapter, logger });
    expect(RUN_DEADLINE_MS).toBe(20 * 60_000);
    expect(report.finishedAt - report.startedAt).toBe(RUN_DEADLINE_MS / 1000);
    // Zones 0, 2, 4 time out (5 tries of 60 s + 7.5 s of backoff each), 1, 3, 5 answer; zone 6
    // is cut by the deadline in its 5th try.
    expect(new Set(requested)).toEqual(new Set(zones.slice(0, 7).map((zone) => zone.code)));
    expect(report.failures).toEqual([
      { kind: 'timeout', zones: [0, 2, 4].map((index) => zones[index]?.code) },
      { kind: 'deadline', zones: zones.slice(6).map((zone) => zone.code) },
    ]);
    expect(report.zonesWithoutData).toEqual([1, 3, 5].map((index) => zones[index]?.code));
    expect(report.errors.at(-1)).toMatch(/^run deadline of 1200 s reached after 7 of 33 zones;/);
    const note = assessFreshness(new Map(), await store.latestIngestReports(), ANCHOR).note;
    expect(note).toContain('run deadline reached, 27 zones not fetched');
  });

  it('takes a shorter deadline from its caller', async () => {
    const { adapter, requested } = hangingEurope(() => true);
    const report = await runIngestion({ store, adapter, logger, deadlineMs: 90_000 });
    expect(report.finishedAt - report.startedAt).toBe(90);
    // 60 s, 0.5 s of backoff, then a try cut at the deadline.
    expect(requested).toEqual(['DE', 'DE']);
    expect(report.failures?.map((failure) => failure.kind)).toEqual(['deadline']);
  });

  it('gives a backfill up by the same rule', async () => {
    const { adapter, requested } = hangingEurope(() => true);
    const result = await runBackfill({
      store,
      adapter,
      logger,
      window: { fromTs: ANCHOR - 24 * H, toTs: ANCHOR },
      zones: zones.slice(0, 4),
    });
    expect(new Set(requested)).toEqual(new Set(['DE', 'FR', 'ES']));
    expect(result.errors).toHaveLength(4);
    expect(result.errors.at(-1)).toBe(
      'europe-tso given up at chunk 3 of 4: upstream looks down: 3 requests in a row failed (timeout)',
    );
  });

  it('stores a report saying it was interrupted, keeping what was stored', async () => {
    const interrupt = new AbortController();
    const clock = timedClock(ANCHOR);
    let requests = 0;
    const adapter = createSourceAdapter(configFor(replay), 'europe-tso', {
      logger,
      clock,
      fetch: async (input) => {
        const actuals = new URL(String(input)).searchParams.get('documentType') === 'A75';
        if (actuals && ++requests === 3) interrupt.abort();
        return new Response(NO_DATA, { status: 200 });
      },
    });
    const report = await runIngestion({ store, adapter, logger, signal: interrupt.signal });
    // The zone in flight is finished, no further one is started.
    expect(requests).toBe(3);
    expect(report.zones).toBe(3);
    expect(report.errors).toEqual([
      expect.stringMatching(/^interrupted after 3 of 33 zones; not tried: PT, /),
    ]);
    expect(report.failures).toEqual([
      { kind: 'interrupted', zones: zones.slice(3).map((zone) => zone.code) },
    ]);
    expect((await store.latestIngestReports())['europe-tso']).toEqual(report);
  });
});

/** One zone's fetched readings added to a write of their own, and written. */
async function storeZoneReadings(
  store: Store,
  zone: string,
  fetched: Parameters<typeof addZoneReadings>[2],
  window: Parameters<typeof addZoneReadings>[3],
) {
  const pending = new PendingChunk(store);
  const quality = await addZoneReadings(pending, zone, fetched, window);
  await pending.write();
  return quality;
}

describe('addZoneReadings, then written', () => {
  const hour = (ts: number, value: number, complete = true): StoredReading => ({
    zone: 'DE',
    ts,
    value,
    method: 'computed:v1',
    complete,
    mix: { gas: value },
    lifecycle: null,
    direct: null,
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
    const half = (ts: number, value: number): StoredReading => ({
      zone: 'GB',
      ts,
      value,
      method: 'upstream:uk-operator:actual',
      complete: true,
      mix: null,
      lifecycle: null,
      direct: null,
    });
    const forecast = (ts: number, value: number, issuedAt: number): StoredForecast => ({
      zone: 'GB',
      ts,
      kind: 'uk-operator:intensity',
      issuedAt,
      value,
    });
    const gbWindow = { fromTs: ANCHOR, toTs: ANCHOR + 2 * H };
    const gbQuality = { ...quality, zone: 'GB' };
    const served = async () => (await servedGbForecast())?.ts;
    await storeZoneReadings(
      store,
      'GB',
      {
        readings: [half(ANCHOR, 90)],
        // One outside the window is not the window's to write.
        forecasts: [forecast(ANCHOR + 1800, 95, ANCHOR + 1900), forecast(ANCHOR + 2 * H, 1, 0)],
        quality: gbQuality,
      },
      gbWindow,
    );
    expect(await served()).toBe(ANCHOR + 1800);
    expect(await store.newestForecasts('uk-operator:intensity')).toEqual([
      forecast(ANCHOR + 1800, 95, ANCHOR + 1900),
    ]);
    // A lagging reply: only the already settled half-hour, no forecast.
    await storeZoneReadings(
      store,
      'GB',
      { readings: [half(ANCHOR, 91)], forecasts: [], quality: gbQuality },
      gbWindow,
    );
    expect(await served()).toBe(ANCHOR + 1800);
    // A reply that settles a later half-hour: the forecast is obsolete.
    await storeZoneReadings(
      store,
      'GB',
      { readings: [half(ANCHOR, 91), half(ANCHOR + 3600, 80)], forecasts: [], quality: gbQuality },
      gbWindow,
    );
    expect(await served()).toBeUndefined();
    expect(
      (await store.readStored('GB', ANCHOR, ANCHOR + 2 * H)).map((r) => [r.ts - ANCHOR, r.method]),
    ).toEqual([
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
  const until = (condition: () => boolean | Promise<boolean>) =>
    vi.waitFor(async () => expect(await condition()).toBe(true), { timeout: 20_000, interval: 10 });

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
      // Stopped once the zone's second feed (its mix) has answered: a request is recorded when
      // it is answered, and a stop between the two feeds would leave the mix for the next run.
      await until(() => slow.requests.length >= 2);
      expect(slow.requests.map(({ url }) => url.pathname.split('/')[1])).toEqual([
        'intensity',
        'generation',
        ...(slow.requests.length > 2 ? ['intensity'] : []),
      ]);
      await scheduler.stop();
      // The zone was finished: its settled figures, its forecast and its mix.
      const stored = await store.readStored('GB', 0, ANCHOR + H);
      expect(stored.filter((row) => row.complete)).toHaveLength(48);
      expect(stored.every((row) => row.mix !== null)).toBe(true);
      expect(await store.newestForecasts('uk-operator:intensity')).toHaveLength(1);
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
      const backfill = (onProgress?: (progress: BackfillProgress) => void) =>
        runBackfill({
          store,
          adapter,
          logger,
          window,
          zones: [zone('US-PJM'), zone('US-CAISO')],
          onProgress,
        });
      const progress: string[] = [];
      const first = await backfill(({ done, total, skipped }) =>
        progress.push(`${done}/${total} ${skipped}`),
      );
      expect(first).toMatchObject({ chunks: 3, skipped: 0, pointsStored: 2 * 20 * 24, errors: [] });
      expect(progress).toEqual(['1/3 false', '2/3 false', '3/3 false']);
      const requests = tiled.requests.length;

      const second = await backfill();
      expect(second).toMatchObject({ chunks: 3, skipped: 3, pointsStored: 0 });
      expect(tiled.requests).toHaveLength(requests);
    } finally {
      await tiled.close();
    }
  });
});

describe('runBackfill of GB', () => {
  const window = { fromTs: ANCHOR - 12 * H, toTs: ANCHOR };
  const backfill = () => runBackfill({ store, adapter: adapterFor('uk-operator'), logger, window });

  it('stores both feeds, and skips the chunk once both are stored', async () => {
    expect(await backfill()).toMatchObject({ chunks: 1, skipped: 0, pointsStored: 48, errors: [] });
    const stored = await store.readStored('GB', window.fromTs, window.toTs);
    expect(stored.every((row) => row.complete && row.lifecycle !== null)).toBe(true);
    expect(await backfill()).toMatchObject({ chunks: 1, skipped: 1, pointsStored: 0 });
  });

  it('fetches a chunk again when its mix could not be stored', async () => {
    fault = ({ url }) =>
      url.pathname.startsWith('/generation/') ? { status: 200, body: '{"data":5}' } : undefined;
    expect(await backfill()).toMatchObject({
      skipped: 0,
      pointsStored: 24,
      errors: [
        'GB: uk-operator: unusable generation mix payload: `data` is neither an object nor a list',
      ],
    });
    fault = undefined;
    expect(await backfill()).toMatchObject({ skipped: 0, pointsStored: 24, errors: [] });
    expect(await backfill()).toMatchObject({ skipped: 1 });
  });
});

describe('recomputeStored', () => {
  const gb: StoredReading = {
    zone: 'GB',
    ts: ANCHOR,
    value: 96,
    method: 'upstream:uk-operator:actual',
    complete: true,
    mix: null,
    lifecycle: null,
    direct: null,
  };

  it('recomputes computed values from their mix and leaves operator figures alone', async () => {
    await store.upsertReadings([
      {
        zone: 'DE',
        ts: ANCHOR,
        value: 1,
        method: 'computed:v1',
        complete: true,
        mix: { coal: 1, gas: 1 },
        lifecycle: null,
        direct: null,
      },
      {
        zone: 'DE',
        ts: ANCHOR + H,
        value: 655,
        method: 'computed:v1',
        complete: true,
        mix: { coal: 1, gas: 1 },
        // Up to date on every basis: (820 + 490) / 2 and (760 + 370) / 2.
        lifecycle: 655,
        direct: 565,
      },
      {
        zone: 'FR',
        ts: ANCHOR,
        value: 5,
        method: 'computed:v1',
        complete: false,
        mix: {},
        lifecycle: null,
        direct: null,
      },
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
    expect(stored.map(({ lifecycle, direct }) => [lifecycle, direct])).toEqual([
      [655, 565],
      [655, 565],
    ]);
    expect(await store.readStored('GB', ANCHOR, ANCHOR + H)).toEqual([gb]);
  });

  it('recomputes GB on each basis from its mix and keeps the operator figure', async () => {
    await store.upsertReadings([gb]);
    // A mix stored with stale values (factors changed since).
    await store.upsertMixes([
      { zone: 'GB', ts: ANCHOR, mix: { gas: 50, 'wind-onshore': 50 }, lifecycle: 1, direct: 1 },
    ]);
    expect(await recomputeStored(store)).toEqual({ scanned: 1, changed: 1, unreadable: [] });
    // Lifecycle (50 x 490 + 50 x 11) / 100 = 250.5; direct (50 x 370 + 50 x 0) / 100 = 185.
    expect(await store.readStored('GB', ANCHOR, ANCHOR + H)).toEqual([
      { ...gb, mix: { gas: 50, 'wind-onshore': 50 }, lifecycle: 250.5, direct: 185 },
    ]);
    expect(await recomputeStored(store)).toMatchObject({ changed: 0 });
  });
});
