/**
 * The forecast worker's backtest of `gridco2 demo --days 240` (issue 38), in CPU seconds: the
 * first backtest of the store, as the demo runs it once its backfill ends, and the daily rerun a
 * day later with a day more of data, resumed from the state stored with the first. Both run in
 * the forecast worker process `serve` starts (worker-compute.ts: its flags, and its zone workers,
 * one per core up to 4; built, from `dist/`), which stores them; the CPU counted is the
 * worker's, its zone workers' and this process's (receiving the run, as the server does). The
 * first is run as of a day before the store's newest value (its last issue and the values it
 * loads end there, the values after it unseen as if not yet published), the rerun as of the
 * newest; with `--verify`, a third run from scratch must store the same backtest as the rerun.
 *
 * The store: `--store FILE` (a copy is used), else bench/.cache/demo-240.db, made once by running
 * `gridco2 demo --days 240` (from `dist/`, FLOWS=off) until its backfill ends.
 *
 * With `--first FILE`, the store as the first backtest left it is kept in FILE, and a later run
 * given the same FILE measures the rerun alone from it: A/B runs of the rerun without minutes of
 * the first each (its state must still resume: the log says how many did).
 *
 * Standalone: `npx tsx bench/backtest-daily.ts [--store FILE] [--verify] [--first FILE]` (run it
 * niced).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import type * as WorkerComputeModule from '../src/forecast/worker-compute.js';
import type { WorkerCompute } from '../src/forecast/worker-compute.js';
import { defaultZoneWorkers } from '../src/forecast/zone-workers.js';
import { createStore } from '../src/storage/create-store.js';
import { outputTail, runIfMain, spawnPinned, stopProcess, waitForLine } from './processes.js';
import { processTreeCpuTicks, TICKS_PER_SECOND } from './servers.js';

const DAYS = 240;
const DAY_SECONDS = 86_400;
/** The demo's backfill of 240 days: about 9 minutes of two busy cores. */
const BACKFILL_PATIENCE_MS = 3_600_000;
/** The most this part can take: the store's backfill once, then two backtests on a busy machine. */
export const backtestDailySeconds = BACKFILL_PATIENCE_MS / 1000 + 1800;
export interface BacktestDailyResult {
  readonly zones: number;
  /** Zones times their bases (and GB's operator forecast). */
  readonly forecasts: number;
  /** The first backtest of the store (not run when its store was kept, `--first`). */
  readonly firstCpuSeconds?: number;
  readonly firstWallSeconds?: number;
  /** The forecast worker's zone workers (none on one core: the zone-bases run in the worker). */
  readonly workers: number;
  /** The rerun a day later, from the state the first stored, and the storing of its own. */
  readonly dailyCpuSeconds: number;
  /** Megabytes of the state stored with the first run. */
  readonly stateMegabytes: number;
  /** With --verify: whether the rerun stored what a run from scratch stores. */
  readonly sameAsFromScratch?: boolean;
}

/** The targets of issue 38, in CPU seconds. */
const FIRST_TARGET_SECONDS = 120;
const DAILY_TARGET_SECONDS = 10;

/** CPU seconds of this process and of the forecast worker with its zone workers. */
function cpuNow(compute: WorkerCompute): number {
  const { user, system } = process.cpuUsage();
  const worker = compute.pid === undefined ? 0 : (processTreeCpuTicks(compute.pid) ?? 0);
  return (user + system) / 1e6 + worker / TICKS_PER_SECOND;
}

/**
 * The forecast worker from `dist/`, as `serve` runs it: from the sources, each process would run
 * through tsx's loader, whose code V8 optimises differently (an eighth more allocation over the
 * rerun, sampled: 2.27 against 2.02 GB).
 */
