import { createStore } from '../storage/create-store.js';
import { type CarriedFitsByForecast, prepareZones } from './compute.js';
import { runResumableBacktest } from './run-backtest.js';
import { type ForecastJob, type ForecastJobReply, WORKER_STORE_ENV } from './worker-compute.js';

/**
 * The forecast worker process started by worker-compute.ts: opens the store itself and runs the
 * jobs it is sent (the backtest, preparing every zone), replying with each result whole. It is
 * killed to cancel, and ends with the server (its channel closes).
 */

const store = createStore(process.env[WORKER_STORE_ENV]!);
const carried: CarriedFitsByForecast = new Map();

process.on('message', (job: ForecastJob) => void run(job));
process.on('disconnect', () => process.exit(0));

async function run(job: ForecastJob): Promise<void> {
  let reply: ForecastJobReply;
  try {
    const opened = await store;
    const result =
      job.type === 'backtest'
        ? await runResumableBacktest(opened, job.nowSeconds)
        : await prepareZones(opened, job.nowTs, job.backtests, carried);
    reply = { type: 'done', id: job.id, result };
  } catch (error) {
    reply = { type: 'failed', id: job.id, message: String(error) };
  }
  process.send!(reply);
}
