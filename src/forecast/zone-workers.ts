import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import type { ForecastBasis, ZoneBacktest, ZoneInputsData } from '../core/forecast/backtest.js';
import type { FallBackReason, ZoneBacktestState } from '../core/forecast/backtest-state.js';
import { forkModule, siblingModule } from './fork-module.js';

/**
 * Processes that backtest zone-bases side by side (issue 38): each zone-base's walk-forward is
 * independent of the others, so on a machine with more than one core the forecast worker hands
 * them to these, one at a time each, and collects the results in order (the run is the same as
 * one made zone-base after zone-base). Started by the forecast worker, they inherit its lower
 * CPU priority.
 */

/** Each holds a zone-base's history and fits: at most this many, whatever the cores. */
const MAX_ZONE_WORKERS = 4;

/** The zone workers a backtest runs in: one per core, at most MAX_ZONE_WORKERS. */
export const defaultZoneWorkers = (): number => Math.min(availableParallelism(), MAX_ZONE_WORKERS);

/** One zone-base to backtest, as plain data. */
export interface ZoneTask {
  readonly id: number;
  readonly zone: string;
  readonly basis: ForecastBasis;
  readonly inputs: ZoneInputsData;
  readonly issueTimes: readonly number[];
  readonly candidateIds: readonly string[];
  readonly previous?: ZoneBacktestState;
  /** Whether to reply with the state the next run resumes from. */
  readonly keep: boolean;
}

export type ZoneTaskReply =
  | {
      readonly type: 'done';
      readonly id: number;
      readonly result: ZoneBacktest;
      readonly kept?: ZoneBacktestState;
      /** Whether the zone-base resumed (null) or why it ran from its first issue; with `keep`. */
      readonly fellBack?: FallBackReason | null;
    }
  | { readonly type: 'failed'; readonly id: number; readonly message: string };

export interface ZoneTaskResult {
  readonly result: ZoneBacktest;
  readonly kept?: ZoneBacktestState;
  readonly fellBack?: FallBackReason | null;
}

const WORKER_FILE = siblingModule('zone-worker');

interface Waiting {
  readonly task: ZoneTask;
  readonly resolve: (result: ZoneTaskResult) => void;
  readonly reject: (error: Error) => void;
}

export class ZoneWorkers {
  private readonly idle: ChildProcess[] = [];
  private readonly busy = new Map<ChildProcess, Waiting>();
  private readonly queue: Waiting[] = [];
  private started = 0;
  private nextId = 0;
  private closed = false;

  /** `size`: how many processes at most (started as tasks come). */
  constructor(readonly size: number) {}

  /** Backtests one zone-base in a process of the pool (queued while every one is busy). */
  run(task: Omit<ZoneTask, 'id'>): Promise<ZoneTaskResult> {
    if (this.closed) return Promise.reject(new Error('zone workers stopped'));
    return new Promise((resolve, reject) => {
      this.queue.push({ task: { ...task, id: this.nextId++ }, resolve, reject });
      this.dispatch();
    });
  }

  /** Stops every process: tasks under way or queued fail. */
  async close(): Promise<void> {
    this.closed = true;
    const error = new Error('zone workers stopped');
    for (const waiting of this.queue.splice(0)) waiting.reject(error);
    const children = [...this.idle.splice(0), ...this.busy.keys()];
    for (const waiting of this.busy.values()) waiting.reject(error);
    this.busy.clear();
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        // Waited for: an idle child is unreferenced, and the caller's process would end before
        // this resolves (the bench's results were never printed).
        child.ref();
        child.kill();
        await exited;
      }),
    );
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const child = this.idle.pop() ?? (this.started < this.size ? this.start() : undefined);
      if (!child) return;
      const waiting = this.queue.shift()!;
      this.busy.set(child, waiting);
      child.ref();
      child.channel?.ref();
      child.send(waiting.task);
    }
  }

  private start(): ChildProcess {
    this.started++;
    const child = forkModule(WORKER_FILE);
    child.on('message', (reply: ZoneTaskReply) => {
      const waiting = this.busy.get(child);
      this.busy.delete(child);
      // An idle process does not keep the forecast worker alive.
      child.unref();
      child.channel?.unref();
      this.idle.push(child);
      if (reply.type === 'done') {
        waiting?.resolve({
          result: reply.result,
          ...(reply.kept && { kept: reply.kept }),
          ...(reply.fellBack !== undefined && { fellBack: reply.fellBack }),
        });
      } else waiting?.reject(new Error(reply.message));
      this.dispatch();
    });
    // A process that failed or exited on its own fails its task; the next task starts another.
    const lost = (error: Error) => {
      const index = this.idle.indexOf(child);
      if (index >= 0) this.idle.splice(index, 1);
      const waiting = this.busy.get(child);
      if (!this.busy.delete(child) && index < 0) return;
      this.started--;
      waiting?.reject(error);
      if (!this.closed) this.dispatch();
    };
    child.on('error', lost);
    child.on('exit', (code, signal) => lost(new Error(`zone worker exited (${code ?? signal})`)));
    return child;
  }
}
