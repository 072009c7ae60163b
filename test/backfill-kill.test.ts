import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredForecast, StoredReading } from '../src/core/reading.js';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { findZone } from '../src/core/zones.js';
import { runBackfill } from '../src/ingest/backfill.js';
import { createSourceAdapter } from '../src/ingest/sources.js';
import { startSimulator, type Simulator } from '../src/simulator/index.js';
import { PostgresStore } from '../src/storage/postgres/postgres-store.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../src/storage/store.js';
import { CLI } from './support/built-cli.js';
import { storedForecasts } from './support/stored-forecasts.js';
import { createThrowawayDatabase, isPostgresAvailable } from './support/postgres.js';
import type { ThrowawayDatabase } from './support/postgres.js';
import { FORECAST_KINDS, type SourceId } from '../src/core/sources.js';

/**
 * `gridco2 backfill` killed with SIGKILL at random points, ten times, then run again to the end,
 * leaves the same store as uninterrupted runs: readings, mixes and upstream forecasts (issue 22).
 * Real child processes of the CLI (the build: test/support/built-cli.ts) against the upstream
 * simulator on loopback, on both backends at once; the uninterrupted run is the same code in
 * this process. One zone of each source over a window of the past,
 * so that every answer (and every forecast's issue time) is the same whenever it is fetched.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FROM = '2026-10-01';
const TO = '2026-11-10';
const FROM_TS = Date.UTC(2026, 9, 1) / 1000;
const TO_TS = Date.UTC(2026, 10, 10) / 1000;
const RUNS: readonly { source: SourceId; zone: string }[] = [
  { source: 'europe-tso', zone: 'DE' },
  { source: 'us-agency', zone: 'US-CAISO' },
  { source: 'uk-operator', zone: 'GB' },
];
const KILLS = 10;

/** A seeded generator, so that a failure can be replayed: its seed is in the test's name. */
const SEED = Number(process.env['KILL_SEED'] ?? Date.now() % 100_000);
function random(): () => number {
  let state = SEED;
  return () => {
    state = (state * 48271) % 2147483647;
    return state / 2147483647;
  };
}

const dir = mkdtempSync(join(tmpdir(), 'gridco2-kill-'));
let simulator: Simulator;

beforeAll(async () => {
  simulator = await startSimulator({ seed: 3, now: () => Date.UTC(2026, 10, 21, 13, 20) });
});
afterAll(async () => {
  await simulator.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Only what the test sets: no setting of the machine leaks in. */
function envFor(databaseUrl: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    // The simulator signs its answers: only a demo ingests them.
    DEMO: 'on',
    ENTSOE_BASE_URL: simulator.baseUrls['europe-tso'],
    EIA_BASE_URL: simulator.baseUrls['us-agency'],
    NESO_BASE_URL: simulator.baseUrls['uk-operator'],
    ENTSOE_TOKEN: 'simulated',
    EIA_API_KEY: 'simulated',
    // The zones' suite: the flow graphs (on by default) have theirs.
    FLOWS: 'off',
  };
}

const logger = pino({ level: 'silent' });

interface Run {
  readonly code: number | null;
  readonly killed: boolean;
  readonly stderr: string;
}

/**
 * One `gridco2 backfill` of one zone. With `killAfter`, the process is sent SIGKILL once it has
 * reported that many chunks and a further `delayMs` has passed (or once it started, at 0).
 */
function backfill(
  databaseUrl: string,
  { source, zone }: (typeof RUNS)[number],
  killAfter?: { chunks: number; delayMs: number },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [CLI, 'backfill', '--source', source, '--zone', zone, '--from', FROM, '--to', TO],
      {
        cwd: ROOT,
        env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'warn', ...envFor(databaseUrl) },
      },
    );
    let stderr = '';
    let armed = false;
    const arm = () => {
      if (armed || !killAfter) return;
      armed = true;
      setTimeout(() => child.kill('SIGKILL'), killAfter.delayMs);
    };
    if (killAfter?.chunks === 0) arm();
    child.stderr.on('data', (data: Buffer) => {
      stderr += data.toString();
      const reported = stderr.split('\n').filter((line) => line.startsWith('backfill ')).length;
      if (killAfter && reported >= killAfter.chunks) arm();
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, killed: signal === 'SIGKILL', stderr }));
  });
}

