/** The markdown the bench prints and writes to bench/results/. */
import type { LoadResult } from './load.js';

export interface ScenarioResult {
  readonly scenario: string;
  readonly path: string;
  /** One entry per round, in round order. */
  readonly gridco2: readonly LoadResult[];
  readonly baseline: readonly LoadResult[];
  /** gridco2's resident memory after this scenario's rounds. */
  readonly rssMiB: number | null;
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
const mib = (value: number | null): string => (value === null ? 'n/a' : value.toFixed(0));
const errorsOf = (results: readonly LoadResult[]): number =>
  results.reduce((sum, result) => sum + result.errors, 0);

export function renderReport(info: RunInfo, stores: readonly StoreResult[]): string {
  const lines = [`# ${info.title}`, '', `\`${info.command}\``, ''];
  for (const setting of info.settings) lines.push(`- ${setting}`);
  lines.push(
    '',
    "req/s, p50 and p99 are medians over the rounds; the ratio is the median of each round's " +
      'gridco2/baseline pair (run back to back, so a busy moment weighs on both). p50, p99 and ' +
      "RSS (VmRSS after the scenario's rounds) are gridco2's.",
    '',
    '| Scenario | Store | gridco2 req/s | baseline req/s | ratio | p50 ms | p99 ms | RSS MiB |',
    '|---|---|--:|--:|--:|--:|--:|--:|',
  );
  for (const store of stores) {
    for (const result of store.scenarios) {
      const gridco2 = medianOf(result.gridco2, (r) => r.requestsPerSecond);
      const baseline = medianOf(result.baseline, (r) => r.requestsPerSecond);
      const ratio = median(
        result.gridco2.map((r, i) => r.requestsPerSecond / result.baseline[i]!.requestsPerSecond),
      );
      const errors = errorsOf(result.gridco2) + errorsOf(result.baseline);
      lines.push(
        `| ${result.scenario}${errors > 0 ? ` (${errors} errors)` : ''} | ${store.store} | ` +
          `${requests(gridco2)} | ${requests(baseline)} | ${ratio.toFixed(3)} | ` +
          `${ms(medianOf(result.gridco2, (r) => r.p50Ms))} | ` +
          `${ms(medianOf(result.gridco2, (r) => r.p99Ms))} | ${mib(result.rssMiB)} |`,
      );
    }
  }
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
  if (info.warnings.length > 0) {
    lines.push('', '**Warnings**', '');
    for (const warning of info.warnings) lines.push(`- ${warning}`);
  }
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
  lines.push('', '</details>', '');
  return lines.join('\n');
}
