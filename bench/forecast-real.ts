/**
 * The forecasts measured on real grids (issue 19): the eighteen months of real hourly history in
 * bench/real-history (README.md there: provenance) are replayed through the upstreams' own
 * formats on 127.0.0.1 (bench/real-history/replay.ts), fed to `gridco2 backfill` into a throwaway
 * SQLite store, scored by `gridco2 backtest`, and the stored run is printed as the per-zone,
 * per-bucket table docs/forecast.md reports.
 *
 * `npm run bench:forecast` (tsx; no build needed). Options: `--zone Z` (repeatable) to score a
 * few zones; `--keep DIR` to leave the store in DIR; `--history DIR` to replay other files of the
 * same format (`<zone>.csv` or `.csv.gz`: other months, other zones), scored over their own span.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ZoneBacktest } from '../src/core/forecast/backtest.js';
import { findZone } from '../src/core/zones.js';
import { type CarriedFitsByForecast, prepareZones } from '../src/forecast/compute.js';
import { realHistoryTable } from '../src/forecast/report.js';
import { createStore } from '../src/storage/create-store.js';
import { loadRealHistory, type ZoneHistory } from './real-history/history.js';
import { startReplay } from './real-history/replay.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const HOUR = 3600;
const DAY = 24 * HOUR;

/**
 * What the files span together: from the UTC day of the first hour of any to the end of the last
 * hour of any (the shipped files: 2020-01-01T00Z to 2021-07-01T00Z), and the last issue whose 72
 * hours are all inside (2021-06-27T23Z). Each zone's issues start 14 days after its own first hour.
 */
function spanOf(histories: readonly ZoneHistory[]) {
  const first = Math.min(...histories.map(({ hours }) => hours[0]!));
  const end = Math.max(...histories.map(({ hours }) => hours.at(-1)!)) + HOUR;
  const iso = (ts: number) => new Date(ts * 1000).toISOString().slice(0, 16) + 'Z';
  return {
    from: iso(Math.floor(first / DAY) * DAY),
    to: iso(end),
    lastIssue: iso(end - 73 * HOUR),
  };
}

function gridco2(args: readonly string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(REPO, 'src/cli/main.ts'), ...args],
      { cwd: REPO, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`gridco2 ${args.join(' ')} exited ${code}:\n${err.slice(-2000)}`)),
    );
  });
}

/** Runs `work` on the items, two at a time. */
async function twoAtATime<T>(items: readonly T[], work: (item: T) => Promise<unknown>) {
  const queue = [...items];
  await Promise.all(
    [0, 1].map(async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) await work(next);
    }),
  );
}

/**
 * Serve's preparation of every forecast, as its worker runs it whenever data arrives: CPU time
 * of the first in an hour (fitting the departure regression) and of one later in that hour on
 * the same values (its fits carried over), issued just after the last backtest issue, after one
 * an hour before.
 */
