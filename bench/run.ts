/**
 * `npm run bench`: gridco2 against a bare node:http server sending the same bytes, scenario by
 * scenario, on a 50k-point and a 3.2M-point store. See bench/README.md.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  buildSqliteStore,
  createBenchDatabase,
  fillPostgres,
  type BuiltStore,
} from './build-store.js';
import {
  backtestDailySeconds,
  type BacktestDailyResult,
  measureBacktestDaily,
  renderBacktestDaily,
} from './backtest-daily.js';
import { captureResponse, verifyReplay, type CapturedResponse } from './capture.js';
import { LARGE_STORE, SMALL_STORE, type StoreSpec } from './dataset.js';
import { defencesPlan, defencesSeconds, measureDefences, type DefencesResult } from './defences.js';
import {
  consumptionDays,
  consumptionSeconds,
  measureConsumption,
  renderConsumption,
  type ConsumptionResult,
} from './consumption.js';
import {
  demoStartSeconds,
  measureDemoStart,
  renderDemoStart,
  type DemoStartResult,
} from './demo-start.js';
import {
  exportSlotsSeconds,
  measureExportSlots,
  renderExportSlots,
  type ExportSlotsResult,
} from './export-slots.js';
import {
  forecastsSeconds,
  measureForecasts,
  renderForecasts,
  type ForecastsResult,
} from './forecasts.js';
import {
  CONNECTIONS,
  detectLoadGenerator,
  runLoad,
  type LoadGenerator,
  type LoadResult,
} from './load.js';
import { hasExited, killAll, pinning } from './processes.js';
import {
  median,
  renderHead,
  renderReport,
  type RunInfo,
  type ScenarioResult,
  type StoreResult,
} from './report.js';
import { measureRecompute, recomputeSeconds, type RecomputeRun } from './recompute.js';
import {
  measureStreamsAndExport,
  renderStreamsExport,
  streamsExportPlan,
  type StreamsExportResult,
} from './streams-export.js';
import {
  measureRedisPartition,
  partitionPlan,
  partitionSeconds,
  renderRedisPartition,
  type PartitionResult,
} from './redis-partition.js';
import { defaultZoneWorkers } from '../src/forecast/zone-workers.js';
import { SCENARIOS, type Scenario } from './scenarios.js';
import {
  duringBacktestSeconds,
  measureDuringBacktest,
  renderDuringBacktest,
  type DuringBacktestResult,
} from './during-backtest.js';
import {
  heaviestRequestsPlan,
  heaviestRequestsSeconds,
  measureHeaviestRequests,
  renderHeaviestRequests,
  type HeaviestRequestsResult,
} from './heaviest-requests.js';
import {
  bodiesEncoded,
  forecastsSettled,
  peakResidentMiB,
  residentMiB,
  startBaseline,
  startGridco2,
  waitUntilIdle,
  type Gridco2,
  type RunningProcess,
} from './servers.js';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const REPO_DIR = dirname(BENCH_DIR);

/**
 * The sections `--only` runs alone, each with just what it needs of a full run: those that depend
 * on no other section's measurement, or only on what can be redone without measuring.
 */
const SECTIONS = ['during-backtest', 'backtest-daily'] as const;
type Section = (typeof SECTIONS)[number];

interface Options {
  readonly quick: boolean;
  readonly postgres: boolean;
  readonly rounds: number;
  readonly duration: number;
  readonly only: Section | undefined;
}

const positiveInteger = (text: string): number => {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 1000) {
    throw new InvalidArgumentError('a whole number from 1 to 1000');
  }
  return value;
};

