import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeReadings } from '../src/core/method.js';
import { eiaFuelTypesOf, PSR_TYPES } from '../src/core/production-types.js';
import type { StoredMix, StoredReading } from '../src/core/reading.js';
import { operatorMixes } from '../src/core/uk-operator.js';
import { zonesOfSource } from '../src/core/zones.js';
import { parseFuelTypeData } from '../src/sources/eia/parse.js';
import { parseA75 } from '../src/sources/entsoe/parse.js';
import { parseGeneration } from '../src/sources/neso/parse.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../src/storage/store.js';
import {
  replayedFlows,
  startReplayUpstreams,
  type ReplayUpstreams,
} from './support/replay-upstreams.js';
import { CLI } from './support/built-cli.js';

/**
 * The ingestion commands end to end: the real CLI, as a user runs it (the build: see
 * test/support/built-cli.ts), against a local server replaying the recorded upstream payloads at
 * their real URLs, then the values read back from the SQLite file it wrote.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const H = 3600;
const TOKEN = 'e2e-entsoe-token-0b7f';
const KEY = 'e2e-eia-key-c41d';
// The recorded data end two hours before the current hour, as a live upstream's would.
const ANCHOR = Math.floor(Date.now() / 1000 / H) * H - 2 * H;

const dir = mkdtempSync(join(tmpdir(), 'gridco2-e2e-'));
let databases = 0;
let replay: ReplayUpstreams;

interface CliRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  killWhen?: (stderr: string) => boolean,
  started?: (child: ChildProcess) => void,
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: ROOT,
      // Only what the test sets: no credential of the machine leaks in.
      env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'info', ...env },
    });
    started?.(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (killWhen?.(stderr)) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

function envFor(upstreams: ReplayUpstreams, database: string, overrides = {}) {
  return {
    DATABASE_URL: `sqlite:${database}`,
    ENTSOE_TOKEN: TOKEN,
    EIA_API_KEY: KEY,
    ENTSOE_BASE_URL: upstreams.entsoeBaseUrl,
    EIA_BASE_URL: upstreams.eiaBaseUrl,
    NESO_BASE_URL: upstreams.nesoBaseUrl,
    // The zones' suite, but for `the flow graphs` below (FLOWS, on by default).
    FLOWS: 'off',
    ...overrides,
  };
}

const newDatabase = () => join(dir, `e2e-${databases++}.db`);

async function withStore<T>(database: string, read: (store: Store) => Promise<T>): Promise<T> {
  const store = new SqliteStore(database);
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

async function everyRow(store: Store): Promise<StoredReading[]> {
  const rows: StoredReading[] = [];
  for (let page = await store.scanStored(null, 5000); page.length > 0;) {
    rows.push(...page);
    const last = page.at(-1);
    page = last ? await store.scanStored({ zone: last.zone, ts: last.ts }, 5000) : [];
  }
  return rows;
}

/** What the method makes of the replayed ENTSO-E document of a zone. */
function expectedEurope(code: string, eic: string): StoredReading[] {
  const document = parseA75(replay.payloads.entsoe.get(eic) ?? '');
  if (document.kind !== 'generation') throw new Error(`${code}: ${document.kind}`);
  return [...computeReadings(code, document.areas.get(eic) ?? new Map(), PSR_TYPES).readings];
}

/** What the method makes of the replayed EIA rows of a zone. */
function expectedUs(code: string, respondent: string): StoredReading[] {
  const rows = replay.payloads.eiaRows.filter((row) => row.respondent === respondent);
  const page = parseFuelTypeData(
    JSON.stringify({ response: { total: rows.length, frequency: 'hourly', data: rows } }),
  );
  if (page.kind !== 'generation') throw new Error(`${code}: ${page.kind}`);
  const generation = page.respondents.get(respondent) ?? new Map();
  return [...computeReadings(code, generation, eiaFuelTypesOf(respondent)).readings];
}

/** What the GB rule makes of the replayed generation mix. */
function expectedGbMixes(): StoredMix[] {
  const reply = parseGeneration(JSON.stringify({ data: replay.payloads.nesoMixEntries }));
  if (reply.kind !== 'mix-half-hours') throw new Error(`GB: ${reply.kind}`);
  return [...operatorMixes('GB', reply.halfHours).mixes];
}

beforeAll(async () => {
  replay = await startReplayUpstreams({ anchorTs: ANCHOR, entsoeToken: TOKEN, eiaApiKey: KEY });
});
afterAll(async () => {
  await replay.close();
  rmSync(dir, { recursive: true, force: true });
});

