import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { readFixture } from '../../test/fixtures.js';
import { replayedFlows } from '../../test/support/replay-upstreams.js';
import { replayDuringSuite } from '../../test/support/suite-replay.js';
import { loggerInto } from '../../test/support/log-lines.js';
import { timedClock } from '../../test/support/timed-clock.js';
import { loadConfig } from '../config.js';
import { assessFreshness } from '../core/freshness.js';
import { EUROPE_NODES } from '../core/grid-graph/europe.js';
import type { ReadingChange } from '../storage/store.js';
import { computeReadings } from '../core/method.js';
import { eiaFuelTypesOf } from '../core/production-types.js';
import type { SourceId } from '../core/sources.js';
import { ZONES, zonesOfSource } from '../core/zones.js';
import { CONTRACT_REGISTRY } from '../core/zone-registry.js';
import { buildApp } from '../http/app.js';
import { runOutcome } from '../http/routes/metrics.js';
import { ReadingCache } from '../read/reading-cache.js';
import { parseFuelTypeData } from '../sources/eia/parse.js';
import { SqliteStore } from '../storage/sqlite/sqlite-store.js';
import type { Store } from '../storage/store.js';
import { PreparedEvents } from '../stream/events.js';
import { runGraphBackfill } from './backfill-graph.js';
import { runIngestion } from './run-ingestion.js';
import { createSourceAdapter } from './sources.js';

/**
 * The flow graphs in ingestion and backfill (FLOWS, extensions §15-16), against the recorded
 * payloads replayed over HTTP on 127.0.0.1 (test/support/replay-upstreams.ts): both directions
 * of DK-1/GB and one link of Corsica/Sardinia each way (A11), FPC's interchange with FPL and
 * NSB (EIA), and the fuel-type data of every balancing authority.
 */

const H = 3600;
const ANCHOR = Date.UTC(2026, 10, 20, 12) / 1000;
const TOKEN = 'entsoe-token-flows-91c2';
const KEY = 'eia-key-flows-4d7e';

const DK1 = '10YDK-1--------W';
const GB = '10YGB----------A';
const SARD = '10Y1001A1001A74G';
const NO_DATA = readFixture('europe-tso', 'entsoe_acknowledgement_no-matching-data.xml');

