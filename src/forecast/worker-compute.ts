import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { getPriority, setPriority } from 'node:os';
import type { ZoneBacktest } from '../core/forecast/backtest.js';
import type { Store } from '../storage/store.js';
import { type ForecastCompute, inThreadCompute, type PreparedZones } from './compute.js';
import { forkModule, siblingModule } from './fork-module.js';
import type { StoredRun } from './run-backtest.js';

/**
 * The forecast engine's work in a worker process (issue 21, a process since issue 38): the
 * backtest and the recomputes take seconds of CPU on a long store, which on the serving thread
 * would hold every request, and beside it as an equal would still halve serving on one core; a
 * process runs at a lower CPU priority (a thread cannot). The worker opens the same store (a
 * file or a server) on its own; messages carry one job each and its result back whole. Stopping
 * kills the worker, which cancels whatever it was running.
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
  | { readonly type: 'done'; readonly id: number; readonly result: StoredRun | PreparedZones }
  | { readonly type: 'failed'; readonly id: number; readonly message: string };

const WORKER_FILE = siblingModule('forecast-worker');

/** The highest nice value there is. */
const LOWEST_PRIORITY = 19;

/** The environment variable that hands the worker its store's URL (argv is public in `ps`). */
export const WORKER_STORE_ENV = 'GRIDCO2_FORECAST_STORE';

/**
 * The worker runs `niceness` below the server's CPU priority: on a single core the scheduler then
 * gives serving the CPU whenever it has a request, and the backtest the rest (issue 38: `latest`
 * at 0.32-0.62x of a bare server beside an equal thread).
 */
function startWorker(databaseUrl: string, niceness: number): ChildProcess {
  const child = forkModule(WORKER_FILE, { ...process.env, [WORKER_STORE_ENV]: databaseUrl });
  if (child.pid !== undefined) {
    setPriority(child.pid, Math.min(LOWEST_PRIORITY, getPriority() + niceness));
  }
  return child;
}

/** Whether the worker keeps this process alive: only while it has a job. */
function keepAlive(child: ChildProcess, alive: boolean): void {
  if (alive) {
    child.ref();
    child.channel?.ref();
  } else {
    child.unref();
    child.channel?.unref();
  }
}

/** Whether another process can open the store the URL names (an in-memory SQLite cannot). */
const shareable = (databaseUrl: string) => !/^sqlite:(?::memory:)?$/.test(databaseUrl);

/** The engine's work in a worker process when the store can be opened there, else in-thread. */
export function forecastCompute(
  store: Store,
  databaseUrl: string,
  niceness: number,
): ForecastCompute {
  return shareable(databaseUrl) ? new WorkerCompute(databaseUrl, niceness) : inThreadCompute(store);
}

export class WorkerCompute implements ForecastCompute {
  private worker: ChildProcess | undefined;
  private nextId = 0;
  private readonly pending = new Map<
    number,
    { resolve: (result: StoredRun | PreparedZones) => void; reject: (error: Error) => void }
  >();

  constructor(
    private readonly databaseUrl: string,
    private readonly niceness: number,
  ) {}

  /** The worker's process id while it runs. */
  get pid(): number | undefined {
    return this.worker?.pid;
  }

  backtest(nowSeconds: number, signal: AbortSignal): Promise<StoredRun> {
    return this.send(
      { type: 'backtest', id: this.nextId++, nowSeconds },
      signal,
    ) as Promise<StoredRun>;
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
    if (!worker || worker.exitCode !== null || worker.signalCode !== null) return;
    const exited = once(worker, 'exit');
    // Held until it has exited: an idle worker is unreferenced, and a caller with nothing else
    // to wait on would end before `close` resolves, skipping what it does next.
    keepAlive(worker, true);
    worker.kill();
    await exited;
  }

  private send(job: ForecastJob, signal: AbortSignal): Promise<StoredRun | PreparedZones> {
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
      keepAlive(worker, true);
      worker.send(job);
    });
  }

  private start(): ChildProcess {
    const worker = startWorker(this.databaseUrl, this.niceness);
    keepAlive(worker, false);
    worker.on('message', (reply: ForecastJobReply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) keepAlive(worker, false);
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
    worker.on('exit', (code, signal) =>
      lost(new Error(`forecast worker exited (${code ?? signal})`)),
    );
    return worker;
  }

  private failAll(error: Error): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const job of waiting) job.reject(error);
  }
}
