/** The markdown the bench prints and writes to bench/results/. */
import {
  CONCURRENCY,
  FLOOD_HEALTH_GOAL_MS,
  FLOOD_PATH,
  percentile,
  PROBE_ADDRESS,
  PROBE_PAUSE_MS,
  PROBE_TIMEOUT_MS,
  SAMPLE_EVERY_MS,
  SETTLE_MS,
  WARM_UP_REQUESTS,
  type CpuRun,
  type DefencesResult,
} from './defences.js';
import type { LoadResult } from './load.js';
import { RECOMPUTE_TARGET_SECONDS, type RecomputeRun } from './recompute.js';
import { CONSUMPTION_LATEST, PRODUCTION_LATEST, SCENARIOS } from './scenarios.js';

/** Issue 11: gridco2's resident memory with the 3.2M-point store, in MB (10^6 bytes). */
const RSS_TARGET_MB = 400;

export interface ScenarioResult {
  readonly scenario: string;
  readonly path: string;
  /** One entry per round, in round order. */
  readonly gridco2: readonly LoadResult[];
  readonly baseline: readonly LoadResult[];
  /** gridco2's resident memory after this scenario's rounds. */
  readonly rssMiB: number | null;
  /** Bodies gridco2 encoded during the measured rounds (0: all from its body cache); null: unknown. */
  readonly bodiesEncoded: number | null;
}

export interface StoreResult {
  /** `50k sqlite`, `3.2M postgres`... */
  readonly store: string;
  readonly points: number;
  /** null: the cached file was used. */
  readonly buildSeconds: number | null;
  readonly startupMs: number;
  /** null: gridco2 never said its cache was loaded. */
  readonly cacheLoadedMs: number | null;
  readonly scenarios: readonly ScenarioResult[];
  /** gridco2's VmHWM (the most it was resident) after its last scenario; null without /proc. */
  readonly peakRssMiB: number | null;
}

