import { parentPort, workerData } from 'node:worker_threads';
import { createStore } from '../storage/create-store.js';
import { type CarriedFitsByForecast, prepareZones } from './compute.js';
import { runBacktest } from './run-backtest.js';
import type { ForecastJob, ForecastJobReply } from './worker-compute.js';

/**
 * The forecast worker thread started by worker-compute.ts: opens the store itself and runs the
 * jobs it is sent (the backtest, preparing every zone), replying with each result whole. It is
 * terminated to cancel.
 */

const { databaseUrl } = workerData as { databaseUrl: string };
const store = createStore(databaseUrl);
const port = parentPort!;
const carried: CarriedFitsByForecast = new Map();

port.on('message', (job: ForecastJob) => void run(job));

async function run(job: ForecastJob): Promise<void> {
  let reply: ForecastJobReply;
  try {
    const opened = await store;
    const result =
      job.type === 'backtest'
        ? await runBacktest(opened, job.nowSeconds)
        : await prepareZones(opened, job.nowTs, job.backtests, carried);
    reply = { type: 'done', id: job.id, result };
  } catch (error) {
    reply = { type: 'failed', id: job.id, message: String(error) };
  }
  port.postMessage(reply);
}
