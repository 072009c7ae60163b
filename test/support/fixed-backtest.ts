import { createHash } from 'node:crypto';
import {
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BacktestRun } from '../../src/core/forecast/backtest.js';
import { runBacktest } from '../../src/forecast/run-backtest.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../../src/storage/store.js';
import { fillFixedStore, NOW_S } from './fixed-store.js';

/**
 * The fixed store with the backtest a server on it runs first, at the pinned clock: the same run
 * (`runBacktest` at NOW_S), so the server finds it fresh and prepares its forecasts from it
 * instead of spending FR's 6000 hours (15 to 40 s of CPU) again in the background of every suite
 * that starts one. Computed once per version of the sources that decide it (by the first suite
 * that asks: see `cachedOrComputed`) and kept in node_modules/.cache/gridco2-tests/; suites that
 * test the backtest itself run their own.
 */
export async function fillFixedStoreWithBacktest(store: Store): Promise<void> {
  await fillFixedStore(store);
  await store.saveBacktest(await fixedBacktest());
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CACHE = join(ROOT, 'node_modules/.cache/gridco2-tests');

let computing: Promise<BacktestRun> | undefined;

function fixedBacktest(): Promise<BacktestRun> {
  computing ??= cachedOrComputed();
  return computing;
}

/**
 * The run for the current sources: from the cache, or computed by the first suite process that
 * asks while the others that ask wait for it (a lock file names its pid), not in the tier's
 * global setup. There it ran alone before any file started (about 7 s of CPU, 14 s of wall on one
 * core of a clean clone at a load of 3, 2026-12-03), while the suites that start no server on the fixed store (the CLI, the demo,
 * Chromium, Redis, PostgreSQL) could have run beside it.
 */
async function cachedOrComputed(): Promise<BacktestRun> {
  const file = join(CACHE, `fixed-backtest-${sourcesHash()}.json`);
  mkdirSync(CACHE, { recursive: true });
  for (;;) {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as BacktestRun;
    } catch {
      // Not computed for these sources yet.
    }
    if (takeLock(`${file}.lock`)) {
      try {
        return await computeInto(file);
      } finally {
        rmSync(`${file}.lock`, { force: true });
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Whether this process now holds `lock`: free, or left by a process that no longer runs. */
function takeLock(lock: string): boolean {
  // Made whole with the pid in it, then linked: a reader never finds it empty.
  const own = `${lock}.${process.pid}`;
  writeFileSync(own, String(process.pid));
  try {
    linkSync(own, lock);
    return true;
  } catch {
    // Held: by a live process (which computes), or by one that died computing.
  } finally {
    rmSync(own, { force: true });
  }
  try {
    if (isRunning(Number(readFileSync(lock, 'utf8')))) return false;
  } catch {
    return false; // freed meanwhile: the next turn takes it
  }
  rmSync(lock, { force: true });
  return false; // the next turn takes it, unless another process is quicker
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function computeInto(file: string): Promise<BacktestRun> {
  const store = new SqliteStore(':memory:');
  let run: BacktestRun;
  try {
    await fillFixedStore(store);
    run = await runBacktest(store, NOW_S);
  } finally {
    await store.close();
  }
  // Through JSON as a store keeps it; written whole or not at all (a reader may come meanwhile).
  const text = JSON.stringify(run);
  // Runs for older sources go after a day (other checkouts may share node_modules).
  for (const old of readdirSync(CACHE).filter((name) => name.startsWith('fixed-backtest-'))) {
    const path = join(CACHE, old);
    if (Date.now() - statSync(path).mtimeMs > 86_400_000) rmSync(path, { force: true });
  }
  const partial = `${file}.${process.pid}`;
  writeFileSync(partial, text);
  renameSync(partial, file);
  return JSON.parse(text) as BacktestRun;
}

/** A hash of every source file and of the fixed store: what the backtest's result depends on. */
function sourcesHash(): string {
  const hash = createHash('sha256');
  const files = [...sourceFiles(join(ROOT, 'src')), join(ROOT, 'test/support/fixed-store.ts')];
  for (const path of files.sort()) {
    hash.update(relative(ROOT, path)).update('\0').update(readFileSync(path)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}
