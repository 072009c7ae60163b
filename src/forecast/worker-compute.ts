import { createRequire } from 'node:module';
import { extname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { BacktestRun, ZoneBacktest } from '../core/forecast/backtest.js';
import type { Store } from '../storage/store.js';
import { type ForecastCompute, inThreadCompute, type PreparedZones } from './compute.js';

/**
 * The forecast engine's work on a worker thread (issue 21): the backtest and the recomputes take
 * seconds of CPU on a long store, which on the serving thread would hold every request. The
 * worker opens the same store (a file or a server) on its own; messages carry one job each and
 * its result back whole. Stopping terminates the worker, which cancels whatever it was running.
 */

/** Messages to the worker. */
export type ForecastJob =
  | { readonly type: 'backtest'; readonly id: number; readonly nowSeconds: number }
  | {
      readonly type: 'prepare';
      readonly id: number;
      readonly nowTs: number;
      readonly backtests: readonly ZoneBacktest[];
    };

/** Messages from the worker, about the job of the same id. */
export type ForecastJobReply =
  | { readonly type: 'done'; readonly id: number; readonly result: BacktestRun | PreparedZones }
  | { readonly type: 'failed'; readonly id: number; readonly message: string };

const WORKER_EXTENSION = extname(fileURLToPath(import.meta.url));
const WORKER_FILE = new URL(`./forecast-worker${WORKER_EXTENSION}`, import.meta.url);

/**
 * Built, the worker is the compiled `.js`. From the TypeScript sources (tests, `tsx`), Node
 * cannot load the `.ts` itself: a small script registers tsx's loader in the worker first.
 */
function startWorker(databaseUrl: string): Worker {
  const workerData = { databaseUrl };
  if (WORKER_EXTENSION !== '.ts') return new Worker(WORKER_FILE, { workerData });
  // The ESM build of tsx's API (require resolves its CommonJS twin, which cannot register).
  const api = createRequire(import.meta.url)
    .resolve('tsx/esm/api')
    .replace(/\.cjs$/, '.mjs');
  const script =
    `import(${JSON.stringify(pathToFileURL(api).href)})` +
    `.then(({ register }) => { register(); return import(${JSON.stringify(WORKER_FILE.href)}); })`;
  return new Worker(script, { eval: true, workerData });
}

/** Whether another thread can open the store the URL names (an in-memory SQLite cannot). */
const shareable = (databaseUrl: string) => !/^sqlite:(?::memory:)?$/.test(databaseUrl);

/** The engine's work on a worker thread when the store can be opened there, else in-thread. */
export function forecastCompute(store: Store, databaseUrl: string): ForecastCompute {
  return shareable(databaseUrl) ? new WorkerCompute(databaseUrl) : inThreadCompute(store);
}

export class WorkerCompute implements ForecastCompute {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<
    number,
    { resolve: (result: BacktestRun | PreparedZones) => void; reject: (error: Error) => void }
  >();

  constructor(private readonly databaseUrl: string) {}

  backtest(nowSeconds: number, signal: AbortSignal): Promise<BacktestRun> {
    return this.send(
      { type: 'backtest', id: this.nextId++, nowSeconds },
      signal,
    ) as Promise<BacktestRun>;
  }

  prepare(
    nowTs: number,
    backtests: readonly ZoneBacktest[],
    signal: AbortSignal,
  ): Promise<PreparedZones> {
    return this.send(
      { type: 'prepare', id: this.nextId++, nowTs, backtests },
      signal,
    ) as Promise<PreparedZones>;
  }

  /** Terminates the worker: the jobs under way fail as cancelled. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.failAll(new Error('forecast worker stopped'));
    await worker?.terminate();
  }

  private send(job: ForecastJob, signal: AbortSignal): Promise<BacktestRun | PreparedZones> {
    if (signal.aborted) return Promise.reject(new Error('forecast worker stopped'));
    const worker = (this.worker ??= this.start());
    return new Promise((resolve, reject) => {
      const onAbort = () => void this.close();
      signal.addEventListener('abort', onAbort, { once: true });
      this.pending.set(job.id, {
        resolve: (result) => {
          signal.removeEventListener('abort', onAbort);
          resolve(result);
        },
        reject: (error) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      });
      // Only a worker with a job keeps the process alive.
      worker.ref();
      worker.postMessage(job);
    });
  }

  private start(): Worker {
    const worker = startWorker(this.databaseUrl);
    worker.unref();
    worker.on('message', (reply: ForecastJobReply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if (reply.type === 'done') waiting?.resolve(reply.result);
      else waiting?.reject(new Error(reply.message));
    });
    // A worker that failed or exited on its own (close has already answered its jobs): the
    // next job starts a new one.
    const lost = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.failAll(error);
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`forecast worker exited (${code})`)));
    return worker;
  }

  private failAll(error: Error): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const job of waiting) job.reject(error);
  }
}