/** Every stored row and upstream forecast of the zones over the window. */
async function contents(store: Store) {
  const readings: Record<string, StoredReading[]> = {};
  const forecasts: Record<string, StoredForecast[]> = {};
  for (const { zone } of RUNS) {
    readings[zone] = await store.readStored(zone, FROM_TS, TO_TS);
    for (const kind of FORECAST_KINDS) {
      const rows = await storedForecasts(store, zone, kind, FROM_TS - 86_400, TO_TS + 86_400);
      if (rows.length > 0) forecasts[`${zone} ${kind}`] = rows;
    }
  }
  return { readings, forecasts };
}

interface Backend {
  readonly name: string;
  /** A new empty store: its DATABASE_URL, and how to open it here. */
  create(): Promise<{ url: string; open: () => Promise<Store> }>;
  cleanup(): Promise<void>;
}

const databases: ThrowawayDatabase[] = [];
let sqliteFiles = 0;
const backends: Backend[] = [
  {
    name: 'sqlite',
    create: async () => {
      const file = join(dir, `store-${(sqliteFiles += 1)}.db`);
      return { url: `sqlite:${file}`, open: async () => new SqliteStore(file) };
    },
    cleanup: async () => undefined,
  },
  ...((await isPostgresAvailable('backfill kill suite'))
    ? [
        {
          name: 'postgres',
          create: async () => {
            const database = await createThrowawayDatabase();
            databases.push(database);
            return { url: database.url, open: () => PostgresStore.open(database.url) };
          },
          cleanup: async () => {
            await Promise.all(databases.map((database) => database.drop()));
          },
        },
      ]
    : []),
];

describe.concurrent.each(backends)('gridco2 backfill killed at random points: $name', (backend) => {
  afterAll(() => backend.cleanup());

  it(`ends with the store of an uninterrupted run (seed ${SEED})`, async () => {
    const next = random();
    // The uninterrupted run in this process: the same code, one process start less per zone.
    const reference = await backend.create();
    const chunksOf = new Map<string, number>();
    const store = await reference.open();
    try {
      for (const run of RUNS) {
        const config = loadConfig(envFor(reference.url));
        const result = await runBackfill({
          store,
          adapter: createSourceAdapter(config, run.source, { logger }),
          logger,
          zones: [findZone(run.zone)!],
          window: { fromTs: FROM_TS, toTs: TO_TS },
        });
        expect(result.errors).toEqual([]);
        chunksOf.set(run.zone, result.chunks);
      }
    } finally {
      await store.close();
    }

    const interrupted = await backend.create();
    let kills = 0;
    // Round the zones, each killed at a random chunk and a random moment within it, until ten
    // runs were really killed (a run that ended before its moment does not count).
    for (let attempt = 0; kills < KILLS && attempt < 4 * KILLS; attempt += 1) {
      const run = RUNS[attempt % RUNS.length]!;
      const chunks = Math.floor(next() * (chunksOf.get(run.zone) ?? 1));
      const result = await backfill(interrupted.url, run, {
        chunks,
        delayMs: Math.floor(next() * 400),
      });
      if (result.killed) kills += 1;
      else expect(result.code, result.stderr).toBe(0);
    }
    expect(kills).toBe(KILLS);
    for (const run of RUNS) {
      const done = await backfill(interrupted.url, run);
      expect(done.code, done.stderr).toBe(0);
    }

    const read = async ({ open }: typeof reference) => {
      const opened = await open();
      try {
        return await contents(opened);
      } finally {
        await opened.close();
      }
    };
    const expected = await read(reference);
    const actual = await read(interrupted);
    // Something of each kind was stored, so that the comparison means something.
    for (const { zone } of RUNS) expect(expected.readings[zone]?.length).toBeGreaterThan(100);
    expect(expected.readings['GB']?.every((row) => row.mix !== null)).toBe(true);
    expect(Object.keys(expected.forecasts).length).toBeGreaterThan(2);
    expect(actual.readings).toEqual(expected.readings);
    expect(actual.forecasts).toEqual(expected.forecasts);
  }, 300_000);
});