async function measurePreparation(
  path: string,
  backtests: readonly ZoneBacktest[],
  lastIssue: string,
  log: (text: string) => void,
): Promise<void> {
  const store = await createStore(`sqlite:${path}`);
  try {
    const issueTs = Date.parse(lastIssue) / 1000 + 600;
    const carried: CarriedFitsByForecast = new Map();
    const cpuSeconds = async (nowTs: number) => {
      const before = process.cpuUsage();
      const { forecasts, failures } = await prepareZones(store, nowTs, backtests, carried);
      if (failures.length > 0) throw new Error(`preparation failed: ${failures[0]!.message}`);
      const { user, system } = process.cpuUsage(before);
      return { seconds: (user + system) / 1e6, count: forecasts.filter(([, f]) => f).length };
    };
    const fitCounts = () =>
      [...carried.values()].reduce(
        (sum, fits) => ({ made: sum.made + fits.made, reused: sum.reused + fits.reused }),
        { made: 0, reused: 0 },
      );
    // An hour before, once: the code and the store's pages warm, as in a running server.
    await cpuSeconds(issueTs - 3600);
    const warm = fitCounts();
    const first = await cpuSeconds(issueTs);
    const afterFirst = fitCounts();
    const again = await cpuSeconds(issueTs + 1200);
    const afterAgain = fitCounts();
    log(
      `serve's preparation of ${first.count} forecasts: ${first.seconds.toFixed(2)} s of CPU ` +
        `the first time in an hour (${afterFirst.made - warm.made} fits made), ${again.seconds.toFixed(2)} s ` +
        `again in that hour (${afterAgain.reused - afterFirst.reused} reused, ` +
        `${afterAgain.made - afterFirst.made} made; ratio ${(again.seconds / first.seconds).toFixed(2)})`,
    );
  } finally {
    await store.close();
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const onlyZones = args.flatMap((arg, i) => (arg === '--zone' ? [args[i + 1]!] : []));
  const keepIndex = args.indexOf('--keep');
  const historyIndex = args.indexOf('--history');
  const historyArg = historyIndex >= 0 ? args[historyIndex + 1] : undefined;
  if (historyIndex >= 0 && (!historyArg || historyArg.startsWith('--'))) {
    throw new Error('--history needs a folder of <zone>.csv or <zone>.csv.gz files');
  }
  // npm runs the script from the package's folder; a relative folder is the caller's.
  const historyDir = historyArg && resolve(process.env.INIT_CWD ?? process.cwd(), historyArg);
  const started = Date.now();
  const histories = loadRealHistory(historyDir).filter(
    ({ zone }) => onlyZones.length === 0 || onlyZones.includes(zone),
  );
  if (histories.length === 0) {
    throw new Error(`no zone of ${historyDir ?? 'bench/real-history'} selected`);
  }
  for (const { zone, hours } of histories) {
    const source = findZone(zone)?.source;
    if (source !== 'europe-tso' && source !== 'us-agency') {
      throw new Error(
        `${zone}: only ENTSO-E and EIA zones can be replayed (files named by zone code)`,
      );
    }
    if (hours.length === 0) throw new Error(`${zone}: the file has no hours`);
  }
  const { from, to, lastIssue } = spanOf(histories);
  const replay = await startReplay(histories);
  const dir = keepIndex >= 0 ? args[keepIndex + 1]! : mkdtempSync(join(tmpdir(), 'gridco2-real-'));
  const env = {
    DATABASE_URL: `sqlite:${join(dir, 'real.db')}`,
    ENTSOE_BASE_URL: replay.baseUrls['europe-tso'],
    ENTSOE_TOKEN: 'replay',
    EIA_BASE_URL: replay.baseUrls['us-agency'],
    EIA_API_KEY: 'replay',
    // The real history holds the zones' generation only: no border flows, no neighbours to fetch.
    FLOWS: 'off',
    LOG_LEVEL: 'warn',
  };
  const log = (text: string) =>
    process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0)} s] ${text}\n`);
  try {
    const zones = histories.map(({ zone }) => findZone(zone)!);
    const window = ['--from', from, '--to', to];
    // One backfill per European zone (ENTSO-E is asked zone by zone) and one for the US zones
    // (EIA pages every respondent at once, the longest run: it goes first), two at a time: the
    // machine has two cores.
    const backfills = [
      ...(zones.some((zone) => zone.source === 'us-agency')
        ? [['backfill', '--source', 'us-agency', ...window]]
        : []),
      ...zones
        .filter((zone) => zone.source === 'europe-tso')
        .map((zone) => ['backfill', '--source', 'europe-tso', '--zone', zone.code, ...window]),
    ];
    log(`backfill: ${backfills.length} runs of gridco2 backfill against the replay`);
    // The store is created (and migrated) once before two writers share it.
    await (await createStore(env.DATABASE_URL)).close();
    await twoAtATime(backfills, (args) => gridco2(args, env));
    log(`backfill done (${replay.requests()} upstream requests)`);
    // The backtest, on the lifecycle basis (each zone's default): its zone-bases in one process
    // per core, costliest first.
    await gridco2(
      [
        'backtest',
        ...zones.flatMap((zone) => ['--zone', zone.code]),
        '--basis',
        'lifecycle',
        '--from',
        from,
        '--to',
        lastIssue,
      ],
      env,
    );
    log('backtest done');
    const store = await createStore(env.DATABASE_URL);
    const run = await store.newestBacktest().finally(() => store.close());
    if (!run) throw new Error('gridco2 backtest stored nothing');
    const results = [...run.zones];
    const order = new Map(zones.map((zone, i) => [zone.code, i]));
    results.sort((a, b) => order.get(a.zone)! - order.get(b.zone)!);
    process.stdout.write(`${realHistoryTable({ createdAt: run.createdAt, zones: results })}\n`);
    await measurePreparation(join(dir, 'real.db'), results, lastIssue, log);
    log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    await replay.close();
    if (keepIndex < 0) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : error}\n`);
  process.exitCode = 1;
});