const replay = replayDuringSuite({ anchorTs: ANCHOR, entsoeToken: TOKEN, eiaApiKey: KEY });
const logLines: string[] = [];
const logger = loggerInto(logLines);
const dir = mkdtempSync(join(tmpdir(), 'gridco2-graph-'));
let storeCount = 0;
let store: Store;
beforeEach(() => {
  store = openStore();
  logLines.length = 0;
  return () => store.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const openStore = () => new SqliteStore(join(dir, `store-${storeCount++}.db`));

/**
 * An adapter with flows on (unless `FLOWS=off` is given), on a clock the test sets, whose
 * requests are counted as they start and while they are in flight; of `zones` only, if given
 * (the zones' requests are not what a test of the graph looks at).
 */
function graphIngestion(
  source: SourceId,
  env: Record<string, string> = {},
  zones?: readonly string[],
) {
  const clock = timedClock(ANCHOR);
  const started: { readonly url: URL; readonly atMs: number }[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const countingFetch: typeof fetch = async (input, init) => {
    started.push({ url: new URL(String(input)), atMs: clock.now() });
    mostInFlight = Math.max(mostInFlight, ++inFlight);
    try {
      return await fetch(input, init);
    } finally {
      inFlight -= 1;
    }
  };
  const config = loadConfig({
    DATABASE_URL: 'sqlite::memory:',
    ENTSOE_TOKEN: TOKEN,
    EIA_API_KEY: KEY,
    ENTSOE_BASE_URL: replay.upstreams.entsoeBaseUrl,
    EIA_BASE_URL: replay.upstreams.eiaBaseUrl,
    NESO_BASE_URL: replay.upstreams.nesoBaseUrl,
    FLOWS: 'on',
    ...env,
  });
  const created = createSourceAdapter(config, source, {
    logger,
    clock,
    fetch: countingFetch,
    http: { retries: 1, backoffMs: 1 },
  });
  const adapter = zones
    ? { ...created, zones: created.zones.filter((zone) => zones.includes(zone.code)) }
    : created;
  return {
    adapter,
    clock,
    started,
    /** Each request once, whatever its attempts (a retried transport hiccup is no request more). */
    asked: () => [...new Map(started.map(({ url }) => [url.href, url])).values()],
    mostInFlight: () => mostInFlight,
    runAt: async (epochSeconds: number) => {
      await clock.sleep(epochSeconds * 1000 - clock.now());
      return runIngestion({ store, adapter, logger });
    },
  };
}

const documentType = (url: URL) => url.searchParams.get('documentType');
/**
 * A11 requests of the whole graph: two per link, and four more for FR-COR/IT-SARD, whose two
 * links are recorded one each way and from after the window's start: each of its four is looked
 * for in the year before the window (src/sources/entsoe/flows.ts `linkSince`).
 */
const A11_REQUESTS = 224 + 4;
const a11 = (url: URL) => documentType(url) === 'A11';
const replayedEurope = () => replayedFlows(replay.upstreams, 'europe');
const replayedUs = () => replayedFlows(replay.upstreams, 'us');

const storedFlows = (graph: 'europe' | 'us', on: Store = store) =>
  on.flowsInWindow(graph, 0, ANCHOR + 10 * H);

const extraEics = new Set(
  EUROPE_NODES.flatMap((node) => (node.role === 'extra' ? [node.upstreamId] : [])),
);

describe('runIngestion with the flow graph (FLOWS=on)', () => {
  it('stores every border of Europe and its extra nodes, one request at a time within the pace', async () => {
    const run = graphIngestion('europe-tso');
    const report = await run.runAt(ANCHOR + 600);

    expect(report).toMatchObject({ source: 'europe-tso', zones: 33, errors: [] });
    expect(report.graph).toEqual({
      graph: 'europe',
      nodes: 13,
      nodePoints: 0,
      borders: 110,
      flowsStored: replayedEurope().length,
    });
    expect(await storedFlows('europe')).toEqual(replayedEurope());
    expect(replayedEurope()).toHaveLength(2 * 44 + 2 * 47);

    // An hourly cycle: 33 + 13 A75, 3 forecast documents of each served zone, the A11.
    const count = (type: string) => run.asked().filter((url) => documentType(url) === type);
    expect(count('A75')).toHaveLength(46);
    expect(count('A11')).toHaveLength(A11_REQUESTS);
    expect(run.asked()).toHaveLength(46 + 3 * 33 + A11_REQUESTS);
    // The extra nodes' generation, never their forecasts.
    const areas = (type: string) => count(type).map((url) => url.searchParams.get('in_Domain'));
    expect(areas('A75').filter((eic) => extraEics.has(eic))).toHaveLength(13);
    for (const type of ['A69', 'A71']) {
      expect(areas(type).filter((eic) => extraEics.has(eic))).toEqual([]);
    }
    // Never two requests at once, and never more than 200 in a minute of the adapter's clock.
    expect(run.mostInFlight()).toBe(1);
    for (const { atMs } of run.started) {
      const inMinute = run.started.filter(
        (other) => other.atMs > atMs - 60_000 && other.atMs <= atMs,
      );
      expect(inMinute.length).toBeLessThanOrEqual(200);
    }
    expect(run.clock.now() - (ANCHOR + 600) * 1000).toBeGreaterThanOrEqual(60_000);
    expect(logLines.join('')).toContain(
      `flow graph europe: 13 nodes (0 points stored), 110 borders (${replayedEurope().length} flows stored)`,
    );
  });

  it("stores the US interchange and the extra balancing authorities' generation, one query each", async () => {
    const run = graphIngestion('us-agency');
    const report = await run.runAt(ANCHOR + 600);

    expect(report).toMatchObject({ source: 'us-agency', zones: 11, errors: [] });
    expect(report.graph).toMatchObject({ graph: 'us', nodes: 56, borders: 1, flowsStored: 50 });
    expect(await storedFlows('us')).toEqual(replayedUs());
    const paths = run.asked().map((url) => url.pathname.split('/').at(-3));
    expect(paths).toEqual(['fuel-type-data', 'region-data', 'fuel-type-data', 'interchange-data']);
    const [, , nodesQuery, interchange] = run.asked();
    expect(nodesQuery?.searchParams.getAll('facets[respondent][]')).toHaveLength(56);
    expect(interchange?.searchParams.getAll('facets[fromba][]')).toHaveLength(66);

    // An extra node is stored like a zone, under its code: what the method makes of its rows.
    const rows = replay.upstreams.payloads.eiaRows.filter((row) => row.respondent === 'AECI');
    const page = parseFuelTypeData(
      JSON.stringify({ response: { total: rows.length, frequency: 'hourly', data: rows } }),
    );
    if (page.kind !== 'generation') throw new Error(page.kind);
    const { readings } = computeReadings(
      'US-AECI',
      page.respondents.get('AECI') ?? new Map(),
      eiaFuelTypesOf('AECI'),
    );
    expect(readings.length).toBeGreaterThan(5);
    expect(await store.readStored('US-AECI', 0, ANCHOR + H)).toEqual(readings);
    expect(report.graph?.nodePoints).toBeGreaterThanOrEqual(readings.length);
    // ... and counted apart from the served zones.
    expect(report.quality.map((zone) => zone.zone)).toEqual(
      zonesOfSource('us-agency').map((zone) => zone.code),
    );
  });

  it("keeps a border's stored flows when it sends garbage, disappears or comes back revised", async () => {
    const run = graphIngestion('europe-tso', {}, ['FI']);
    await run.runAt(ANCHOR + 600);
    const first = await storedFlows('europe');
    const dk1ToGb = (url: URL) =>
      a11(url) &&
      url.searchParams.get('out_Domain') === DK1 &&
      url.searchParams.get('in_Domain') === GB;

    // Garbage: nothing of that border is used, the others go on, the failure is counted.
    replay.upstreams.requests.length = 0;
    replay.fault = ({ url }) =>
      dk1ToGb(url) ? { status: 200, body: '<html>maintenance</html>' } : undefined;
    const garbled = await run.runAt(ANCHOR + H + 600);
    expect(await storedFlows('europe')).toEqual(first);
    expect(garbled.errors).toEqual([
      expect.stringMatching(/^DK-1\/GB: europe-tso: flows DK-1-GB: unusable A11 payload/),
    ]);
    expect(garbled.failures).toEqual([
      { kind: 'invalid-payload', zones: [], graph: { nodes: 0, borders: 1 } },
    ]);
    expect(garbled.graph).toMatchObject({ borders: 109, flowsStored: 0 });
    expect(runOutcome(garbled)).toBe('partial');
    // DK-1/GB's other direction is not asked once one failed; every later border is.
    const flowRequests = replay.upstreams.requests.filter(({ url }) => a11(url));
    expect(flowRequests).toHaveLength(A11_REQUESTS - 1);
    expect(flowRequests.at(-1)?.url.searchParams.get('out_Domain')).toBe(SARD);
    expect(
      logLines.some((line) => line.includes('"border":"DK-1/GB"') && line.includes('"level":40')),
    ).toBe(true);
    // The public note counts the border, never names a node.
    const { note } = assessFreshness(new Map(), { 'europe-tso': garbled }, ANCHOR + H + 600);
    expect(note).toContain('invalid payload for 1 flow border');
    expect(note).not.toMatch(/DK-1|GB\b/);

    // Gone: both directions answer "no matching data", which is no flow, not a zero.
    replay.fault = ({ url }) =>
      a11(url) && [DK1, GB].includes(url.searchParams.get('out_Domain') ?? '')
        ? { status: 200, body: NO_DATA, headers: { 'content-type': 'text/xml' } }
        : undefined;
    const gone = await run.runAt(ANCHOR + 2 * H + 600);
    expect(gone.errors).toEqual([]);
    expect(await storedFlows('europe')).toEqual(first);

    // Back, revised in its first hour, with an unreadable quantity in its second: the revision
    // replaces the stored value, the unreadable point is dropped and leaves its hour as it was.
    const [firstHour, secondHour] = first.filter((flow) => flow.from === 'DK-1');
    expect(firstHour?.mw).toBe(1362);
    expect(secondHour?.mw).toBe(102);
    const document = replay.upstreams.payloads.entsoeFlows.get(`${DK1} -> ${GB}`) ?? '';
    const revised = document
      .replace('<quantity>1362</quantity>', '<quantity>1300</quantity>')
      .replace('<quantity>102</quantity>', '<quantity>lots</quantity>');
    expect(revised).not.toBe(document);
    replay.fault = ({ url }) =>
      dk1ToGb(url)
        ? { status: 200, body: revised, headers: { 'content-type': 'text/xml' } }
        : undefined;
    const back = await run.runAt(ANCHOR + 3 * H + 600);
    expect(back.errors).toEqual([]);
    expect(back.graph?.flowsStored).toBe(1);
    expect(await storedFlows('europe')).toEqual(
      first.map((flow) => (flow === firstHour ? { ...flow, mw: 1300 } : flow)),
    );
    expect(logLines.join('')).toContain('records dropped from an A11 document');
  });

  it('stores nothing of the US graph from an unusable interchange page, and still the zones', async () => {
    const run = graphIngestion('us-agency');
    replay.fault = ({ url }) =>
      url.pathname.includes('interchange-data')
        ? { status: 200, body: '{"response": {"total": 3, "data": "oops"}}' }
        : undefined;
    const report = await run.runAt(ANCHOR + 600);
    expect(await storedFlows('us')).toEqual([]);
    expect(report.zones).toBe(11);
    expect(report.graph).toMatchObject({ nodes: 56, borders: 0, flowsStored: 0 });
    expect(report.errors).toEqual([
      expect.stringMatching(/^interchange: us-agency: unusable payload/),
    ]);
    expect(report.failures).toEqual([
      { kind: 'invalid-payload', zones: [], graph: { nodes: 0, borders: 1 } },
    ]);
  });

  it("gives the graph up after 3 borders in a row fail temporarily, and leaves the zones' run whole", async () => {
    const run = graphIngestion('europe-tso', {}, ['FI']);
    replay.fault = ({ url }) => (a11(url) ? { status: 503, body: 'busy' } : undefined);
    const report = await run.runAt(ANCHOR + 600);
    expect(report.zones).toBe(1);
    expect(report.graph).toMatchObject({ nodes: 13, borders: 0 });
    // One retry each.
    expect(replay.upstreams.requests.filter(({ url }) => a11(url))).toHaveLength(3 * 2);
    expect(report.errors.at(-1)).toBe(
      'flow graph given up for this run: upstream looks down: 3 requests in a row failed ' +
        "(server-error); not tried: the flow graph's 107 borders",
    );
    expect(report.failures).toEqual([
      { kind: 'server-error', zones: [], graph: { nodes: 0, borders: 3 } },
      { kind: 'stopped', zones: [], graph: { nodes: 0, borders: 107 } },
    ]);
    const { note } = assessFreshness(new Map(), { 'europe-tso': report }, ANCHOR + 600);
    expect(note).toContain(
      'upstream server error for 3 flow borders; flow graph given up for this run, 107 flow borders not fetched',
    );
  });

  it('with FLOWS=off, asks no flow and no extra node', async () => {
    for (const source of ['europe-tso', 'us-agency'] as const) {
      const run = graphIngestion(source, { FLOWS: 'off' });
      const report = await run.runAt(ANCHOR + 600);
      expect(report.errors).toEqual([]);
      expect(report.graph).toBeUndefined();
      expect(run.adapter.graph).toBeUndefined();
      for (const { url } of run.started) {
        expect(documentType(url)).not.toBe('A11');
        expect(extraEics.has(url.searchParams.get('in_Domain'))).toBe(false);
        expect(url.pathname).not.toContain('interchange-data');
        expect(url.searchParams.getAll('facets[respondent][]').length).toBeLessThanOrEqual(11);
      }
    }
    expect(replay.upstreams.requests.length).toBeGreaterThan(100);
    expect(await storedFlows('europe')).toEqual([]);
    expect(await storedFlows('us')).toEqual([]);
    expect(await store.newestStoredTs('US-AECI')).toBeNull();
  });
});

describe('the extra nodes, stored beside the zones', () => {
  it('are never served: zones, latest, the reading cache and the stream keep to the 45', async () => {
    await graphIngestion('us-agency').runAt(ANCHOR + 600);
    // Stored under their codes, which is what every reader below has to leave out.
    const stored = (await store.latestPerZone()).map((reading) => reading.zone);
    expect(stored).toContain('US-AECI');

    const cache = new ReadingCache(store, undefined, { pollMs: 60_000 });
    await cache.refresh();
    const applied: (readonly ReadingChange[] | undefined)[] = [];
    cache.onApplied((changes) => applied.push(changes.changes));
    const config = loadConfig({ METRICS: 'off', DASHBOARD: 'off' });
    const fromMemory = await buildApp({ config, store, cache, clock: () => (ANCHOR + 600) * 1000 });
    const fromStore = await buildApp({ config, store, clock: () => (ANCHOR + 600) * 1000 });
    try {
      for (const app of [fromMemory, fromStore]) {
        const zones = (await app.inject('/v1/zones')).json<{ data: { zone: string }[] }>();
        expect(zones.data.map(({ zone }) => zone)).toEqual(ZONES.map((zone) => zone.code));
        const latest = (await app.inject('/v1/intensity/latest')).json<{
          data: { zone: string }[];
        }>();
        expect(latest.data.length).toBeGreaterThan(5);
        expect(latest.data.every(({ zone }) => ZONES.some((served) => served.code === zone))).toBe(
          true,
        );
        expect((await app.inject('/v1/intensity/latest?zone=US-AECI')).statusCode).toBe(404);
        expect((await app.inject('/v1/intensity?zone=US-AECI')).statusCode).toBe(404);
      }
      expect(cache.zone('US-AECI')).toBeUndefined();

      // A node's new reading reaches the store's changes, never the cache or its followers.
      const [reading] = await store.readStored('US-AECI', 0, ANCHOR + H);
      if (!reading || reading.value === null) throw new Error('no US-AECI reading');
      await store.upsertReadings([{ ...reading, value: reading.value + 1 }]);
      const changes = (await store.changesSince(0, 100_000)).changes;
      expect(changes.some((change) => change.zone === 'US-AECI')).toBe(true);
      await cache.refresh();
      expect(applied).toHaveLength(1);
      expect(applied[0]).toEqual([]);
      expect(cache.zone('US-AECI')).toBeUndefined();
      const served = (zone: string) => CONTRACT_REGISTRY.has(zone);
      expect(
        new PreparedEvents(changes, served).on(undefined).map((event) => event.zone),
      ).not.toContain('US-AECI');
      expect(new PreparedEvents(changes, served).on(undefined).length).toBeGreaterThan(0);
    } finally {
      await fromMemory.close();
      await fromStore.close();
      await cache.stop();
    }
  });
});

describe('runGraphBackfill', () => {
  const window = { fromTs: ANCHOR - 5 * 24 * H, toTs: ANCHOR };

  it('fills the nodes without forecasts, then each border, one chunk each', async () => {
    const run = graphIngestion('europe-tso');
    const progress: string[] = [];
    const result = await runGraphBackfill({
      store,
      adapter: run.adapter,
      logger,
      window,
      onProgress: ({ done, total, chunk }) =>
        progress.push(`${done}/${total} ${chunk.border ?? chunk.zones[0]?.code}`),
    });
    expect(result).toMatchObject({
      chunks: 13 + 110,
      errors: [],
      flowsStored: replayedEurope().length,
    });
    expect(progress[0]).toBe('1/123 EE');
    expect(progress.at(-1)).toBe('123/123 FR-COR/IT-SARD');
    expect(await storedFlows('europe')).toEqual(replayedEurope());
    const types = run.asked().map((url) => documentType(url));
    expect(types.filter((type) => type === 'A75')).toHaveLength(13);
    expect(types.filter((type) => type === 'A11')).toHaveLength(A11_REQUESTS);
    expect(types).toHaveLength(13 + A11_REQUESTS);
  });

  it('skips a chunk filled by an earlier run, and fetches the rest again', async () => {
    const run = graphIngestion('us-agency');
    // The replayed interchange: 25 hours without a gap, one chunk.
    const hours = replayedUs().map((flow) => flow.ts);
    const filled = { fromTs: Math.min(...hours), toTs: Math.max(...hours) + H };
    const first = await runGraphBackfill({ store, adapter: run.adapter, logger, window: filled });
    expect(first).toMatchObject({ chunks: 2, skipped: 0, flowsStored: 50 });
    expect(await storedFlows('us')).toEqual(replayedUs());

    const asked = run.started.length;
    const again = await runGraphBackfill({ store, adapter: run.adapter, logger, window: filled });
    // The nodes without data over the window (retired ones) are asked again; the flows are not.
    expect(again).toMatchObject({ skipped: 1, flowsStored: 0, errors: [] });
    const paths = run.started.slice(asked).map(({ url }) => url.pathname.split('/').at(-3));
    expect(new Set(paths)).toEqual(new Set(['fuel-type-data']));
  });

  it('interrupted and run again, ends with the flows of an uninterrupted run', async () => {
    const whole = openStore();
    try {
      await runGraphBackfill({
        store: whole,
        adapter: graphIngestion('europe-tso').adapter,
        logger,
        window,
      });
      const interrupt = new AbortController();
      const run = graphIngestion('europe-tso');
      await expect(
        runGraphBackfill({
          store,
          adapter: run.adapter,
          logger,
          window,
          signal: interrupt.signal,
          onProgress: ({ chunk }) => {
            if (chunk.border === 'DK-1/GB') interrupt.abort();
          },
        }),
      ).rejects.toThrow();
      const partial = await storedFlows('europe');
      expect(partial.length).toBeGreaterThan(0);
      expect(partial.length).toBeLessThan(replayedEurope().length);

      const resumed = await runGraphBackfill({ store, adapter: run.adapter, logger, window });
      expect(resumed.errors).toEqual([]);
      expect(await storedFlows('europe')).toEqual(await storedFlows('europe', whole));
      expect(await store.flowBorders('europe')).toEqual(await whole.flowBorders('europe'));
    } finally {
      await whole.close();
    }
  });
});
