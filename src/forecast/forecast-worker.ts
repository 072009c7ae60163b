import { createStore } from '../storage/create-store.js';
import { type CarriedFitsByForecast, prepareZones } from './compute.js';
import { runAndStoreBacktest } from './run-backtest.js';
import { type ForecastJob, type ForecastJobReply, WORKER_STORE_ENV } from './worker-compute.js';
import { defaultZoneWorkers, ZoneWorkers } from './zone-workers.js';

/**
 * The forecast worker process started by worker-compute.ts: opens the store itself and runs the
 * jobs it is sent (the backtest, preparing every zone), replying with each result whole. It is
 * killed to cancel, and ends with the server (its channel closes).
 */

const store = createStore(process.env[WORKER_STORE_ENV]!);
const carried: CarriedFitsByForecast = new Map();
/**
 * The backtest's zone-bases side by side, one process per core, where there is more than one
 * (issue 38: the first backtest of a long demo is minutes of one core).
 */
const workerCount = defaultZoneWorkers();
const zoneWorkers = workerCount > 1 ? new ZoneWorkers(workerCount) : undefined;

process.on('message', (job: ForecastJob) => void run(job));

/**
 * Exits once the zone workers have: left behind, each would run its zone-base to the end (tens
 * of seconds of CPU on a long history) before it noticed that nobody waits for it.
 */
const exit = () => void (zoneWorkers?.close() ?? Promise.resolve()).finally(() => process.exit(0));
process.on('disconnect', exit);
// Stopped (worker-compute.ts kills it to cancel). With zone workers, the backtest waits on them,
// so this is heard at once; without, the default (end at once) cancels without waiting for the
// zone-base under way on this thread.
if (zoneWorkers) process.on('SIGTERM', exit);

async function run(job: ForecastJob): Promise<void> {
  let reply: ForecastJobReply;
  try {
    const opened = await store;
    const result =
      job.type === 'backtest'
        ? await runAndStoreBacktest(opened, job.nowSeconds, undefined, zoneWorkers)
        : await prepareZones(opened, job.nowTs, job.backtests, carried);
    reply = { type: 'done', id: job.id, result };
  } catch (error) {
    reply = { type: 'failed', id: job.id, message: String(error) };
  }
  process.send!(reply);
}
