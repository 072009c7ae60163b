/**
 * Builds the bench stores through the store's own bulk API (`upsertReadings`), as ingestion
 * writes them. SQLite files are cached under bench/.cache keyed by what they contain; PostgreSQL
 * gets a throwaway database per run.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createStore } from '../src/storage/create-store.js';
// Only for the cache key: a schema change must rebuild the cached files, or the server would
// migrate (and so rewrite) them on start.
import { SQLITE_MIGRATIONS } from '../src/storage/sqlite/migrations.js';
import { consumptionWrites, pointCount, readingBatches, type StoreSpec } from './dataset.js';

export interface BuiltStore {
  readonly databaseUrl: string;
  readonly points: number;
  /** Seconds the build took, or null when a cached file was used. */
  readonly buildSeconds: number | null;
}

async function fillStore(databaseUrl: string, spec: StoreSpec): Promise<number> {
  const store = await createStore(databaseUrl);
  let written = 0;
  try {
    for (const batch of readingBatches(spec)) written += await store.upsertReadings(batch);
    for (const { graph, ...write } of consumptionWrites()) {
      await store.replaceConsumption(graph, write);
    }
  } finally {
    await store.close();
  }
  return written;
}

const DATASET_SOURCE = fileURLToPath(new URL('./dataset.ts', import.meta.url));

function cacheKey(spec: StoreSpec): string {
  return createHash('sha256')
    .update(readFileSync(DATASET_SOURCE))
    .update(JSON.stringify(SQLITE_MIGRATIONS))
    .update(spec.label)
    .digest('hex')
    .slice(0, 12);
}

/** The SQLite file of `spec`: from the cache, or built and cached when missing. */
export async function buildSqliteStore(spec: StoreSpec, cacheDir: string): Promise<BuiltStore> {
  mkdirSync(cacheDir, { recursive: true });
  const prefix = `store-${spec.label}-`;
  const file = join(cacheDir, `${prefix}${cacheKey(spec)}.db`);
  const points = pointCount(spec);
  if (existsSync(file)) return { databaseUrl: `sqlite:${file}`, points, buildSeconds: null };

  // Files of an older dataset or schema are 100+ MB each: keep only the current one.
  for (const name of readdirSync(cacheDir)) {
    if (name.startsWith(prefix)) rmSync(join(cacheDir, name), { force: true });
  }
  // Built aside and renamed, so an interrupted build never leaves a half-filled cached file.
  const partial = `${file}.partial-${process.pid}`;
  const started = performance.now();
  try {
    const written = await fillStore(`sqlite:${partial}`, spec);
    if (written !== points) throw new Error(`wrote ${written} points, expected ${points}`);
    renameSync(partial, file);
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${partial}${suffix}`, { force: true });
  }
  return {
    databaseUrl: `sqlite:${file}`,
    points,
    buildSeconds: (performance.now() - started) / 1000,
  };
}

const POSTGRES_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const BENCH_DATABASE = /^gridco2_bench_(\d+)$/;

async function asPostgresAdmin(sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({
    connectionString: POSTGRES_ADMIN_URL,
    connectionTimeoutMillis: 5_000,
    statement_timeout: 60_000,
  });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

export interface ThrowawayDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/**
 * Creates `gridco2_bench_<pid>` on the local server, after dropping those left by bench runs that
 * were killed before they could drop theirs.
 */
export async function createBenchDatabase(): Promise<ThrowawayDatabase> {
  const { rows } = await asPostgresAdmin('SELECT datname FROM pg_database');
  for (const { datname } of rows as { datname: string }[]) {
    const pid = BENCH_DATABASE.exec(datname)?.[1];
    if (pid !== undefined && !isRunning(Number(pid))) {
      await asPostgresAdmin(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
  }
  const name = `gridco2_bench_${process.pid}`;
  await asPostgresAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await asPostgresAdmin(`CREATE DATABASE ${name}`);
  let dropped: Promise<void> | undefined;
  return {
    url: `postgres://postgres@127.0.0.1:5432/${name}`,
    drop: () =>
      (dropped ??= asPostgresAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => {})),
  };
}

/**
 * Fills the PostgreSQL database with `spec`. Called with the small store first and then the large
 * one: the small dataset is a subset of the large, so the second call upserts the rest.
 */
export async function fillPostgres(url: string, spec: StoreSpec): Promise<BuiltStore> {
  const started = performance.now();
  await fillStore(url, spec);
  return {
    databaseUrl: url,
    points: pointCount(spec),
    buildSeconds: (performance.now() - started) / 1000,
  };
}
