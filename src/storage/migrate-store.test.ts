import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI } from '../../test/support/built-cli.js';
import { createThrowawayDatabase, isPostgresAvailable } from '../../test/support/postgres.js';
import type { IngestReport, StoredReading } from '../core/reading.js';
import { migrateStore, type MigrateProgress } from './migrate-store.js';
import { PostgresStore } from './postgres/postgres-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const H = 3600;
const T0 = Date.UTC(2026, 10, 20) / 1000;

const dir = mkdtempSync(join(tmpdir(), 'gridco2-migrate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const postgresAvailable = await isPostgresAvailable('migrate-store postgres suite');
const newSqlitePath = () => join(dir, `store-${files++}.db`);

/** Every kind of row a store holds: published, incomplete, without value, operator figures. */
function sampleReadings(): StoredReading[] {
  const rows: StoredReading[] = [];
  for (const zone of ['DE', 'FR', 'US-PJM']) {
    for (let hour = 0; hour < 30; hour++) {
      const value = 100 + hour / 7; // full double precision must survive the trip
      rows.push({
        zone,
        ts: T0 + hour * H,
        value: hour === 5 ? null : value,
        method: 'computed:v1',
        complete: hour !== 5 && hour !== 6,
        // Key order that PostgreSQL's jsonb does not keep.
        mix: hour === 5 ? {} : { wind: hour * 1.5, coal: 820.125, gas: value },
        lifecycle: null,
        direct: null,
      });
    }
  }
  for (let half = 0; half < 6; half++) {
    rows.push({
      zone: 'GB',
      ts: T0 + half * 1800,
      value: 150 + half,
      method: half === 5 ? 'upstream:uk-operator:forecast' : 'upstream:uk-operator:actual',
      complete: true,
      mix: null,
      lifecycle: null,
      direct: null,
    });
  }
  return rows;
}

const report = (source: IngestReport['source'], finishedAt: number): IngestReport => ({
  source,
  startedAt: finishedAt - 20,
  finishedAt,
  zones: 1,
  pointsStored: 30,
  incompleteHours: 1,
  errors: source === 'us-agency' ? ['US-PJM: upstream 503'] : [],
  quality: [
    {
      zone: 'DE',
      pointsStored: 30,
      incompleteHours: 1,
      clampedNegatives: 2,
      unknownCodes: ['B99'],
    },
  ],
});

async function sampleSqliteStore(path = newSqlitePath()): Promise<SqliteStore> {
  const store = new SqliteStore(path);
  await store.upsertReadings(sampleReadings());
  await store.recordIngestReport(report('europe-tso', T0 + 100));
  await store.recordIngestReport(report('europe-tso', T0 + 200)); // only the latest travels
  await store.recordIngestReport(report('us-agency', T0 + 150));
  await store.recordIngestReport(report('uk-operator', T0 + 160));
  return store;
}

async function everyRow(store: Store): Promise<StoredReading[]> {
  const rows: StoredReading[] = [];
  for (let page = await store.scanStored(null, 1000); page.length > 0;) {
    rows.push(...page);
    const last = page.at(-1)!;
    page = await store.scanStored({ zone: last.zone, ts: last.ts }, 1000);
  }
  return rows;
}

/** Runs `use` on a test's two stores, then closes both whatever it threw. */
async function withStores<From extends Store, To extends Store>(
  from: From,
  to: To,
  use: (from: From, to: To) => Promise<void>,
): Promise<void> {
  try {
    await use(from, to);
  } finally {
    await from.close();
    await to.close();
  }
}

describe('migrateStore', () => {
  it('copies every row, mixes included, and the latest report of each source, page by page', async () => {
    await withStores(
      await sampleSqliteStore(),
      new SqliteStore(newSqlitePath()),
      async (from, to) => {
        const progress: MigrateProgress[] = [];
        const result = await migrateStore(from, to, {
          pageRows: 7,
          onProgress: (step) => progress.push(step),
        });
        expect(result).toEqual({ scanned: 96, written: 96, unchanged: 0, reportsCopied: 3 });
        expect(await everyRow(to)).toEqual(await everyRow(from));
        expect(await to.latestIngestReports()).toEqual(await from.latestIngestReports());
        expect(progress.at(-1)).toEqual({
          scanned: 96,
          written: 96,
          zonesDone: 45,
          zonesTotal: 45,
        });
        const zonesDone = progress.map((step) => step.zonesDone);
        expect(zonesDone).toEqual([...zonesDone].sort((a, b) => a - b));
      },
    );
  });

  it('writes only what changed on a second run, and keeps rows and newer reports only the target has', async () => {
    await withStores(
      await sampleSqliteStore(),
      new SqliteStore(newSqlitePath()),
      async (from, to) => {
        await migrateStore(from, to);
        const version = await to.dataVersion();
        expect(await migrateStore(from, to)).toEqual({
          scanned: 96,
          written: 0,
          unchanged: 96,
          reportsCopied: 0,
        });
        expect(await to.dataVersion()).toBe(version);

        const revised = { ...sampleReadings()[3]!, value: 99.5 };
        const targetOnly = { ...revised, zone: 'NL' };
        await from.upsertReadings([revised]);
        await to.upsertReadings([targetOnly]);
        await to.recordIngestReport(report('us-agency', T0 + 999));
        expect(await migrateStore(from, to)).toMatchObject({ written: 1, reportsCopied: 0 });
        const rows = await everyRow(to);
        expect(rows).toContainEqual(revised);
        expect(rows).toContainEqual(targetOnly);
        expect((await to.latestIngestReports())['us-agency']?.finishedAt).toBe(T0 + 999);
      },
    );
  });

  describe('between synthetic and real stores', () => {
    /** A store as the demo leaves it: marked synthetic, with rows and reports. */
    async function demoStore(): Promise<SqliteStore> {
      const store = new SqliteStore(newSqlitePath());
      await store.markSynthetic();
      await store.upsertReadings(sampleReadings());
      await store.recordIngestReport(report('europe-tso', T0 + 100));
      return store;
    }

    it.each([
      ['a new, empty store', async () => new SqliteStore(newSqlitePath())],
      ['a store of real data', () => sampleSqliteStore()],
    ])('refuses to copy synthetic data into %s, writing nothing', async (_, openTarget) => {
      await withStores(await demoStore(), await openTarget(), async (from, to) => {
        const before = await everyRow(to);
        await expect(migrateStore(from, to)).rejects.toThrow(
          'the source holds synthetic demo data and the target is not a demo store: ' +
            'synthetic data is never copied into a store for real data',
        );
        expect(await everyRow(to)).toEqual(before);
        expect(await to.isSynthetic()).toBe(false);
      });
    });

    it('refuses to copy real data into a demo store, writing nothing', async () => {
      await withStores(
        await sampleSqliteStore(),
        new SqliteStore(newSqlitePath()),
        async (from, to) => {
          await to.markSynthetic();
          await expect(migrateStore(from, to)).rejects.toThrow(
            'the target holds synthetic demo data and the source does not: ' +
              'real data is never copied into a demo store',
          );
          expect(await everyRow(to)).toEqual([]);
          expect(await to.latestIngestReports()).toEqual({});
        },
      );
    });

    it('copies one demo store into another, which stays marked', async () => {
      await withStores(await demoStore(), new SqliteStore(newSqlitePath()), async (from, to) => {
        await to.markSynthetic();
        expect(await migrateStore(from, to)).toMatchObject({ written: 96, reportsCopied: 1 });
        expect(await everyRow(to)).toEqual(await everyRow(from));
        expect(await to.isSynthetic()).toBe(true);
      });
    });
  });

  describe.skipIf(!postgresAvailable)('with PostgreSQL', () => {
    it('round-trips SQLite -> PostgreSQL -> SQLite unchanged, and is idempotent', async () => {
      const database = await createThrowawayDatabase();
      const source = await sampleSqliteStore();
      const postgres = await PostgresStore.open(database.url);
      const back = new SqliteStore(newSqlitePath());
      try {
        expect(await migrateStore(source, postgres, { pageRows: 10 })).toMatchObject({
          written: 96,
          reportsCopied: 3,
        });
        const version = await postgres.dataVersion();
        expect(await migrateStore(source, postgres)).toMatchObject({
          written: 0,
          unchanged: 96,
          reportsCopied: 0,
        });
        expect(await postgres.dataVersion()).toBe(version);
        const [reports] = await database.query<{ count: number }>(
          'SELECT count(*)::int AS count FROM ingest_reports',
        );
        expect(reports?.count).toBe(3);

        expect(await migrateStore(postgres, back, { pageRows: 10 })).toMatchObject({
          written: 96,
          reportsCopied: 3,
        });
        expect(await everyRow(back)).toEqual(await everyRow(source));
        expect(await back.latestIngestReports()).toEqual(await source.latestIngestReports());
        expect(await migrateStore(postgres, back)).toMatchObject({ written: 0 });
      } finally {
        await Promise.all([source.close(), postgres.close(), back.close()]);
        await database.drop();
      }
    });
  });
});

interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The real command, as a user runs it (the build: test/support/built-cli.ts). */
function migrateCli(from: string, to: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const args = [CLI, 'migrate-store', '--from', from, '--to', to];
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'info' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('gridco2 migrate-store', () => {
  it('copies with progress lines and a final count, then finds nothing to write', async () => {
    const fromPath = newSqlitePath();
    const toPath = newSqlitePath();
    await (await sampleSqliteStore(fromPath)).close();
    const first = await migrateCli(`sqlite:${fromPath}`, `sqlite:${toPath}`);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain('migrate-store 45/45 zones: 96 rows read, 96 written\n');
    expect(first.stdout).toContain(
      'migrate-store: 96 rows read, 96 written, 0 already identical; 3 ingestion reports copied',
    );
    const again = await migrateCli(`sqlite:${fromPath}`, `sqlite:${toPath}`);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('96 rows read, 0 written, 96 already identical');
  });

  it.concurrent.each([
    [
      'the same file twice',
      `sqlite:${join(dir, 'same.db')}`,
      `sqlite:${dir}/./same.db`,
      /name the same store/,
    ],
    [
      'the same database under two logins',
      'postgres://a:hunter2@localhost/db',
      'postgresql://b@LOCALHOST:5432/db',
      /name the same store \(postgres:\/\/a:\*\*\*@localhost\/db\)/,
    ],
    [
      'a missing source file',
      `sqlite:${join(dir, 'missing.db')}`,
      `sqlite:${join(dir, 'other.db')}`,
      /--from: no SQLite file/,
    ],
    ['an unknown scheme', 'mysql://u:hunter2@h/db', `sqlite:${join(dir, 'x.db')}`, /--from must/],
    [
      'an unreachable server',
      'postgres://u:hunter2@127.0.0.1:1/db?password=hunter2',
      `sqlite:${join(dir, 'x.db')}`,
      /cannot reach the database at --from=postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/db\?password=\*\*\* \(connect ECONNREFUSED .*\): check that PostgreSQL runs there\n$/,
    ],
  ])(
    'refuses %s, exits 1 and never prints a password',
    // Five CLI processes at once.
    { timeout: 120_000 },
    async (_, from, to, message) => {
      const run = await migrateCli(from, to);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(message);
      expect(run.stdout + run.stderr).not.toContain('hunter2');
    },
  );

  it('refuses to copy the demo store into a store for real data, in one line', async () => {
    const fromPath = newSqlitePath();
    const toPath = newSqlitePath();
    const demo = new SqliteStore(fromPath);
    await demo.markSynthetic();
    await demo.upsertReadings(sampleReadings());
    await demo.close();
    const run = await migrateCli(`sqlite:${fromPath}`, `sqlite:${toPath}`);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'gridco2: error: the source holds synthetic demo data and the target is not a demo ' +
        'store: synthetic data is never copied into a store for real data\n',
    );
    const target = new SqliteStore(toPath);
    try {
      expect(await everyRow(target)).toEqual([]);
    } finally {
      await target.close();
    }
  });
});