// The tests run side by side: each has a store and a CLI process of its own, and those that count
// requests a replay of their own; most of their time is spent waiting (on paced or delayed
// upstream answers, on the child), not computing.
describe.concurrent('gridco2 ingest', () => {
  it('stores what the method computes from the upstream payloads, for every source', async () => {
    const database = newDatabase();
    const run = await cli(['ingest'], envFor(replay, database));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    for (const source of ['europe-tso: 33 zones', 'us-agency: 11 zones', 'uk-operator: 1 zones']) {
      expect(run.stdout).toContain(source);
    }
    expect(run.stdout).not.toContain(TOKEN);
    expect(run.stdout).not.toContain(KEY);

    const rows = await withStore(database, everyRow);
    const storedOf = (zone: string) => rows.filter((row) => row.zone === zone);
    for (const [code, eic] of [
      ['FI', '10YFI-1--------U'],
      ['NO-5', '10Y1001A1001A48H'],
      ['IT-CSUD', '10Y1001A1001A71M'],
    ] as const) {
      expect(storedOf(code)).toEqual(expectedEurope(code, eic));
    }
    for (const zone of zonesOfSource('us-agency')) {
      expect(storedOf(zone.code)).toEqual(expectedUs(zone.code, zone.upstreamId));
    }
    expect(storedOf('FI')).toHaveLength(72);
    expect(storedOf('US-PJM').filter((row) => row.complete)).toHaveLength(11);

    const reports = await withStore(database, (store) => store.latestIngestReports());
    // GB: the operator's settled figures as published, each with the generation mix of its
    // half-hour and the values on each basis computed from it; the mix of every other half-hour
    // of the run's window (7 days up to the hour after the run started) on its own.
    const gbTo = Math.floor((reports['uk-operator']?.startedAt ?? 0) / H) * H + H;
    const mixes = expectedGbMixes().filter(({ ts }) => ts >= gbTo - 7 * 24 * H && ts < gbTo);
    const mixOf = (ts: number) => {
      const found = mixes.find((mix) => mix.ts === ts);
      return { mix: found?.mix, lifecycle: found?.lifecycle, direct: found?.direct };
    };
    const gb = storedOf('GB');
    expect(gb.map(({ ts }) => ts)).toEqual(mixes.map(({ ts }) => ts));
    expect(gb.map(({ ts, mix, lifecycle, direct }) => ({ ts, mix, lifecycle, direct }))).toEqual(
      mixes.map(({ ts, mix, lifecycle, direct }) => ({ ts, mix, lifecycle, direct })),
    );
    const settled = replay.payloads.nesoEntries.filter((entry) => entry.intensity.actual !== null);
    expect(gb.filter((row) => row.complete)).toEqual(
      settled.map((entry) => {
        const ts = Date.parse(entry.from) / 1000;
        return {
          zone: 'GB',
          ts,
          value: entry.intensity.actual,
          method: 'upstream:uk-operator:actual',
          complete: true,
          ...mixOf(ts),
        };
      }),
    );
    // The operator's forecast of the half-hour in progress, kept apart from the readings.
    expect(gb.filter((row) => row.method === 'upstream:uk-operator:forecast')).toEqual([]);
    const forecasts = await withStore(database, (store) =>
      store.newestForecasts('uk-operator:intensity'),
    );
    expect(forecasts).toHaveLength(1);
    expect(forecasts[0]?.ts).toBeGreaterThanOrEqual(ANCHOR);

    expect(Object.keys(reports).sort()).toEqual(['europe-tso', 'uk-operator', 'us-agency']);
    expect(JSON.stringify(reports)).not.toContain(KEY);
    // The replay has documents for three ENTSO-E zones only: the others' empty answers are a
    // warning, said in the log line and the report, and do not fail the command.
    expect(reports['europe-tso']?.errors).toEqual([]);
    expect(reports['europe-tso']?.zonesWithoutData).toHaveLength(30);
    expect(run.stdout).toMatch(
      /europe-tso: 33 zones, \d+ points stored, \d+ incomplete hours, 0 errors, no data returned for 30 zones/,
    );

    // A second pass re-fetches the trailing window and replaces values in place.
    const again = await cli(['ingest'], envFor(replay, database));
    expect(again.code).toBe(0);
    const rowsAgain = await withStore(database, everyRow);
    expect(rowsAgain).toEqual(rows);
  });

  it('exits non-zero when a source fails, keeps the others, and never prints the key', async () => {
    const database = newDatabase();
    // A quote in the key once left its tail after REDACTED (issue 10, finding 8).
    const revoked = `revoked'key-tail-e3`;
    const run = await cli(['ingest'], envFor(replay, database, { EIA_API_KEY: revoked }));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('gridco2: error: ingestion failed for us-agency (1 error)');
    expect(run.stdout).toContain(
      'US, US-PJM, US-MISO, US-ERCOT, US-SPP, US-SOCO, US-CAISO, US-TVA, US-NYISO, US-ISONE, US-BPA: ' +
        'us-agency: GET',
    );
    expect(run.stdout).toContain('credentials refused; check EIA_API_KEY');
    expect(run.stdout).toContain('api_key=REDACTED&');
    expect(run.stdout + run.stderr).not.toContain('key-tail-e3');
    const reports = await withStore(database, (store) => store.latestIngestReports());
    expect(reports['us-agency']?.errors).toHaveLength(1);
    expect(reports['us-agency']?.failures).toEqual([
      { kind: 'auth', zones: zonesOfSource('us-agency').map((zone) => zone.code) },
    ]);
    expect(JSON.stringify(reports)).not.toContain('key-tail-e3');
    const zones = await withStore(database, async (store) =>
      [...new Set((await everyRow(store)).map((row) => row.zone))].sort(),
    );
    expect(zones).toEqual(['FI', 'GB', 'IT-CSUD', 'NO-5']);
  });

  // Issue 10, finding 9: a killed run used to leave no report, so /v1/status showed the last good one.
  it('on SIGTERM stops between zones, stores a report saying so, and exits non-zero', async () => {
    let child: ChildProcess | undefined;
    let europeRequests = 0;
    const slow = await startReplayUpstreams({
      anchorTs: ANCHOR,
      entsoeToken: TOKEN,
      eiaApiKey: KEY,
      delayMs: 150,
      fault: ({ source, url }) => {
        // The zones' actuals (A75); each zone's forecast documents follow its actuals.
        const actuals = url.searchParams.get('documentType') === 'A75';
        if (source === 'europe-tso' && actuals && ++europeRequests === 3) child?.kill('SIGTERM');
        return undefined;
      },
    });
    try {
      const database = newDatabase();
      const run = await cli(['ingest'], envFor(slow, database), undefined, (started) => {
        child = started;
      });
      expect(run.signal).toBeNull();
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        'gridco2: error: interrupted by SIGTERM; what was stored stays stored',
      );
      // The zone in flight was finished; no further one was asked.
      expect(europeRequests).toBeLessThanOrEqual(4);
      const reports = await withStore(database, (store) => store.latestIngestReports());
      const europe = reports['europe-tso'];
      expect(europe?.errors.at(-1)).toMatch(/^interrupted after [34] of 33 zones; not tried: /);
      expect(europe?.failures?.at(-1)?.kind).toBe('interrupted');
      expect(europe?.failures?.at(-1)?.zones.length).toBe(33 - europeRequests);
    } finally {
      await slow.close();
    }
  });

  it('reports a source without its key as not configured and still runs the others', async () => {
    const database = newDatabase();
    const run = await cli(['ingest'], envFor(replay, database, { ENTSOE_TOKEN: '' }));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('europe-tso disabled: ENTSOE_TOKEN is not set');
    const reports = await withStore(database, (store) => store.latestIngestReports());
    expect(reports['europe-tso']?.errors).toEqual(['not configured: ENTSOE_TOKEN is not set']);
    expect(reports['us-agency']?.errors).toEqual([]);
  });
});

