import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inThreadCompute } from '../src/forecast/compute.js';
import { forecastCompute, WorkerCompute } from '../src/forecast/worker-compute.js';
import { type ZoneTask, ZoneWorkers } from '../src/forecast/zone-workers.js';
import { type Resumption, runBacktest } from '../src/forecast/run-backtest.js';
import { statesOf } from '../src/forecast/backtest-state-bytes.js';
import { backtestZone, issueTimes, zoneInputsData } from '../src/core/forecast/backtest.js';
import type { FallBackReason, ZoneBacktestState } from '../src/core/forecast/backtest-state.js';
import { CANDIDATE_MODELS } from '../src/core/forecast/models.js';
import { ZoneState } from '../src/core/forecast/zone-state.js';
import { DAY, START, windyZone } from './support/forecast-zones.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { fillFixedStore, NOW_S } from './support/fixed-store.js';

/**
 * The forecast engine's work in a worker process (issue 21; a process at a lower CPU priority
 * since issue 38): the same results as on the serving thread, handed back whole; cancelled by
 * stopping; and a worker again for the next job. Runs the TypeScript sources through tsx's
 * loader in the worker, as the built `.js` runs without.
 */

/**
 * The zone workers a forecast worker started, from Linux's /proc: its children that run
 * zone-worker (not, say, the esbuild service tsx starts to compile the sources).
 */
function zoneWorkersOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        // After the parenthesised command name: the state, then the parent's id.
        const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return (
          parent === pid && readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('zone-worker')
        );
      } catch {
        return false; // exited meanwhile
      }
    })
    .map(Number);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'gridco2-forecast-worker-'));
const file = join(dir, 'fixed.db');
/** The same values again: where the worker stores its backtest beside the serving thread's. */
const twinFile = join(dir, 'twin.db');
let store: SqliteStore;
let twin: SqliteStore;