export interface RunInfo {
  readonly title: string;
  readonly command: string;
  readonly settings: readonly string[];
  readonly warnings: readonly string[];
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const medianOf = (results: readonly LoadResult[], pick: (result: LoadResult) => number) =>
  median(results.map(pick));

const requests = (value: number): string =>
  value.toLocaleString('en-US', { maximumFractionDigits: value < 100 ? 1 : 0 });
const ms = (value: number): string => value.toFixed(value < 10 ? 2 : 1);
const orNone = (value: number | null): string => (value === null ? 'none' : ms(value));
const mib = (value: number | null): string => (value === null ? 'n/a' : value.toFixed(0));
const errorsOf = (results: readonly LoadResult[]): number =>
  results.reduce((sum, result) => sum + result.errors, 0);
const megabytes = (valueMiB: number): number => (valueMiB * 1024 * 1024) / 1e6;

/** The median of each round's gridco2/baseline pair. */
const ratioOf = (result: ScenarioResult): number =>
  median(result.gridco2.map((r, i) => r.requestsPerSecond / result.baseline[i]!.requestsPerSecond));

const targetOf = (result: ScenarioResult): number | undefined =>
  SCENARIOS.find((scenario) => scenario.name === result.scenario)?.target;
const p99GoalOf = (result: ScenarioResult): number | undefined =>
  SCENARIOS.find((scenario) => scenario.name === result.scenario)?.p99GoalMs;
const p99Of = (result: ScenarioResult): number => medianOf(result.gridco2, (r) => r.p99Ms);

const headOf = (info: RunInfo): string[] => [
  `# ${info.title}`,
  '',
  `\`${info.command}\``,
  '',
  ...info.settings.map((setting) => `- ${setting}`),
];

const warningsOf = (info: RunInfo): string[] =>
  info.warnings.length === 0
    ? []
    : ['', '**Warnings**', '', ...info.warnings.map((warning) => `- ${warning}`)];

/** The head of a run that measured one section alone (`--only`): its settings and warnings. */
export function renderHead(info: RunInfo): string {
  return [...headOf(info), ...warningsOf(info)].join('\n');
}

export function renderReport(
  info: RunInfo,
  stores: readonly StoreResult[],
  defences: readonly DefencesResult[],
  recompute?: RecomputeRun,
): string {
  const lines = headOf(info);
  lines.push(
    '',
    "req/s, p50 and p99 are medians over the rounds; the ratio is the median of each round's " +
      'gridco2/baseline pair (run back to back, so a busy moment weighs on both). p50, p99 and ' +
      "RSS (VmRSS after the scenario's rounds) are gridco2's. Target: the least ratio the " +
      'issues ask for (6: latest 0.8, 30-day history 0.6; 11: the same with basis=direct, ' +
      "/v1/mix 30 days 0.5), set against this run's ratio, or the p99 an issue asks for (12: " +
      'schedule 20 ms; 24: stats of 400 days 50 ms); figures, not assertions. Encoded: ' +
      'bodies gridco2 built during the measured rounds (its /metrics counter ' +
      'gridco2_response_bodies_encoded_total, read before and after them; 0 means every answer ' +
      'came from its body cache).',
    '',
    '| Scenario | Store | gridco2 req/s | baseline req/s | ratio | target | p50 ms | p99 ms | ' +
      'RSS MiB | encoded |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|',
  );
  for (const store of stores) {
    for (const result of store.scenarios) {
      const gridco2 = medianOf(result.gridco2, (r) => r.requestsPerSecond);
      const baseline = medianOf(result.baseline, (r) => r.requestsPerSecond);
      const ratio = ratioOf(result);
      const target = targetOf(result);
      const goal = p99GoalOf(result);
      const verdict =
        target !== undefined
          ? `${target.toFixed(1)}: ${ratio >= target ? 'met' : 'below'}`
          : goal !== undefined
            ? `p99 < ${goal} ms: ${p99Of(result) < goal ? 'met' : 'above'}`
            : '-';
      const errors = errorsOf(result.gridco2) + errorsOf(result.baseline);
      lines.push(
        `| ${result.scenario}${errors > 0 ? ` (${errors} errors)` : ''} | ${store.store} | ` +
          `${requests(gridco2)} | ${requests(baseline)} | ${ratio.toFixed(3)} | ${verdict} | ` +
          `${ms(medianOf(result.gridco2, (r) => r.p50Ms))} | ` +
          `${ms(p99Of(result))} | ${mib(result.rssMiB)} | ` +
          `${result.bodiesEncoded ?? 'n/a'} |`,
      );
    }
  }
  lines.push('', ...renderTargets(stores));
  lines.push(
    '',
    '| Store | points | build | start-up to first /v1/intensity/latest | cache loaded |',
    '|---|--:|--:|--:|--:|',
  );
  for (const store of stores) {
    const build = store.buildSeconds === null ? 'cached' : `${store.buildSeconds.toFixed(1)} s`;
    const loaded =
      store.cacheLoadedMs === null ? 'not logged' : `${store.cacheLoadedMs.toFixed(0)} ms`;
    lines.push(
      `| ${store.store} | ${store.points.toLocaleString('en-US')} | ${build} | ` +
        `${store.startupMs.toFixed(0)} ms | ${loaded} |`,
    );
  }
  lines.push(...warningsOf(info));
  lines.push('', '<details><summary>Every round: req/s gridco2 / baseline</summary>', '');
  for (const store of stores) {
    for (const result of store.scenarios) {
      const rounds = result.gridco2.map(
        (round, i) =>
          `${requests(round.requestsPerSecond)} / ${requests(result.baseline[i]!.requestsPerSecond)}`,
      );
      lines.push(`- ${store.store}, ${result.scenario} (\`${result.path}\`): ${rounds.join('; ')}`);
    }
  }
  lines.push('', '</details>');
  lines.push(...renderRecompute(recompute));
  lines.push(...renderDefences(defences), '');
  return lines.join('\n');
}

/** Issue 36: `latest` with accounting=consumption within 0.9x of production `latest`. */
const CONSUMPTION_TARGET = 0.9;

function consumptionAgainstProduction(store: StoreResult): string[] {
  const rate = (name: string) => {
    const result = store.scenarios.find((candidate) => candidate.scenario === name);
    return result && median(result.gridco2.map((round) => round.requestsPerSecond));
  };
  const production = rate(PRODUCTION_LATEST);
  const consumption = rate(CONSUMPTION_LATEST);
  if (!production || consumption === undefined) return [];
  const ratio = consumption / production;
  return [
    `- **${store.store}, latest with accounting=consumption:** ${ratio.toFixed(3)}x production ` +
      `latest's req/s (${CONSUMPTION_TARGET} target: ${ratio >= CONSUMPTION_TARGET ? 'met' : 'below'}).`,
  ];
}

/** One line per store: ratio targets met, and peak RSS against the 400 MB of issue 11. */
function renderTargets(stores: readonly StoreResult[]): string[] {
  const lines: string[] = [];
  for (const store of stores) {
    const targeted = store.scenarios.filter((result) => targetOf(result) !== undefined);
    const below = targeted.filter((result) => ratioOf(result) < targetOf(result)!);
    const names = below.map(
      (result) => `${result.scenario} ${ratioOf(result).toFixed(3)} < ${targetOf(result)}`,
    );
    lines.push(
      `- **${store.store}, ratio targets:** ${targeted.length - below.length} of ` +
        `${targeted.length} met${names.length > 0 ? `; below: ${names.join(', ')}` : ''}.`,
    );
    const goals = store.scenarios.filter((result) => p99GoalOf(result) !== undefined);
    const above = goals
      .filter((result) => p99Of(result) >= p99GoalOf(result)!)
      .map((result) => `${result.scenario} ${ms(p99Of(result))} ms >= ${p99GoalOf(result)} ms`);
    lines.push(
      `- **${store.store}, p99 goals:** ${goals.length - above.length} of ${goals.length} met` +
        `${above.length > 0 ? `; above: ${above.join(', ')}` : ''}.`,
    );
    lines.push(...consumptionAgainstProduction(store));
  }
  for (const store of stores) {
    const afterScenarios = store.scenarios
      .map((result) => result.rssMiB)
      .filter((value): value is number => value !== null);
    const highest = afterScenarios.length === 0 ? null : Math.max(...afterScenarios);
    const peak = store.peakRssMiB ?? highest;
    const verdict =
      peak === null
        ? 'n/a (no /proc)'
        : `${megabytes(peak).toFixed(0)} MB, ` +
          `${megabytes(peak) <= RSS_TARGET_MB ? 'within' : 'above'} the ${RSS_TARGET_MB} MB target`;
    lines.push(
      `- **${store.store}, peak RSS:** ${mib(store.peakRssMiB)} MiB VmHWM over gridco2's life ` +
        `(start-up, cache load and every scenario; at most ${mib(highest)} MiB VmRSS after a ` +
        `scenario): ${verdict}` +
        `${store.points < 3_000_000 ? ' (the target is for the 3.2M store; this one is smaller)' : ''}.`,
    );
  }
  return lines;
}

/** Issue 11: `gridco2 recompute` of both bases over the store, against its 60 s target. */
function renderRecompute(run: RecomputeRun | undefined): string[] {
  if (!run) return [];
  const finished = run.exitCode !== null;
  const wall = `${run.wallSeconds.toFixed(1)} s`;
  const verdict = finished
    ? `${run.wallSeconds <= RECOMPUTE_TARGET_SECONDS ? 'within' : 'above'} the ` +
      `${RECOMPUTE_TARGET_SECONDS} s target`
    : `stopped unfinished after ${wall}`;
  const rows =
    run.scanned === null
      ? 'no `recompute: done` line'
      : `${run.scanned.toLocaleString('en-US')} rows scanned, ` +
        `${run.changed?.toLocaleString('en-US') ?? 'n/a'} changed`;
  return [
    '',
    '## Recompute',
    '',
    `\`DATABASE_URL=sqlite:<copy> node bin/gridco2.js recompute\` (both bases, from every ` +
      `stored mix) on a fresh copy of the ${run.store} store ` +
      `(${run.points.toLocaleString('en-US')} points, ` +
      `${(run.fileBytes / 1e6).toFixed(0)} MB file), pinned to core 0 with nothing else of the ` +
      `bench running. Wall time from spawn to exit; peak RSS from ${run.rssFrom}. Rows changed are ` +
      'those written back: the dataset sums each mix in another order than src/core/method.ts, ' +
      'so about a fifth differ in their last bits; after a change of factors nearly every row ' +
      'would be written. A figure, not an assertion.',
    '',
    '| Store | wall s | peak RSS MiB | rows | target |',
    '|---|--:|--:|---|---|',
    `| ${run.store} | ${finished ? wall.replace(' s', '') : `> ${wall.replace(' s', '')}`} | ` +
      `${mib(run.peakRssMiB)} | ${rows} | ${verdict} |`,
  ];
}

const cpuSecondsPer10k = (run: CpuRun, requests: number, ticksPerSecond: number): string =>
  run.ticks === null
    ? 'n/a'
    : `${((run.ticks / ticksPerSecond) * (10_000 / requests)).toFixed(2)} (${run.ticks} ticks)`;

/** Issue 10: memory under pipelined non-readers, CPU of rejected against served requests. */
function renderDefences(results: readonly DefencesResult[]): string[] {
  const [first] = results;
  if (!first) return [];
  const { nonReaders } = first;
  const lines = [
    '',
    '## Defences',
    '',
    `**Pipelined non-readers.** ${nonReaders.connections} connections each write ` +
      `${nonReaders.pipelined} pipelined GETs for distinct 5000-point windows in one write and ` +
      `never read, for ${nonReaders.holdSeconds} s, against a gridco2 whose limit never refuses ` +
      '(every admitted request gets its body built): only the connection guard bounds what it ' +
      `holds. RSS is gridco2's VmRSS, sampled every ${SAMPLE_EVERY_MS} ms; /v1/health is probed ` +
      `on a new connection at each sample (${PROBE_TIMEOUT_MS / 1000} s timeout). "After": ` +
      `${SETTLE_MS / 1000} s after the connections were closed and gridco2 went idle.`,
    '',
    '| Store | connections made | RSS before MiB | peak MiB | after MiB | peak - before MiB | ' +
      'health answered | slowest probe ms |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const { store, nonReaders: run } of results) {
    const growth =
      run.rssPeakMiB === null || run.rssBeforeMiB === null
        ? null
        : run.rssPeakMiB - run.rssBeforeMiB;
    lines.push(
      `| ${store} | ${run.connected}/${run.connections} | ${mib(run.rssBeforeMiB)} | ` +
        `${mib(run.rssPeakMiB)} | ${mib(run.rssAfterMiB)} | ${mib(growth)} | ` +
        `${run.probesAnswered}/${run.probes} | ` +
        `${run.slowestProbeMs === null ? 'none' : ms(run.slowestProbeMs)} |`,
    );
  }
  const { requests, ticksPerSecond } = first.cpu;
  const tick = (10_000 / requests / ticksPerSecond).toFixed(2);
  lines.push(
    '',
    "**CPU per 10,000 requests, rejected vs served.** gridco2's user + system CPU seconds " +
      '(/proc/<pid>/stat) over requests for distinct 5000-point windows, keep-alive, ' +
      `${CONCURRENCY} at a time, after ${WARM_UP_REQUESTS} warm-up requests, each on a fresh ` +
      `instance. **Scaled to 10,000 from ${requests.toLocaleString('en-US')} requests**: one ` +
      `clock tick (1/${ticksPerSecond} s) counts ${tick} s per 10,000 here. Served: the limit ` +
      'never refuses, every answer is 200 with its body built. Rejected: ' +
      'RATE_LIMIT_PER_MINUTE=1, spent first, every answer is 429 (the limiter is asked before ' +
      'any body is built). Any other status fails the bench.',
    '',
    '| Store | requests | served CPU s / 10k | rejected CPU s / 10k | rejected / served | ' +
      'served wall s | rejected wall s |',
    '|---|--:|--:|--:|--:|--:|--:|',
  );
  for (const { store, cpu } of results) {
    const ratio =
      cpu.served.ticks && cpu.rejected.ticks !== null
        ? (cpu.rejected.ticks / cpu.served.ticks).toFixed(3)
        : 'n/a';
    lines.push(
      `| ${store} | ${cpu.requests.toLocaleString('en-US')} | ` +
        `${cpuSecondsPer10k(cpu.served, cpu.requests, cpu.ticksPerSecond)} | ` +
        `${cpuSecondsPer10k(cpu.rejected, cpu.requests, cpu.ticksPerSecond)} | ${ratio} | ` +
        `${cpu.served.wallSeconds.toFixed(2)} | ${cpu.rejected.wallSeconds.toFixed(2)} |`,
    );
  }
  lines.push(
    '',
    `**/v1/health while one IP floods the limit** (issue 21: p99 under ${FLOOD_HEALTH_GOAL_MS} ` +
      `ms). A gridco2 with RATE_LIMIT_PER_MINUTE=${first.flood.limitPerMinute}; the load ` +
      `generator (its own core, 10 connections from 127.0.0.1) asks \`${FLOOD_PATH}\` as fast ` +
      `as it can for ${first.flood.seconds} s, far above the limit, while another client ` +
      `(${PROBE_ADDRESS}, one keep-alive connection) asks /v1/health again and again ` +
      `(${PROBE_PAUSE_MS} ms apart, ${PROBE_TIMEOUT_MS / 1000} s timeout). Refused: the ` +
      "flood's answers outside 2xx (429s).",
    '',
    '| Store | flood answers | refused | flood req/s | health probes answered | health p50 ms | ' +
      'health p99 ms | slowest ms | goal |',
    '|---|--:|--:|--:|--:|--:|--:|--:|---|',
  );
  for (const { store, flood } of results) {
    const p99 = percentile(flood.answeredMs, 99);
    const allAnswered = flood.answeredMs.length === flood.probes;
    lines.push(
      `| ${store} | ${flood.flood.requests} | ${flood.flood.non2xx} | ` +
        `${flood.flood.requestsPerSecond.toFixed(0)} | ${flood.answeredMs.length}/${flood.probes} | ` +
        `${orNone(percentile(flood.answeredMs, 50))} | ${orNone(p99)} | ` +
        `${orNone(flood.answeredMs.length === 0 ? null : Math.max(...flood.answeredMs))} | ` +
        `${p99 !== null && allAnswered && p99 < FLOOD_HEALTH_GOAL_MS ? 'met' : 'missed'} |`,
    );
  }
  return lines;
}