describe.concurrent('gridco2 backfill', () => {
  it('fills a window with the same values, printing one progress line per chunk', async () => {
    const database = newDatabase();
    const from = new Date((ANCHOR - 5 * 24 * H) * 1000).toISOString();
    const to = new Date(ANCHOR * 1000).toISOString();
    const run = await cli(
      ['backfill', '--source', 'europe-tso', '--from', from, '--to', to],
      envFor(replay, database),
    );
    expect(run.code).toBe(0);
    const progress = run.stderr.split('\n').filter((line) => line.startsWith('backfill'));
    expect(progress).toHaveLength(33);
    expect(progress.at(-1)).toMatch(/^backfill europe-tso 33\/33 HU .*: 0 points stored$/);
    const rows = await withStore(database, everyRow);
    expect(rows.filter((row) => row.zone === 'FI')).toEqual(
      expectedEurope('FI', '10YFI-1--------U'),
    );
    expect(rows.filter((row) => row.zone === 'IT-CSUD')).toEqual(
      expectedEurope('IT-CSUD', '10Y1001A1001A71M'),
    );
  });

  it('refuses a zone of another source and an unreadable date', async () => {
    const env = envFor(replay, newDatabase());
    const wrongZone = await cli(
      ['backfill', '--source', 'us-agency', '--zone', 'FI', '--from', '2026-01-01'],
      env,
    );
    expect(wrongZone.code).toBe(1);
    expect(wrongZone.stderr).toContain('FI is not a zone of us-agency');
    const badDate = await cli(['backfill', '--source', 'us-agency', '--from', 'yesterday'], env);
    expect(badDate.code).toBe(1);
    expect(badDate.stderr).toContain('expected a UTC date');
  });

  it('killed mid-way and run again, ends with the same store as an uninterrupted run', async () => {
    // EIA's recorded hours repeated over ten weeks: ten chunks of several pages each, slowed down
    // so that the kill lands in the middle.
    const tiled = await startReplayUpstreams({
      anchorTs: ANCHOR,
      entsoeToken: TOKEN,
      eiaApiKey: KEY,
      tileEia: true,
      delayMs: 100,
    });
    try {
      const args = [
        'backfill',
        '--source',
        'us-agency',
        '--from',
        new Date((ANCHOR - 70 * 24 * H) * 1000).toISOString(),
        '--to',
        new Date(ANCHOR * 1000).toISOString(),
      ];
      const interrupted = newDatabase();
      const killed = await cli(args, envFor(tiled, interrupted), (stderr) =>
        stderr.includes('backfill us-agency 3/10'),
      );
      expect(killed.signal).toBe('SIGKILL');
      const requestsBeforeResume = tiled.requests.length;

      const resumed = await cli(args, envFor(tiled, interrupted));
      expect(resumed.code).toBe(0);
      const skipped = resumed.stderr.match(/already stored, skipped/g) ?? [];
      expect(skipped.length).toBeGreaterThanOrEqual(3);
      const resumeRequests = tiled.requests.length - requestsBeforeResume;

      const straight = newDatabase();
      const uninterrupted = await cli(args, envFor(tiled, straight));
      expect(uninterrupted.code).toBe(0);
      expect(uninterrupted.stderr).not.toContain('skipped');
      const straightRequests = tiled.requests.length - requestsBeforeResume - resumeRequests;
      expect(resumeRequests).toBeLessThan(straightRequests);

      const [resumedRows, straightRows] = await Promise.all([
        withStore(interrupted, everyRow),
        withStore(straight, everyRow),
      ]);
      expect(straightRows).toHaveLength(11 * 70 * 24);
      expect(resumedRows).toEqual(straightRows);
    } finally {
      await tiled.close();
    }
  });
});

