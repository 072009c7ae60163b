/**
 * `latest` and `/v1/health` while gridco2 runs its walk-forward backtest (issue 21): on a copy of
 * the bench store without any stored backtest, a fresh gridco2 starts one at once (the daily
 * run); rounds of `/v1/intensity/latest` then alternate with the bare server replaying the same
 * bytes, as the steady-state scenarios do, until the backtest's `forecasts: backtest done` line.
 * Each round says whether the backtest was still running when it ended. Then, once it has ended,
 * as many rounds again on the same two processes: the ratio gridco2 keeps without a backtest in
 * the same minutes, so that what the backtest costs serving is told apart from what serving costs
 * anyway (the machine's speed drifts by a fifth within minutes, and a ratio from another run says
 * little).
 */
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { runLoad, type LoadGenerator, type LoadResult } from './load.js';
import { waitForLine } from './processes.js';
import { median } from './report.js';
import { startBaseline, startGridco2 } from './servers.js';

interface DuringBacktestRound {
  readonly gridco2: LoadResult;
  readonly baseline: LoadResult;
  readonly health: LoadResult;
  /** Whether the backtest was still running when the round's last load ended. */
  readonly backtestRunning: boolean;
  /** A round begun after the backtest had ended: the same processes' steady state. */
  readonly after: boolean;
}

export interface DuringBacktestResult {
  readonly store: string;
  readonly path: string;
  readonly rounds: readonly DuringBacktestRound[];
  /** From gridco2's first answer to `forecasts: backtest done`; null if it did not come. */
  readonly backtestSeconds: number | null;
}

const LATEST_PATH = '/v1/intensity/latest';

/** How long the rounds after the backtest wait for it to end, at most. */
const BACKTEST_END_WAIT_MS = 10 * 60_000;

/**
 * A bound on `measureDuringBacktest`, in seconds: the store's copy, both servers' start and
 * gridco2's cache load, the wait for the backtest's end, then three loads a round (each a few
 * seconds more than its duration), at most `maxRounds` during the backtest and as many after.
 */
export const duringBacktestSeconds = (maxRounds: number, durationSeconds: number): number =>
  150 + BACKTEST_END_WAIT_MS / 1000 + 2 * maxRounds * 3 * (durationSeconds + 4);

