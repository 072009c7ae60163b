import type { Logger } from 'pino';
import { findZone, type Zone } from '../core/zones.js';
import { runBackfill, type BackfillProgress } from '../ingest/backfill.js';
import { runGraphBackfill } from '../ingest/backfill-graph.js';
import { createSourceAdapter } from '../ingest/sources.js';
import { createLogger } from '../logger.js';
import { openStore } from '../open-store.js';
import type { Store } from '../storage/store.js';
import type { WorkerReply, WorkerRequest } from './backfill-pool.js';

/**
 * A backfill worker process of `gridco2 demo`, forked by backfill-pool.ts: runs the jobs it is
 * sent one after the other against the demo's store and reports every chunk. Only ever pointed
 * at the local simulator, hence `localUpstream`.
 */

const interrupt = new AbortController();
let jobs: Promise<void> = Promise.resolve();
let store: Promise<Store> | undefined;
let logger: Logger | undefined;
let stopping: Promise<void> | undefined;

const reply = (message: WorkerReply) => {
  if (process.connected) process.send?.(message);
};

process.on('message', (request: WorkerRequest) => {
  if (request.type === 'stop') void stop();
  else jobs = jobs.then(() => runJob(request));
});
// Ctrl-C reaches the whole process group; a parent that died without a word leaves no worker.
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
process.on('disconnect', () => void stop());

async function runJob({ id, job, config, window }: Extract<WorkerRequest, { type: 'job' }>) {
  if (interrupt.signal.aborted) return;
  try {
    logger ??= createLogger(config).child({ backfillWorker: process.pid });
    store ??= openStore(config, 'write');
    const options = {
      store: await store,
      adapter: createSourceAdapter(config, job.source, { logger, localUpstream: true }),
      logger,
      window,
      signal: interrupt.signal,
      onProgress: ({ chunk, skipped, pointsStored, errors }: BackfillProgress) =>
        reply({
          type: 'progress',
          id,
          progress: {
            zones: chunk.zones.map((zone) => zone.code),
            ...(chunk.border !== undefined && { border: chunk.border }),
            window: chunk.window,
            skipped,
            pointsStored,
            errors,
          },
        }),
    };
    const result = job.graph
      ? await runGraphBackfill(options)
      : await runBackfill({ ...options, zones: job.zones.map(zoneOf) });
    reply({ type: 'done', id, result });
  } catch (error) {
    if (!interrupt.signal.aborted) reply({ type: 'failed', id, message: String(error) });
  }
}

function stop(): Promise<void> {
  stopping ??= (async () => {
    interrupt.abort();
    await jobs;
    await store?.then(
      (opened) => opened.close(),
      () => undefined,
    );
    process.exit(0);
  })();
  return stopping;
}

function zoneOf(code: string): Zone {
  const zone = findZone(code);
  if (!zone) throw new Error(`unknown zone ${code}`);
  return zone;
}
