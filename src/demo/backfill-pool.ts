import { fork } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.js';
import { nothingBackfilled, type BackfillResult } from '../ingest/backfill.js';
import type { TimeWindow } from '../core/time.js';
import type { SourceId } from '../core/sources.js';

/**
 * The demo's backfill, spread over a few worker processes. Parsing the upstream documents is
 * what a long backfill spends its time on (a year of ENTSO-E XML is about 40 s of one core), so
 * one process per core, each taking the next job when done, makes `--days 400` take a fraction
 * of that. Processes rather than worker threads: Node 20 does not run `--import tsx` in worker
 * threads, and every process opens the shared SQLite file on its own like `gridco2 backfill` does.
 */

/**
 * Zones of one source backfilled by one worker in one go; or, with `graph`, the source's part of
 * its flow graph (its extra nodes, then its borders' flows: runGraphBackfill), and zones none.
 */
export interface BackfillJob {
  readonly source: SourceId;
  readonly zones: readonly string[];
  readonly graph?: true;
}

/** One chunk a worker finished, as its progress is reported. */
export interface ChunkProgress {
  readonly zones: readonly string[];
  /** The border of a flow graph whose flows the chunk holds; its zones are then none. */
  readonly border?: string;
  readonly window: TimeWindow;
  /** The chunk's hours were all stored already, so it was not fetched. */
  readonly skipped: boolean;
  readonly pointsStored: number;
  readonly errors: readonly string[];
}

/** Messages from the pool to a worker. */
export type WorkerRequest =
  | {
      readonly type: 'job';
      readonly id: number;
      readonly job: BackfillJob;
      readonly config: Config;
      readonly window: TimeWindow;
    }
  | { readonly type: 'stop' };

/** Messages from a worker to the pool, about the job it was sent. */
export type WorkerReply =
  | { readonly type: 'progress'; readonly id: number; readonly progress: ChunkProgress }
  | { readonly type: 'done'; readonly id: number; readonly result: BackfillResult }
  | { readonly type: 'failed'; readonly id: number; readonly message: string };

export interface BackfillPoolOptions {
  readonly config: Config;
  readonly window: TimeWindow;
  readonly jobs: readonly BackfillJob[];
  readonly workers: number;
  readonly onChunk: (source: SourceId, progress: ChunkProgress) => void;
  /** Stops the workers at their next chunk; the jobs not started are dropped. */
  readonly signal: AbortSignal;
}

/** How long a stopped worker may take to finish its chunk and close the store. */
const STOP_GRACE_MS = 10_000;

const WORKER_FILE = new URL(
  // `.ts` when run through tsx, `.js` once built.
  `./backfill-worker${extname(fileURLToPath(import.meta.url))}`,
  import.meta.url,
);

/** Runs every job on at most `workers` processes; resolves with the combined result per source. */
export async function runBackfillPool(
  options: BackfillPoolOptions,
): Promise<Map<SourceId, BackfillResult>> {
  const { config, window, onChunk, signal } = options;
  const pending = options.jobs.map((job, id) => ({ id, job }));
  const results = new Map<SourceId, BackfillResult>();
  const record = (source: SourceId, result: BackfillResult) =>
    results.set(source, combine(results.get(source), result));

  const runWorker = () =>
    new Promise<void>((resolve) => {
      const child = fork(WORKER_FILE, { stdio: 'inherit' });
      let current: (typeof pending)[number] | undefined;
      const send = (request: WorkerRequest) => {
        if (child.connected) child.send(request);
      };
      const takeNext = () => {
        current = signal.aborted ? undefined : pending.shift();
        send(current ? { type: 'job', ...current, config, window } : { type: 'stop' });
      };
      let killTimer: NodeJS.Timeout | undefined;
      const onAbort = () => {
        send({ type: 'stop' });
        killTimer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      };
      signal.addEventListener('abort', onAbort, { once: true });

      child.on('message', (reply: WorkerReply) => {
        if (current?.id !== reply.id) return;
        if (reply.type === 'progress') {
          onChunk(current.job.source, reply.progress);
          return;
        }
        record(current.job.source, reply.type === 'done' ? reply.result : failed(reply.message));
        takeNext();
      });
      // A send to a worker that just died: its exit is handled below.
      child.on('error', () => undefined);
      child.on('exit', (code, exitSignal) => {
        signal.removeEventListener('abort', onAbort);
        clearTimeout(killTimer);
        if (current && !signal.aborted) {
          record(current.job.source, failed(`backfill worker exited (${exitSignal ?? code})`));
        }
        resolve();
      });
      takeNext();
    });

  const count = Math.max(1, Math.min(options.workers, pending.length));
  await Promise.all(Array.from({ length: count }, runWorker));
  if (!signal.aborted) {
    for (const { job } of pending) record(job.source, failed('no backfill worker left to run it'));
  }
  return results;
}

function failed(message: string): BackfillResult {
  return nothingBackfilled([message]);
}

function combine(total: BackfillResult | undefined, result: BackfillResult): BackfillResult {
  if (!total) return result;
  return {
    chunks: total.chunks + result.chunks,
    skipped: total.skipped + result.skipped,
    pointsStored: total.pointsStored + result.pointsStored,
    incompleteHours: total.incompleteHours + result.incompleteHours,
    forecastsStored: total.forecastsStored + result.forecastsStored,
    flowsStored: (total.flowsStored ?? 0) + (result.flowsStored ?? 0),
    errors: [...total.errors, ...result.errors],
  };
}