describe.concurrent('the flow graphs (FLOWS=on)', () => {
  const flowsOf = (database: string, graph: 'europe' | 'us') =>
    withStore(database, (store) => store.flowsInWindow(graph, 0, ANCHOR + H));

  it('gridco2 ingest stores both graphs and the neighbours, serving none of them', async () => {
    const database = newDatabase();
    // Europe's 369 requests of a cycle are paced to 200 a minute: this run takes over a minute.
    const run = await cli(['ingest'], envFor(replay, database, { FLOWS: 'on' }));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /europe-tso: 33 zones, .*; flow graph europe: 13 nodes \(0 points stored\), 110 borders \(182 flows stored\)/,
    );
    expect(run.stdout).toMatch(
      /us-agency: 11 zones, .*; flow graph us: 56 nodes \(\d+ points stored\), 1 border \(50 flows stored\)/,
    );
    expect(await flowsOf(database, 'europe')).toEqual(replayedFlows(replay, 'europe'));
    expect(await flowsOf(database, 'us')).toEqual(replayedFlows(replay, 'us'));

    const rows = await withStore(database, everyRow);
    expect(rows.filter((row) => row.zone === 'US-AECI')).toEqual(expectedUs('US-AECI', 'AECI'));
    // The served zones as before: the neighbours are no zones of any report.
    const reports = await withStore(database, (store) => store.latestIngestReports());
    expect(reports['us-agency']?.quality.map((zone) => zone.zone)).toEqual(
      zonesOfSource('us-agency').map((zone) => zone.code),
    );
    expect(reports['europe-tso']?.graph).toEqual({
      graph: 'europe',
      nodes: 13,
      nodePoints: 0,
      borders: 110,
      flowsStored: 182,
    });
  });

  it('gridco2 backfill fills the flows after the zones, and skips them when run again', async () => {
    const database = newDatabase();
    const hours = replayedFlows(replay, 'us').map((flow) => flow.ts);
    const args = [
      'backfill',
      '--source',
      'us-agency',
      '--from',
      new Date(Math.min(...hours) * 1000).toISOString(),
      '--to',
      new Date((Math.max(...hours) + H) * 1000).toISOString(),
    ];
    const run = await cli(args, envFor(replay, database, { FLOWS: 'on' }));
    expect(run.code).toBe(0);
    const lines = run.stderr.split('\n').filter((line) => line.startsWith('backfill'));
    expect(lines[0]).toMatch(/^backfill us-agency 1\/1 11 zones /);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^backfill us-agency flow graph 1\/2 56 zones .*: \d+ points stored$/),
      expect.stringMatching(
        /^backfill us-agency flow graph 2\/2 flows interchange .*: 50 flows stored$/,
      ),
    ]);
    expect(await flowsOf(database, 'us')).toEqual(replayedFlows(replay, 'us'));

    const again = await cli(args, envFor(replay, database, { FLOWS: 'on' }));
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(
      /backfill us-agency flow graph 2\/2 flows interchange .*: already stored, skipped/,
    );
  });
});