beforeAll(async () => {
  store = new SqliteStore(file);
  twin = new SqliteStore(twinFile);
  await fillFixedStore(store);
  await fillFixedStore(twin);
});
afterAll(async () => {
  await store?.close();
  await twin?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('forecast work in a worker process', () => {
  it(
    'backtests and prepares every zone exactly as the serving thread does',
    // Two backtests in a row, all CPU: 30 s alone on two cores; the worker's at a nice value 10
    // above the test's, which on a busy machine waits behind everything else.
    { timeout: 900_000 },
    async () => {
      const signal = new AbortController().signal;
      const here = inThreadCompute(store);
      const worker = new WorkerCompute(`sqlite:${twinFile}`, 10);
      try {
        const [localRun, workerRun] = [
          await here.backtest(NOW_S, signal),
          await worker.backtest(NOW_S, signal),
        ];
        // The run the same, each stored where it ran with the state the next one resumes from,
        // the same once decoded: on more than one core the zone-bases' states cross from zone
        // workers by structured clone, after which V8 may encode a number another way (a double
        // 3 as an integer), not another value.
        expect(workerRun).toEqual(localRun);
        expect(await twin.newestBacktest()).toEqual(await store.newestBacktest());
        expect((await store.newestBacktest())?.createdAt).toBe(NOW_S);
        const states = statesOf(await store.newestBacktestStates());
        expect(statesOf(await twin.newestBacktestStates())).toEqual(states);
        expect(states.size).toBeGreaterThan(0);
        expect(workerRun.run.zones.some((zone) => zone.issues > 0)).toBe(true);
        const local = await here.prepare(NOW_S, localRun.run.zones, signal);
        const remote = await worker.prepare(NOW_S, workerRun.run.zones, signal);
        expect(remote).toEqual(local);
        expect(remote.forecasts.filter(([, forecast]) => forecast !== null).length).toBeGreaterThan(
          0,
        );
        // Float64Arrays cross the process boundary as Float64Arrays.
        const forecast = remote.forecasts.find(([, prepared]) => prepared)![1]!;
        expect(forecast.values).toBeInstanceOf(Float64Array);
      } finally {
        await worker.close();
      }
    },
  );

  it(
    'cancels a job under way on stop, and starts a new worker for the next one, below the server in CPU priority',
    { timeout: 120_000 },
    async () => {
      const worker = new WorkerCompute(`sqlite:${file}`, 10);
      try {
        const stopping = new AbortController();
        const running = worker.backtest(NOW_S, stopping.signal);
        stopping.abort();
        await expect(running).rejects.toThrow('forecast worker stopped');
        await expect(worker.backtest(NOW_S, stopping.signal)).rejects.toThrow('stopped');
        const fresh = new AbortController().signal;
        const prepared = await worker.prepare(NOW_S, [], fresh);
        expect(prepared.failures).toEqual([]);
        expect(prepared.forecasts.length).toBeGreaterThan(45);
        expect(getPriority(worker.pid!)).toBe(Math.min(19, getPriority() + 10));
      } finally {
        await worker.close();
      }
    },
  );

  it(
    'leaves no zone worker running once stopped during a backtest',
    { timeout: 120_000 },
    async () => {
      const worker = new WorkerCompute(`sqlite:${file}`, 10);
      const cancelled = expect(
        worker.backtest(NOW_S, new AbortController().signal),
      ).rejects.toThrow('forecast worker stopped');
      // Where there is more than one core, the backtest's zone-bases go to zone workers.
      const expected = availableParallelism() > 1 ? 1 : 0;
      let zoneWorkers: number[] = [];
      try {
        while (zoneWorkers.length < expected) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          zoneWorkers = zoneWorkersOf(worker.pid!);
        }
      } finally {
        await worker.close();
      }
      await cancelled;
      expect(zoneWorkers.filter(isRunning)).toEqual([]);
    },
  );

  it(
    'backtests zone-bases in processes side by side to what one process gives, in the order asked; a failed one fails alone',
    { timeout: 300_000 },
    async () => {
      const zones = [40, 80, 120].map((error) => windyZone(error).inputs);
      const times = issueTimes(START + 14 * DAY, START + 30 * DAY);
      const ids = CANDIDATE_MODELS.map(({ id }) => id);
      const here = zones.map((inputs) => {
        let kept: ZoneBacktestState | undefined;
        let fellBack: FallBackReason | null | undefined;
        const result = backtestZone('DE', 'lifecycle', new ZoneState(inputs), {
          issueTimes: times,
          candidates: CANDIDATE_MODELS,
          keep: (state) => (kept = state),
          onResumption: (reason) => (fellBack = reason),
        });
        return { result, kept, fellBack };
      });
      const workers = new ZoneWorkers(2);
      try {
        const task = (inputs: (typeof zones)[number], candidateIds = ids) => ({
          zone: 'DE',
          basis: 'lifecycle' as const,
          inputs: zoneInputsData(inputs),
          issueTimes: times,
          candidateIds,
          keep: true,
        });
        const failing = expect(workers.run(task(zones[0]!, ['no-such-model@1']))).rejects.toThrow(
          'unknown model no-such-model@1',
        );
        const results = await Promise.all(zones.map((inputs) => workers.run(task(inputs))));
        await failing;
        expect(results).toEqual(here);
      } finally {
        await workers.close();
      }
      await expect(workers.run({} as never)).rejects.toThrow('zone workers stopped');
    },
  );

  it(
    'reruns on this thread the zone-bases that resume, in the zone workers those from their first issue; the run as one from scratch',
    { timeout: 300_000 },
    async () => {
      /** Zone workers that note which zone-bases they were sent. */
      class NotingWorkers extends ZoneWorkers {
        readonly sent: string[] = [];
        override run(task: Omit<ZoneTask, 'id'>) {
          this.sent.push(`${task.zone}|${task.basis}`);
          return super.run(task);
        }
      }
      const window = { zones: ['DE'] };
      const backtest = async (
        nowSeconds: number,
        previous: ReadonlyMap<string, ZoneBacktestState>,
        workers?: ZoneWorkers,
      ) => {
        const states = {
          previous,
          kept: [] as ZoneBacktestState[],
          resumption: { resumed: 0, fellBack: {} } as Resumption,
        };
        const run = await runBacktest(
          store,
          nowSeconds,
          window,
          undefined,
          undefined,
          states,
          workers,
        );
        return { run, ...states };
      };
      const yesterday = await backtest(NOW_S - DAY, new Map());
      // DE's direct basis without its state: it runs from its first issue.
      const previous = new Map(
        yesterday.kept
          .filter(({ basis }) => basis !== 'direct')
          .map((state) => [`${state.zone}|${state.basis}`, state]),
      );
      const workers = new NotingWorkers(2);
      try {
        const today = await backtest(NOW_S, previous, workers);
        expect(today.resumption).toEqual({ resumed: 1, fellBack: { 'no state': ['DE|direct'] } });
        expect(workers.sent).toEqual(['DE|direct']);
        const fromScratch = await backtest(NOW_S, new Map());
        expect(today.run).toEqual(fromScratch.run);
        expect(today.run.zones.every(({ issues }) => issues > 0)).toBe(true);
        expect(today.kept.map(({ zone, basis }) => `${zone}|${basis}`)).toEqual([
          'DE|lifecycle',
          'DE|direct',
        ]);
      } finally {
        await workers.close();
      }
    },
  );

  it('fails a job with the worker error, not a hang, when the store cannot be opened', async () => {
    const worker = new WorkerCompute(`sqlite:${join(file, 'none.db')}`, 10);
    try {
      await expect(worker.prepare(NOW_S, [], new AbortController().signal)).rejects.toThrow();
    } finally {
      await worker.close();
    }
  });

  it('keeps an in-memory store on the serving thread, where it lives', () => {
    expect(forecastCompute(store, 'sqlite::memory:', 10)).not.toBeInstanceOf(WorkerCompute);
    expect(forecastCompute(store, `sqlite:${file}`, 10)).toBeInstanceOf(WorkerCompute);
    expect(forecastCompute(store, 'postgres://postgres@127.0.0.1/x', 10)).toBeInstanceOf(
      WorkerCompute,
    );
  });
});