async function builtWorkerCompute(repoDir: string, databaseUrl: string): Promise<WorkerCompute> {
  const file = join(repoDir, 'dist', 'forecast', 'worker-compute.js');
  if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build first`);
  const built = (await import(pathToFileURL(file).href)) as typeof WorkerComputeModule;
  // At the server's own priority: a niceness changes when the worker runs, not what it costs.
  return new built.WorkerCompute(databaseUrl, 0);
}

/** The demo's store of 240 days: made once, by its own backfill. */
async function demoStore(repoDir: string, log: (line: string) => void): Promise<string> {
  const cached = join(repoDir, 'bench', '.cache', `demo-${DAYS}.db`);
  if (existsSync(cached)) return cached;
  log(`backtest daily: filling a ${DAYS}-day demo store (once, cached in bench/.cache)`);
  const dir = mkdtempSync(join(tmpdir(), 'gridco2-demo-store-'));
  const demo = spawnPinned(
    0,
    process.execPath,
    [join(repoDir, 'bin', 'gridco2.js'), 'demo', '--days', String(DAYS)],
    {
      cwd: dir,
      env: { ...process.env, PORT: '0', METRICS: 'off', FLOWS: 'off', LOG_LEVEL: 'info' },
    },
  );
  const output = outputTail(demo);
  try {
    await waitForLine(
      demo,
      (line) => (line.includes(`backfill of ${DAYS} days done`) ? true : undefined),
      BACKFILL_PATIENCE_MS,
    );
  } catch (error) {
    throw new Error(`${String(error)}\n${output()}`);
  } finally {
    await stopProcess(demo);
  }
  mkdirSync(join(repoDir, 'bench', '.cache'), { recursive: true });
  const db = new Database(join(dir, 'data', 'demo.db'), { readonly: true });
  await db.backup(cached);
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return cached;
}

export async function measureBacktestDaily(options: {
  readonly repoDir: string;
  readonly scratchDir: string;
  readonly store?: string;
  readonly verify?: boolean;
  /** Where the store as the first backtest left it is kept, or read from when there. */
  readonly firstStore?: string;
  readonly log: (line: string) => void;
}): Promise<BacktestDailyResult> {
  const { log, firstStore } = options;
  const kept = firstStore !== undefined && existsSync(firstStore);
  const source = kept ? firstStore : (options.store ?? (await demoStore(options.repoDir, log)));
  const file = join(options.scratchDir, 'backtest-daily.db');
  const db = new Database(source, { readonly: true });
  await db.backup(file);
  const newest = db.prepare('SELECT max(ts) FROM readings').pluck().get() as number;
  db.close();
  const store = await createStore(`sqlite:${file}`);
  const compute = await builtWorkerCompute(options.repoDir, `sqlite:${file}`);
  const signal = new AbortController().signal;
  const zoneWorkers = defaultZoneWorkers();
  try {
    // A preparation as of 1970 (no value to forecast from, nothing stored) first: the worker is
    // up, as in `serve`, when the measured backtests start.
    await compute.prepare(0, [], signal);
    const nowSeconds = newest + 3600;
    let first: { cpu: number; wall: number } | undefined;
    if (kept) log(`backtest daily: the first backtest as kept in ${firstStore}`);
    else {
      log('backtest daily: the first backtest, a day before the newest value');
      const started = cpuNow(compute);
      const wallStarted = performance.now();
      await compute.backtest(nowSeconds - DAY_SECONDS, signal);
      first = { cpu: cpuNow(compute) - started, wall: (performance.now() - wallStarted) / 1000 };
      log(`backtest daily: ${first.cpu.toFixed(1)} s CPU, ${first.wall.toFixed(1)} s wall`);
      if (firstStore !== undefined) {
        const written = new Database(file, { readonly: true });
        await written.backup(firstStore);
        written.close();
      }
    }
    const firstRun = (await store.newestBacktest())!;
    const firstStates = await store.newestBacktestStates();
    log('backtest daily: the rerun a day later');
    const started = cpuNow(compute);
    // Stored by the worker, as in `serve`: part of the day's cost.
    const daily = await compute.backtest(nowSeconds, signal);
    const dailyCpuSeconds = cpuNow(compute) - started;
    const { resumed, fellBack } = daily.resumption;
    log(
      `backtest daily: the rerun ${dailyCpuSeconds.toFixed(1)} s CPU; ${resumed} resumed, ` +
        `from their first issue: ${JSON.stringify(fellBack)}`,
    );
    let sameAsFromScratch: boolean | undefined;
    if (options.verify) {
      await store.saveBacktest({ createdAt: 0, zones: [] });
      const fresh = await compute.backtest(nowSeconds, signal);
      sameAsFromScratch = JSON.stringify(fresh.run) === JSON.stringify(daily.run);
    }
    return {
      zones: new Set(firstRun.zones.map(({ zone }) => zone)).size,
      forecasts: firstRun.zones.length,
      ...(first && { firstCpuSeconds: first.cpu, firstWallSeconds: first.wall }),
      workers: zoneWorkers > 1 ? zoneWorkers : 0,
      dailyCpuSeconds,
      stateMegabytes: [...firstStates.values()].reduce((sum, bytes) => sum + bytes.length, 0) / 1e6,
      ...(sameAsFromScratch !== undefined && { sameAsFromScratch }),
    };
  } finally {
    await compute.close();
    await store.close();
  }
}

export function renderBacktestDaily(result: BacktestDailyResult): string {
  const { firstCpuSeconds, firstWallSeconds } = result;
  const lines = [
    `### Backtest of the ${DAYS}-day demo (issue 38)`,
    '',
    firstCpuSeconds === undefined || firstWallSeconds === undefined
      ? `- first backtest: kept from an earlier run (${result.forecasts} zone-bases)`
      : `- first backtest: ${firstCpuSeconds.toFixed(1)} s CPU, ` +
        `${firstWallSeconds.toFixed(1)} s wall in the forecast worker (${result.workers || 'no'} zone workers), for ${result.zones} zones ` +
        `(${result.forecasts} zone-bases; target: stored within ${FIRST_TARGET_SECONDS} s of the backfill's end)`,
    `- backtest daily rerun: ${result.dailyCpuSeconds.toFixed(1)} s CPU for ${result.zones} zones ` +
      `(target ${DAILY_TARGET_SECONDS} s; state stored with the run ${result.stateMegabytes.toFixed(1)} MB)`,
  ];
  if (result.sameAsFromScratch !== undefined) {
    lines.push(
      `- rerun identical to a run from scratch: ${result.sameAsFromScratch ? 'yes' : 'NO'}`,
    );
  }
  return lines.join('\n');
}

runIfMain(import.meta.url, async () => {
  const at = process.argv.indexOf('--store');
  const firstAt = process.argv.indexOf('--first');
  const scratchDir = mkdtempSync(join(tmpdir(), 'gridco2-backtest-daily-'));
  try {
    const result = await measureBacktestDaily({
      repoDir: fileURLToPath(new URL('..', import.meta.url)),
      scratchDir,
      ...(at >= 0 && { store: process.argv[at + 1]! }),
      verify: process.argv.includes('--verify'),
      ...(firstAt >= 0 && { firstStore: process.argv[firstAt + 1]! }),
      log: (line) => process.stderr.write(`${line}\n`),
    });
    console.log(renderBacktestDaily(result));
  } finally {
    rmSync(scratchDir, { recursive: true, force: true });
  }
});