export async function measureDuringBacktest(options: {
  readonly repoDir: string;
  readonly label: string;
  readonly databaseUrl: string;
  readonly scratchDir: string;
  /** The captures of the steady-state run of the same store: the baseline replays them. */
  readonly capturesFile: string;
  readonly generator: LoadGenerator;
  readonly durationSeconds: number;
  /**
   * At most this many rounds while the backtest runs (fewer when it ends first), then as many as
   * were measured during it once it has ended.
   */
  readonly maxRounds: number;
  readonly log: (message: string) => void;
}): Promise<DuringBacktestResult> {
  const { repoDir, label, scratchDir, generator, durationSeconds, log } = options;
  const source = options.databaseUrl.replace(/^sqlite:/, '');
  const copy = join(scratchDir, 'during-backtest.db');
  copyFileSync(source, copy);
  if (existsSync(`${source}-wal`)) copyFileSync(`${source}-wal`, `${copy}-wal`);
  // No stored backtest: the server runs one as soon as it starts.
  const db = new Database(copy);
  db.prepare('DELETE FROM backtests').run();
  db.close();
  const baseline = await startBaseline(repoDir, options.capturesFile);
  const gridco2 = await startGridco2(repoDir, `sqlite:${copy}`);
  const started = performance.now();
  let backtestSeconds: number | null = null;
  const done = waitForLine(
    gridco2.child,
    (line) => (line.includes('"forecasts: backtest done"') ? true : undefined),
    30 * 60_000,
  );
  // Rejected when gridco2 stops first: the backtest then did not end during the rounds.
  done.then(
    () => (backtestSeconds = (performance.now() - started) / 1000),
    () => undefined,
  );
  try {
    await gridco2.cacheLoaded;
    const rounds: DuringBacktestRound[] = [];
    // `index` alternates which server goes first.
    const measureRound = async (index: number, after: boolean) => {
      const load = (url: string) => runLoad(generator, url, durationSeconds);
      const order =
        index % 2 === 0 ? (['gridco2', 'baseline'] as const) : (['baseline', 'gridco2'] as const);
      const results: Partial<Record<'gridco2' | 'baseline', LoadResult>> = {};
      for (const server of order) {
        results[server] = await load(
          (server === 'gridco2' ? gridco2.url : baseline.url) + LATEST_PATH,
        );
      }
      const health = await load(`${gridco2.url}/v1/health`);
      rounds.push({
        gridco2: results.gridco2!,
        baseline: results.baseline!,
        health,
        backtestRunning: backtestSeconds === null,
        after,
      });
      log(
        `${label}: ${after ? 'after' : 'during'} the backtest, latest ` +
          `${results.gridco2!.requestsPerSecond.toFixed(0)} req/s vs baseline ` +
          `${results.baseline!.requestsPerSecond.toFixed(0)}, health p99 ${health.p99Ms.toFixed(1)} ms` +
          `${!after && backtestSeconds !== null ? ' (backtest ended)' : ''}`,
      );
    };
    while (rounds.length < options.maxRounds && backtestSeconds === null) {
      await measureRound(rounds.length, false);
    }
    const roundsDuring = rounds.length;
    if (backtestSeconds === null) {
      log(`${label}: waiting for the backtest to end, then as many rounds without it`);
      await Promise.race([
        done.catch(() => undefined),
        delay(BACKTEST_END_WAIT_MS, undefined, { ref: false }),
      ]);
    }
    if (backtestSeconds !== null) {
      while (rounds.length < 2 * roundsDuring) await measureRound(rounds.length, true);
    }
    return { store: label, path: LATEST_PATH, rounds, backtestSeconds };
  } finally {
    await gridco2.stop();
    await baseline.stop();
    rmSync(copy, { force: true });
    rmSync(`${copy}-wal`, { force: true });
    rmSync(`${copy}-shm`, { force: true });
  }
}

export function renderDuringBacktest(result: DuringBacktestResult): string {
  const ratio = (round: DuringBacktestRound) =>
    round.gridco2.requestsPerSecond / round.baseline.requestsPerSecond;
  const medianOf = (after: boolean) => {
    const ratios = result.rounds.filter((round) => round.after === after).map(ratio);
    return ratios.length === 0
      ? 'no round'
      : `**${median(ratios).toFixed(2)}** (median of ${ratios.length})`;
  };
  const lines = [
    `## \`latest\` while the backtest runs (${result.store})`,
    '',
    'A fresh gridco2 on a copy of the store without a stored backtest runs one at start-up ' +
      '(in its forecast worker process, at a lower CPU priority); rounds of `' +
      result.path +
      '` alternate with the bare server until it ends, then as many rounds on the same two ' +
      'processes after it: what serving costs anyway in the same minutes. Target (issue 38): ' +
      'at least 0.8x while it runs, `/v1/health` p99 under 50 ms.',
    '',
    `Backtest: ${result.backtestSeconds === null ? 'still running when the rounds ended' : `done ${result.backtestSeconds.toFixed(1)} s after start-up`}.`,
    '',
    `gridco2/baseline while the backtest ran: ${medianOf(false)}; after it ended: ${medianOf(true)}.`,
    '',
    '| Round | gridco2 req/s | baseline req/s | ratio | gridco2 p99 ms | health p99 ms | backtest running at the end |',
    '| ----- | ------------- | -------------- | ----- | -------------- | ------------- | --------------------------- |',
    ...result.rounds.map(
      (round, index) =>
        `| ${index + 1} | ${round.gridco2.requestsPerSecond.toFixed(0)} | ` +
        `${round.baseline.requestsPerSecond.toFixed(0)} | ${ratio(round).toFixed(2)} | ` +
        `${round.gridco2.p99Ms.toFixed(1)} | ${round.health.p99Ms.toFixed(1)} | ` +
        `${round.backtestRunning ? 'yes' : round.after ? 'no (a round after it)' : 'no'} |`,
    ),
  ];
  if (result.rounds.length === 0)
    lines.push('', 'No round: the backtest ended before the cache was loaded.');
  return lines.join('\n');
}
