import { createHash } from 'node:crypto';
import {
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
 * that starts one. Computed once per version of the sources that decide it (by the integration
 * tier's global setup) and kept in node_modules/.cache/gridco2-tests/; suites that test the
 * backtest itself run their own.
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
 * The integration tier's global setup: the run computed (when the sources changed) before any
 * suite starts, outside every test's and hook's timeout.
 */
export default async function setup(): Promise<void> {
  await fixedBacktest();
}

async function cachedOrComputed(): Promise<BacktestRun> {
  const file = join(CACHE, `fixed-backtest-${sourcesHash()}.json`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as BacktestRun;
  } catch {
    // Not computed for these sources yet.
  }
  const store = new SqliteStore(':memory:');
  let run: BacktestRun;
  try {
    await fillFixedStore(store);
    run = await runBacktest(store, NOW_S);
  } finally {
    await store.close();
  }
  // Through JSON as a store keeps it; written whole or not at all (another worker may race).
  const text = JSON.stringify(run);
  mkdirSync(CACHE, { recursive: true });
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