function parseOptions(): Options {
  const program = new Command()
    .name('bench')
    .description('gridco2 against a bare node:http baseline sending the same bytes.')
    .option('--quick', '50k store only, 1 round of 1 s per scenario: proves the harness works')
    .option('--postgres', 'also measure on a throwaway PostgreSQL database on 127.0.0.1:5432')
    .option(
      '--rounds <n>',
      'measured rounds per scenario and server (default 3, quick 1)',
      positiveInteger,
    )
    .option('--duration <seconds>', 'length of one round (default 5, quick 1)', positiveInteger)
    .addOption(
      new Option(
        '--only <section>',
        'run one section alone, on the store a full run gives it; reported as such, ' +
          'results/latest.md kept',
      )
        .choices(SECTIONS)
        .conflicts('postgres'),
    )
    .showHelpAfterError()
    .parse();
  const given = program.opts<{
    quick?: boolean;
    postgres?: boolean;
    rounds?: number;
    duration?: number;
    only?: Section;
  }>();
  const quick = given.quick === true;
  if (quick && given.only === 'backtest-daily') {
    // Its 240-day demo store takes minutes to fill: the quick run leaves it out.
    program.error("error: option '--only backtest-daily' has no quick form");
  }
  return {
    quick,
    postgres: given.postgres === true,
    rounds: given.rounds ?? (quick ? 1 : 3),
    duration: given.duration ?? (quick ? 1 : 5),
    only: given.only,
  };
}

/** The rounds of `latest` during the backtest, at most: the same in a full run and alone. */
const duringBacktestRounds = (options: Options): number => (options.quick ? 2 : 2 * options.rounds);

/** Work that must happen even when the bench is interrupted: dropping a database, temp files. */
const emergencyCleanups = new Set<() => Promise<unknown>>();

let aborting = false;

async function abort(reason: string, exitCode: number): Promise<void> {
  // Killing the children makes the pending steps fail too: only the first reason counts.
  if (aborting) return;
  aborting = true;
  console.error(`bench: ${reason}; stopping every process it started`);
  await killAll();
  const cleanups = [...emergencyCleanups].map((cleanup) => cleanup().catch(() => {}));
  await Promise.race([
    Promise.all(cleanups),
    new Promise((resolve) => setTimeout(resolve, 10_000)),
  ]);
  process.exit(exitCode);
}

const log = (message: string) => console.error(`bench: ${message}`);
/** The longest wait for gridco2's start-up forecast work (a fresh store's first backtest). */
const FORECASTS_SETTLE_MS = 300_000;

/**
 * A bound on the whole run, from what it is about to do, with room for slow store builds.
 * `sqliteStores` also get the defences run; the largest of them the recompute timing.
 */
function timeLimitSeconds(options: Options, stores: number, sqliteStores: number): number {
  const warmup = options.quick ? 0 : 2;
  // Each run also waits for idle servers and starts a load generator: a few seconds at most.
  const perServerAndScenario = warmup + options.rounds * (options.duration + 4);
  const fullRun =
    stores * SCENARIOS.length * 2 * perServerAndScenario +
    stores * (60 + FORECASTS_SETTLE_MS / 1000) +
    sqliteStores * defencesSeconds(options.quick) +
    recomputeSeconds(options.quick) +
    heaviestRequestsSeconds(options.quick) +
    exportSlotsSeconds +
    partitionSeconds(options.quick) +
    // Streams, export and delivery on the largest store: about 15 s quick, 40 s full.
    (options.quick ? 60 : 180) +
    // Forecasts and the scheduler on a store of their own: about 10 s quick, 60 s full.
    forecastsSeconds(options.rounds, options.duration, warmup) +
    demoStartSeconds +
    consumptionSeconds(options.quick) +
    (options.quick ? 0 : backtestDailySeconds);
  const measuring =
    options.only === 'during-backtest'
      ? // Its store's captures: gridco2 started with its cache loaded (a minute at most), the
        // requests, the baseline started (30 s at most) and checked; then the section itself.
        150 + duringBacktestSeconds(duringBacktestRounds(options), options.duration)
      : options.only === 'backtest-daily'
        ? backtestDailySeconds
        : fullRun;
  return options.quick ? measuring + 60 : 2 * measuring + 1200;
}

