/**
 * The walk-forward backtest of one zone, measured in CPU seconds (issue 38): a zone of the real
 * history (bench/real-history; lifecycle intensity of its mix, its day-ahead load, wind and solar
 * forecasts as issued at noon the day before) over its last `--days` days, every candidate
 * model. Prints the user CPU seconds and a digest of the result (the same digest: the same
 * numbers, to the bit), and with `--write FILE` / `--compare FILE` keeps the result or prints the
 * largest relative difference from one kept, per field.
 *
 * `npm run bench:backtest -- [--zone DE] [--days 240]` (run it niced on a shared machine).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { deserialize, serialize } from 'node:v8';
import { backtestZone, issueTimes, type ZoneBacktest } from '../src/core/forecast/backtest.js';
import type { ZoneBacktestState } from '../src/core/forecast/backtest-state.js';
import { CANDIDATE_MODELS } from '../src/core/forecast/models.js';
import { IssuedSeries, regularSeries, type Grid } from '../src/core/forecast/series.js';
import { type UpstreamInputs, ZoneState } from '../src/core/forecast/zone-state.js';
import { intensityOfMix } from '../src/core/method.js';
import { loadRealHistory, type ZoneHistory } from './real-history/history.js';

const HOUR = 3600;
const DAY = 24 * HOUR;
/** Europe's publication lag (core/sources.ts). */
const LAG_SECONDS = 3 * HOUR;

function option(name: string, fallback: string): string {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1]! : fallback;
}

/** The file's generation columns under the categories of core/factors.ts. */
const CATEGORY_OF: Readonly<Record<string, string>> = {
  wind_onshore: 'wind-onshore',
  wind_offshore: 'wind-offshore',
};

/** The zone's last `days` days, the newest `withheld` days not yet published. */
function zoneState(
  history: ZoneHistory,
  days: number,
  withheld = 0,
): { state: ZoneState; issues: number[] } {
  const startTs = history.hours.at(-1)! + HOUR - days * DAY;
  const endTs = startTs + (days - withheld) * DAY;
  const grid: Grid = { startTs, step: HOUR, length: (days - withheld) * 24 };
  const points: { ts: number; value: number }[] = [];
  history.hours.forEach((ts, i) => {
    if (ts < startTs || ts >= endTs) return;
    const mix: Record<string, number> = {};
    for (const [column, values] of history.generation) {
      if (!Number.isNaN(values[i]!)) mix[CATEGORY_OF[column] ?? column] = values[i]!;
    }
    const value = intensityOfMix(mix);
    if (value !== null) points.push({ ts, value });
  });
  const upstreamOf = (column: string) => {
    const values = history.forecasts.get(column as never);
    if (!values) return undefined;
    const rows: { ts: number; issuedAt: number; value: number }[] = [];
    history.hours.forEach((ts, i) => {
      if (ts >= startTs && ts < endTs && !Number.isNaN(values[i]!)) {
        rows.push({ ts, issuedAt: Math.floor(ts / DAY) * DAY - 12 * HOUR, value: values[i]! });
      }
    });
    return IssuedSeries.build(rows, grid);
  };
  const upstream: Record<string, IssuedSeries> = {};
  for (const [input, column] of [
    ['load', 'load_da_forecast_mw'],
    ['wind', 'wind_da_forecast_mw'],
    ['solar', 'solar_da_forecast_mw'],
  ] as const) {
    const series = upstreamOf(column);
    if (series) upstream[input] = series;
  }
  const state = new ZoneState({
    actual: regularSeries(points, grid),
    upstream: upstream as UpstreamInputs,
    publicationLagSeconds: LAG_SECONDS,
  });
  const firstIssue = Math.ceil((startTs + 14 * DAY) / (6 * HOUR)) * 6 * HOUR;
  return { state, issues: issueTimes(firstIssue, endTs - 73 * HOUR) };
}

/** Every number of the result, by its path. */
function numbers(value: unknown, path = '', out = new Map<string, number>()): Map<string, number> {
  if (typeof value === 'number') out.set(path, value);
  else if (value && typeof value === 'object') {
    for (const [key, entry] of Object.entries(value)) numbers(entry, `${path}/${key}`, out);
  }
  return out;
}

function compare(result: ZoneBacktest, file: string): void {
  const kept = numbers(JSON.parse(readFileSync(file, 'utf8')));
  const now = numbers(JSON.parse(JSON.stringify(result)));
  const largest = new Map<string, number>();
  for (const [path, value] of now) {
    const before = kept.get(path);
    if (before === undefined) continue;
    const difference =
      before === value ? 0 : Math.abs(value - before) / Math.max(Math.abs(before), 1e-12);
    // Array entries count with their array (a band's 72 hours are one field).
    const field = path.split('/').findLast((key) => !/^\d+$/.test(key))!;
    largest.set(field, Math.max(largest.get(field) ?? 0, difference));
  }
  for (const [field, difference] of largest) {
    process.stdout.write(`${field.padEnd(32)} ${difference.toExponential(2)}\n`);
  }
}

const zone = option('--zone', 'DE');
const days = Number(option('--days', '240'));
const history = loadRealHistory().find((entry) => entry.zone === zone);
if (!history) throw new Error(`no real history of ${zone}`);

/** The backtest of the zone's last `days` days with `withheld` of them unpublished, timed. */
function timedBacktest(
  withheld: number,
  previous?: ZoneBacktestState,
): { result: ZoneBacktest; seconds: number; kept: ZoneBacktestState | undefined } {
  const { state, issues } = zoneState(history!, days, withheld);
  let kept: ZoneBacktestState | undefined;
  const before = process.cpuUsage();
  const result = backtestZone(zone, 'lifecycle', state, {
    issueTimes: issues,
    candidates: CANDIDATE_MODELS,
    ...(previous && { previous }),
    keep: (state) => (kept = state),
  });
  return { result, seconds: process.cpuUsage(before).user / 1e6, kept };
}

const digestOf = (result: ZoneBacktest) =>
  createHash('sha256').update(JSON.stringify(result)).digest('hex').slice(0, 16);

if (process.argv.includes('--daily')) {
  // Yesterday's run keeps its state (through the bytes a store holds), today's resumes from it.
  const yesterday = timedBacktest(1);
  const stored = serialize(yesterday.kept);
  const today = timedBacktest(0, deserialize(stored) as ZoneBacktestState);
  const fresh = timedBacktest(0);
  process.stdout.write(
    `${zone}, ${days} days: yesterday ${yesterday.seconds.toFixed(2)} s user CPU ` +
      `(state ${(stored.length / 1e6).toFixed(2)} MB), today from its state ` +
      `${today.seconds.toFixed(2)} s (${today.result.issues} issues, digest ${digestOf(today.result)}), ` +
      `today from scratch ${fresh.seconds.toFixed(2)} s (digest ${digestOf(fresh.result)})\n`,
  );
  const file = `${process.env.TMPDIR ?? '/tmp'}/backtest-cpu-fresh-${process.pid}.json`;
  writeFileSync(file, JSON.stringify(fresh.result));
  compare(today.result, file);
} else {
  const { result, seconds } = timedBacktest(0);
  const json = JSON.stringify(result);
  process.stdout.write(
    `${zone}, ${days} days, ${result.issues} issues: ${seconds.toFixed(2)} s user CPU, digest ${digestOf(result)}\n`,
  );
  const write = process.argv.indexOf('--write');
  if (write >= 0) writeFileSync(process.argv[write + 1]!, json);
  const against = process.argv.indexOf('--compare');
  if (against >= 0) compare(result, process.argv[against + 1]!);
}