/** Reasons the figures may not describe the code in src/, stated in the report. */
function provenance(): { commit: string; warnings: string[] } {
  const git = (...args: string[]) =>
    (
      spawnSync('git', args, { cwd: REPO_DIR, encoding: 'utf8', timeout: 10_000 }).stdout ?? ''
    ).trim();
  const commit = git('rev-parse', '--short', 'HEAD') || 'unknown';
  const warnings: string[] = [];
  if (git('status', '--porcelain', '--', 'src', 'bin') !== '') {
    warnings.push(`uncommitted changes in src/ or bin/ on top of ${commit}`);
  }
  const built = join(REPO_DIR, 'dist/cli/main.js');
  let builtAt: number;
  try {
    builtAt = statSync(built).mtimeMs;
  } catch {
    throw new Error('dist/ is missing: run `npm run build` first (bin/gridco2.js serves dist/)');
  }
  const sourceDir = join(REPO_DIR, 'src');
  const newer = readdirSync(sourceDir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
    .filter((file) => statSync(join(sourceDir, file)).mtimeMs > builtAt);
  if (newer.length > 0) {
    warnings.push(
      `dist/ is older than ${newer.length} file(s) in src/ (${newer.slice(0, 3).join(', ')}): ` +
        'gridco2 was measured as last built (`npm run build`)',
    );
  }
  return { commit, warnings };
}

/**
 * Each scenario's response, captured, checked against what the scenario expects, then asked a
 * second time: the same bytes must come back, and bodies admitted to gridco2's body cache only on
 * their second request (windows, mixes) are kept before any round, quick runs included.
 */
async function captureScenarios(gridco2: Gridco2): Promise<CapturedResponse[]> {
  const agent = new http.Agent({ keepAlive: true });
  try {
    const captures: CapturedResponse[] = [];
    for (const scenario of SCENARIOS) {
      const captured = await captureResponse(gridco2.url, scenario.path, agent);
      const body = JSON.parse(Buffer.from(captured.bodyBase64, 'base64').toString('utf8'));
      if (!scenario.holds(body)) {
        throw new Error(`${scenario.path}: expected ${scenario.expected} from the bench store`);
      }
      const again = await captureResponse(gridco2.url, scenario.path, agent);
      if (again.bodyBase64 !== captured.bodyBase64) {
        throw new Error(`${scenario.path}: gridco2 sent a different body the second time`);
      }
      captures.push(captured);
    }
    return captures;
  } finally {
    agent.destroy();
  }
}

type Server = 'gridco2' | 'baseline';

async function measureScenario(
  urls: Record<Server, string>,
  load: (url: string, seconds: number) => Promise<LoadResult>,
  options: Options,
  beforeRounds: () => Promise<void>,
): Promise<Record<Server, LoadResult[]>> {
  if (!options.quick) {
    // JIT, caches and connection pools warm up before anything counts.
    await load(urls.gridco2, 2);
    await load(urls.baseline, 2);
  }
  await beforeRounds();
  const rounds: Record<Server, LoadResult[]> = { gridco2: [], baseline: [] };
  for (let round = 0; round < options.rounds; round++) {
    // Alternate who goes first, so that a drift over time favours neither server.
    const order: Server[] = round % 2 === 0 ? ['gridco2', 'baseline'] : ['baseline', 'gridco2'];
    for (const server of order) rounds[server].push(await load(urls[server], options.duration));
  }
  return rounds;
}

/**
 * One load run, started on a quiet core (the previous server may still be draining its backlog).
 * Fails when a server died, saying which and what it wrote last: wrk reports a run against a
 * dead server as 0 req/s, not as a failure.
 */
async function loadCheckingServers(
  generator: LoadGenerator,
  servers: Record<Server, RunningProcess>,
  url: string,
  seconds: number,
): Promise<LoadResult> {
  await waitUntilIdle(Object.values(servers).map((server) => server.child.pid!));
  const outcome = await runLoad(generator, url, seconds).then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
  for (const [name, server] of Object.entries(servers)) {
    if (!hasExited(server.child)) continue;
    const { exitCode, signalCode } = server.child;
    throw new Error(
      `${name} exited (${signalCode ?? `code ${exitCode}`}) during ${url}; ` +
        `its output ends with:\n${server.output()}`,
    );
  }
  if ('error' in outcome) throw outcome.error;
  return outcome.result;
}

/** Where the responses captured on a store are kept for the baseline to replay. */
const capturesFileOf = (scratchDir: string, label: string) =>
  join(scratchDir, `captures-${label.replace(/\W+/g, '-')}.json`);

/**
 * gridco2 on a store against the baseline replaying its captures, scenario by scenario. Every
 * scenario is captured and checked, and the replay verified; only those of `measured` get rounds
 * (`--only`: none, for the captures file the during-backtest section replays).
 */
async function measureStore(
  label: string,
  built: BuiltStore,
  options: Options,
  generator: LoadGenerator,
  scratchDir: string,
  measured: readonly Scenario[] = SCENARIOS,
): Promise<StoreResult> {
  log(`${label}: starting gridco2`);
  const gridco2 = await startGridco2(REPO_DIR, built.databaseUrl);
  try {
    log(`${label}: first answer after ${gridco2.startupMs.toFixed(0)} ms`);
    // Measure the steady state: until its cache is loaded, gridco2 answers from the store.
    const cacheLoadedMs = await gridco2.cacheLoaded;
    log(
      cacheLoadedMs === null
        ? `${label}: no "reading cache loaded" line within a minute; measuring anyway`
        : `${label}: cache loaded after ${cacheLoadedMs.toFixed(0)} ms`,
    );
    // The forecast worker shares the measured core: the rounds wait for it. Captures alone
    // (`--only during-backtest`, whose baseline replays `latest`, made of readings only, which
    // the backtest does not touch) need not: up to 5 minutes of a backtest saved.
    if (measured.length > 0) {
      const settledMs = await forecastsSettled(gridco2.url, FORECASTS_SETTLE_MS);
      log(
        settledMs === null
          ? `${label}: forecast work still running after ${FORECASTS_SETTLE_MS / 1000} s; measuring anyway`
          : `${label}: forecast work done after ${(settledMs / 1000).toFixed(1)} s more`,
      );
    }
    const captures = await captureScenarios(gridco2);
    const capturesFile = capturesFileOf(scratchDir, label);
    writeFileSync(capturesFile, JSON.stringify(captures));
    const baseline = await startBaseline(REPO_DIR, capturesFile);
    try {
      const agent = new http.Agent({ keepAlive: true });
      try {
        for (const captured of captures) await verifyReplay(baseline.url, captured, agent);
      } finally {
        agent.destroy();
      }
      const load = (url: string, seconds: number) =>
        loadCheckingServers(generator, { gridco2, baseline }, url, seconds);
      const scenarios: ScenarioResult[] = [];
      for (const scenario of measured) {
        const urls = {
          gridco2: gridco2.url + scenario.path,
          baseline: baseline.url + scenario.path,
        };
        // Bodies gridco2 built during the measured rounds: 0 when every answer was a cache hit.
        const encoded: { before: number | null } = { before: null };
        const rounds = await measureScenario(urls, load, options, async () => {
          encoded.before = await bodiesEncoded(gridco2.url);
        });
        const encodedAfter = await bodiesEncoded(gridco2.url);
        const encodedInRounds =
          encoded.before === null || encodedAfter === null ? null : encodedAfter - encoded.before;
        const summary = (name: Server) => median(rounds[name].map((r) => r.requestsPerSecond));
        log(
          `${label}: ${scenario.name}: gridco2 ${summary('gridco2').toFixed(0)} req/s, ` +
            `baseline ${summary('baseline').toFixed(0)} req/s, ` +
            `${encodedInRounds ?? 'unknown'} bodies encoded during the rounds`,
        );
        scenarios.push({
          scenario: scenario.name,
          path: scenario.path,
          ...rounds,
          rssMiB: residentMiB(gridco2.pid),
          bodiesEncoded: encodedInRounds,
        });
      }
      return {
        store: label,
        points: built.points,
        buildSeconds: built.buildSeconds,
        startupMs: gridco2.startupMs,
        cacheLoadedMs,
        scenarios,
        peakRssMiB: peakResidentMiB(gridco2.pid),
      };
    } finally {
      await baseline.stop();
    }
  } finally {
    await gridco2.stop();
  }
}

function describeBuild(label: string, built: BuiltStore): void {
  const how =
    built.buildSeconds === null ? 'cached' : `built in ${built.buildSeconds.toFixed(1)} s`;
  log(`${label}: ${built.points.toLocaleString('en-US')} points, ${how}`);
}

/** The 240-day demo's backtests as `serve` runs them: in its zone workers where it has them. */
function backtestDailyAsServed(scratchDir: string): Promise<BacktestDailyResult> {
  log("backtest: the 240-day demo's first backtest and its daily rerun, CPU seconds");
  const workers = defaultZoneWorkers();
  return measureBacktestDaily({
    repoDir: REPO_DIR,
    scratchDir,
    log,
    ...(workers > 1 && { workers }),
  });
}

/** On the largest store, after its captures (the baseline replays them); on a copy of it. */
async function duringBacktestOf(
  label: string,
  built: BuiltStore,
  options: Options,
  generator: LoadGenerator,
  scratchDir: string,
): Promise<DuringBacktestResult> {
  log(`${label}: latest while a fresh gridco2 runs its backtest`);
  return measureDuringBacktest({
    repoDir: REPO_DIR,
    label,
    databaseUrl: built.databaseUrl,
    scratchDir,
    capturesFile: capturesFileOf(scratchDir, label),
    generator,
    durationSeconds: options.duration,
    maxRounds: duringBacktestRounds(options),
    log,
  });
}

/**
 * `--only`: one section with what it takes from a full run and nothing more, rendered as the full
 * run renders it. during-backtest gets the store the full run gives it (`spec`: the largest) and
 * the captures of that store, checked as in the full run, without the steady-state rounds.
 */
async function measureSection(
  section: Section,
  spec: StoreSpec,
  options: Options,
  generator: LoadGenerator,
  scratchDir: string,
): Promise<string> {
  if (section === 'backtest-daily') {
    return renderBacktestDaily(await backtestDailyAsServed(scratchDir));
  }
  const label = `${spec.label} sqlite`;
  log(`${label}: building the store (or taking it from bench/.cache)`);
  const built = await buildSqliteStore(spec, join(BENCH_DIR, '.cache'));
  describeBuild(label, built);
  log(`${label}: capturing every scenario for the baseline (no rounds: --only ${section})`);
  await measureStore(label, built, options, generator, scratchDir, []);
  return renderDuringBacktest(await duringBacktestOf(label, built, options, generator, scratchDir));
}

async function main(): Promise<void> {
  const options = parseOptions();
  const specs: StoreSpec[] = options.quick ? [SMALL_STORE] : [SMALL_STORE, LARGE_STORE];
  const backends = options.postgres ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);
  const limit = timeLimitSeconds(options, specs.length * backends.length, specs.length);
  setTimeout(() => void abort(`time limit of ${limit} s reached`, 1), limit * 1000).unref();

  const { commit, warnings } = provenance();
  const generator = detectLoadGenerator();
  if (!pinning.available) warnings.push(`processes run unpinned: ${pinning.why}`);
  const [loadAtStart = 0] = loadavg();
  if (loadAtStart > 0.5) {
    warnings.push(
      `1-minute load average was ${loadAtStart.toFixed(2)} at start: other processes shared ` +
        'the cores, so absolute figures are noisy (ratios of one run hold up better)',
    );
  }
  log(`load generator: ${generator.description}; ${pinning.available ? pinning.why : 'unpinned'}`);

  const scratchDir = mkdtempSync(join(tmpdir(), 'gridco2-bench-'));
  const removeScratch = async () => rmSync(scratchDir, { recursive: true, force: true });
  emergencyCleanups.add(removeScratch);
  const stores: StoreResult[] = [];
  const defences: DefencesResult[] = [];
  let recompute: RecomputeRun | undefined;
  let streamsExport: StreamsExportResult | undefined;
  let forecasts: ForecastsResult | undefined;
  let demoStart: DemoStartResult | undefined;
  let consumption: ConsumptionResult | undefined;
  let backtestDaily: BacktestDailyResult | undefined;
  let exportSlots: ExportSlotsResult | undefined;
  let duringBacktest: DuringBacktestResult | undefined;
  let heaviest: HeaviestRequestsResult | undefined;
  let partition: PartitionResult | undefined;
  /** `--only`: the one section measured, rendered. */
  let section: string | undefined;
  try {
    if (options.only) {
      section = await measureSection(options.only, specs.at(-1)!, options, generator, scratchDir);
    } else {
      for (const backend of backends) {
        if (backend === 'sqlite') {
          for (const spec of specs) {
            const label = `${spec.label} sqlite`;
            log(`${label}: building the store (or taking it from bench/.cache)`);
            const built = await buildSqliteStore(spec, join(BENCH_DIR, '.cache'));
            describeBuild(label, built);
            stores.push(await measureStore(label, built, options, generator, scratchDir));
            // Once per store, on SQLite only: the defences do not depend on the backend.
            defences.push(
              await measureDefences(
                REPO_DIR,
                label,
                built.databaseUrl,
                defencesPlan(options.quick),
                generator,
                log,
              ),
            );
            // On the largest store only (quick: the 50k one), on a copy in the scratch directory.
            if (spec === specs.at(-1)) {
              duringBacktest = await duringBacktestOf(label, built, options, generator, scratchDir);
              log(`${label}: how long each route's heaviest request holds the event loop`);
              heaviest = await measureHeaviestRequests({
                repoDir: REPO_DIR,
                label,
                databaseUrl: built.databaseUrl,
                plan: heaviestRequestsPlan(options.quick),
                log,
              });
              log(`${label}: a ninth address's export while 8 others hold every slot`);
              exportSlots = await measureExportSlots({
                repoDir: REPO_DIR,
                label,
                databaseUrl: built.databaseUrl,
                log,
              });
              log(`${label}: limited requests through a Redis partition`);
              partition = await measureRedisPartition({
                repoDir: REPO_DIR,
                label,
                databaseUrl: built.databaseUrl,
                plan: partitionPlan(options.quick),
                log,
              });
              log(`${label}: timing \`gridco2 recompute\` on a copy of the store`);
              recompute = await measureRecompute(
                REPO_DIR,
                label,
                built.points,
                built.databaseUrl,
                scratchDir,
                options.quick,
              );
              log(
                `${label}: recompute ${recompute.exitCode === null ? 'stopped after' : 'took'} ` +
                  `${recompute.wallSeconds.toFixed(1)} s, peak RSS ` +
                  `${recompute.peakRssMiB?.toFixed(0) ?? 'n/a'} MiB`,
              );
              log(`${label}: open streams, a year's export and delivery to two instances`);
              // Delivery across instances is measured on PostgreSQL (NOTIFY) when it is in play.
              const delivery = options.postgres ? await createBenchDatabase() : undefined;
              if (delivery) emergencyCleanups.add(delivery.drop);
              try {
                streamsExport = await measureStreamsAndExport({
                  repoDir: REPO_DIR,
                  label,
                  databaseUrl: built.databaseUrl,
                  scratchDir,
                  plan: streamsExportPlan(options.quick),
                  log,
                  ...(delivery && { deliveryDatabaseUrl: delivery.url }),
                });
              } finally {
                if (delivery) {
                  await delivery.drop();
                  emergencyCleanups.delete(delivery.drop);
                }
              }
            }
          }
          continue;
        }
        const database = await createBenchDatabase();
        emergencyCleanups.add(database.drop);
        try {
          for (const spec of specs) {
            const label = `${spec.label} postgres`;
            log(`${label}: loading the store`);
            const built = await fillPostgres(database.url, spec);
            describeBuild(label, built);
            stores.push(await measureStore(label, built, options, generator, scratchDir));
          }
        } finally {
          await database.drop();
          emergencyCleanups.delete(database.drop);
        }
      }
      // Once per run, on a throwaway SQLite store ending now: the bench stores end 2026-11-01,
      // where gridco2 has no forecast (issue 12).
      log('forecasts: a 40-day store ending now, the DE forecast and the schedule of every zone');
      forecasts = await measureForecasts({
        repoDir: REPO_DIR,
        scratchDir,
        generator,
        rounds: options.rounds,
        durationSeconds: options.duration,
        warmUpSeconds: options.quick ? 0 : 2,
        log,
      });
      log('demo: from its spawn to serving every zone and every forecast');
      demoStart = await measureDemoStart({ repoDir: REPO_DIR, scratchDir, log });
      log('consumption: re-solving the European graph, and serve with every node');
      consumption = await measureConsumption({
        repoDir: REPO_DIR,
        scratchDir,
        days: consumptionDays(options.quick),
        log,
      });
      if (!options.quick) {
        // A 240-day demo store takes minutes to fill (once, then cached): not in the quick run.
        backtestDaily = await backtestDailyAsServed(scratchDir);
      }
    }
  } finally {
    await removeScratch();
  }

  const mode = options.quick ? 'quick' : 'full';
  // A section alone is named for it, never "full", so that its file is not taken for a full run
  // (quick ones stay ignored by git: `results/*-quick*.md`).
  const kind = options.only ? `${options.quick ? 'quick-' : ''}only-${options.only}` : mode;
  const date = new Date().toISOString().slice(0, 10);
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const flags = process.argv.slice(2).join(' ');
  const rounds =
    options.only === 'during-backtest'
      ? `at most ${duringBacktestRounds(options)} round(s) of ${options.duration} s per server ` +
        'as in a full run, gridco2 and baseline alternating; the baseline replays what gridco2 ' +
        'sent on the same store, captured and checked as in a full run, but without its ' +
        'steady-state rounds nor the wait for its forecast work before them'
      : `${options.rounds} round(s) of ${options.duration} s per server and scenario` +
        `${options.quick ? '' : ' after a 2 s warm-up'}, gridco2 and baseline alternating; medians`;
  const info: RunInfo = {
    title: options.only
      ? `gridco2 bench, only ${options.only}${options.quick ? ', quick' : ''} ` +
        `(one section, not a full run), ${date}`
      : `gridco2 bench, ${mode}, ${date}`,
    command: `npm run bench${flags ? ` -- ${flags}` : ''}`,
    settings: [
      `Machine: ${cpu}, ${availableParallelism()} cores, Node ${process.version}, ${process.platform}`,
      ...(options.only
        ? [
            `Only \`${options.only}\` ran (\`--only\`): no other section of the bench was ` +
              'measured, and results/latest.md (the last full run) was left as it was',
          ]
        : []),
      ...(options.only === 'backtest-daily'
        ? [`gridco2: commit ${commit}`]
        : [
            `Load generator: ${generator.description}, ${CONNECTIONS} connections, ${rounds}`,
            `Pinning: ${pinning.available ? pinning.why : `none (${pinning.why})`}`,
            `gridco2: commit ${commit}, \`node bin/gridco2.js serve\` (INGEST=off, ` +
              'RATE_LIMIT_PER_MINUTE=1000000000: the limiter runs, never rejects)',
            'Baseline: bare node:http replaying the bytes and headers gridco2 sent for each scenario',
            'Stores: GB half-hourly, every other zone hourly, all ending 2026-11-01T00:00Z',
          ]),
    ],
    warnings,
  };
  // `--only`: the run's head and that section; no steady-state round ran, so no scenario table.
  const report =
    section === undefined ? renderReport(info, stores, defences, recompute) : renderHead(info);
  const sections = [
    report.trimEnd(),
    ...(section === undefined ? [] : [section]),
    ...(duringBacktest ? [renderDuringBacktest(duringBacktest)] : []),
    ...(heaviest ? [renderHeaviestRequests(heaviest)] : []),
    ...(exportSlots ? [renderExportSlots(exportSlots)] : []),
    ...(partition ? [renderRedisPartition(partition)] : []),
    ...(streamsExport ? [renderStreamsExport([streamsExport])] : []),
    ...(forecasts ? [renderForecasts(forecasts)] : []),
    ...(demoStart ? [renderDemoStart(demoStart)] : []),
    ...(consumption ? [renderConsumption(consumption)] : []),
    ...(backtestDaily ? [renderBacktestDaily(backtestDaily)] : []),
  ];
  const fullReport = sections.length > 1 ? sections.join('\n\n') : report;
  console.log(fullReport);
  const resultsDir = join(BENCH_DIR, 'results');
  mkdirSync(resultsDir, { recursive: true });
  const name = `${date}-${kind}${options.postgres ? '-postgres' : ''}.md`;
  writeFileSync(join(resultsDir, name), fullReport);
  // latest.md is the record the README quotes: only full runs replace it, never one section.
  const full = !options.quick && !options.only;
  if (full) writeFileSync(join(resultsDir, 'latest.md'), fullReport);
  log(`written to bench/results/${name}${full ? ' and bench/results/latest.md' : ''}`);
}

process.once('SIGINT', () => void abort('interrupted', 130));
process.once('SIGTERM', () => void abort('terminated', 143));

main().then(
  () => process.exit(0),
  (error: unknown) => {
    if (aborting) return;
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    void abort('failed', 1);
  },
);
