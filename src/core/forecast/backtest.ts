import type { Basis } from '../factors.js';
import type { ZoneState } from './models.js';
import {
  CLIMATOLOGY,
  type ForecastModel,
  horizonEnd,
  OPERATOR_FORECAST,
  PERSISTENCE,
  WEEKLY_PROFILE,
} from './models.js';
import {
  type BucketLabel,
  bucketIndex,
  HORIZON_BUCKETS,
  HORIZON_HOURS,
  DAY_SECONDS,
  HOUR_SECONDS,
  horizonHours,
  servedHours,
} from './series.js';

/**
 * The walk-forward backtest: at every issue time a model sees only the values published by then
 * (the zone's usual publication lag) and the upstream forecasts issued by then, forecasts 72 hours,
 * and is scored against what was published later. Its out-of-sample errors give each zone's
 * P10-P90 band and decide which model serves each horizon bucket. Pure: the CLI and `serve` load
 * the data and store the result.
 */

/** The basis a forecast is on: a basis, or GB's own operator figure (GB asked without a basis). */
export type ForecastBasis = Basis | 'operator';

export interface SkillRow {
  readonly bucket: BucketLabel;
  readonly model: string;
  /** Whether this model serves the bucket (the lowest RMSE there). */
  readonly served: boolean;
  readonly n: number;
  readonly mae: number;
  readonly rmse: number;
  /** Percent; intervals with a value of zero are left out. */
  readonly mape: number;
  readonly skill_vs_persistence: number;
  readonly skill_vs_climatology: number;
  /** Mean per issue of the rank correlation of forecast and outcome within the bucket. */
  readonly spearman: number;
  /** Share of outcomes inside the P10-P90 band known at the issue (walk-forward). */
  readonly p10_p90_coverage: number;
  /**
   * For a 4-hour job placed in the next 24 hours by this forecast: reduction achieved against
   * starting at once, over the reduction of the best placement in hindsight (all buckets alike).
   */
  readonly savings_captured: number;
}

/**
 * The band's edges by hour ahead, 1 to 72: quantiles of a model's out-of-sample errors (outcome -
 * forecast) at the levels the walk-forward adapted so that 80 % of outcomes fell inside.
 */
export interface ErrorBand {
  readonly q10: readonly number[];
  readonly q90: readonly number[];
}

export interface ZoneBacktest {
  readonly zone: string;
  readonly basis: ForecastBasis;
  /** First and last issue time evaluated, epoch seconds; null when none could be. */
  readonly from: number | null;
  readonly to: number | null;
  readonly issues: number;
  readonly rows: readonly SkillRow[];
  /** The model serving each bucket. */
  readonly served: Readonly<Record<BucketLabel, string>>;
  readonly bands: Readonly<Record<string, ErrorBand>>;
}

/** One run of the backtest over every zone and basis, as stored and served. */
export interface BacktestRun {
  /** When it was run, epoch seconds. */
  readonly createdAt: number;
  readonly zones: readonly ZoneBacktest[];
}

export interface BacktestOptions {
  /** Issue times, ascending (one every 24 h). */
  readonly issueTimes: readonly number[];
  /** The models competing to serve, first preferred on a tie. */
  readonly candidates: readonly ForecastModel[];
}

/** Issues whose errors make the band of the next one. */
const BAND_ISSUES = 90;
/** At least this many earlier errors (pooled over neighbouring hours) before coverage counts. */
const MIN_BAND_SAMPLES = 40;
/** Hours either side pooled into one horizon's band. */
const BAND_POOL_HOURS = 2;
/** The band used for the next issues is refreshed every this many issues. */
const BAND_REFRESH_ISSUES = 7;
const JOB_HOURS = 4;
const JOB_WINDOW_HOURS = 24;

interface IssueForecasts {
  readonly issueTs: number;
  readonly visibleEnd: number;
  /** One array per model id (candidates and baselines), slots from visibleEnd. */
  readonly values: ReadonlyMap<string, Float64Array>;
}

export function backtestZone(
  zone: string,
  basis: ForecastBasis,
  state: ZoneState,
  options: BacktestOptions,
): ZoneBacktest {
  const steps = backtestZoneSteps(zone, basis, state, options);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * `backtestZone` one issue at a time: a caller that serves requests meanwhile (`serve`'s daily
 * run) gives the event loop a turn between steps.
 */
export function* backtestZoneSteps(
  zone: string,
  basis: ForecastBasis,
  state: ZoneState,
  options: BacktestOptions,
): Generator<void, ZoneBacktest> {
  // Where a candidate has no value the climatology serves (prepare.ts): scored the same way. The
  // operator's forecast is republished as it is, and ends where it ends.
  const fallback = options.candidates.some((model) => model.id === OPERATOR_FORECAST.id)
    ? undefined
    : CLIMATOLOGY;
  const models = [...options.candidates, PERSISTENCE, WEEKLY_PROFILE];
  if (fallback && !models.includes(fallback)) models.push(fallback);
  const issues: IssueForecasts[] = [];
  for (const issueTs of options.issueTimes) {
    const visibleEnd = state.visibleEndAt(issueTs);
    if (!state.profile(visibleEnd) || state.latestSlot(visibleEnd) < 0) continue;
    const end = horizonEnd(state, issueTs);
    const values = new Map<string, Float64Array>();
    for (const model of models) {
      values.set(model.id, model.predict(state, { issueTs, visibleEnd }, end));
    }
    // An issue no candidate says anything of (GB before fw48h issues were collected) is none.
    if (options.candidates.every((model) => values.get(model.id)!.every(Number.isNaN))) continue;
    if (fallback) {
      const filler = values.get(fallback.id)!;
      for (const model of options.candidates) {
        const own = values.get(model.id)!;
        for (let i = 0; i < own.length; i++) if (Number.isNaN(own[i]!)) own[i] = filler[i]!;
      }
    }
    issues.push({ issueTs, visibleEnd, values });
    yield;
  }
  const bands = new Map<string, ErrorBand>();
  const scored: { model: string; rows: Omit<SkillRow, 'served'>[] }[] = [];
  for (const model of options.candidates) {
    const { rows, band } = yield* scoreModel(state, issues, model.id);
    bands.set(model.id, band);
    scored.push({ model: model.id, rows });
  }
  const served = {} as Record<BucketLabel, string>;
  HORIZON_BUCKETS.forEach(({ label }, bucket) => {
    let best: { model: string; rmse: number } | undefined;
    for (const { model, rows: modelRows } of scored) {
      const row = modelRows[bucket]!;
      if (row.n > 0 && (!best || row.rmse < best.rmse)) best = { model, rmse: row.rmse };
    }
    served[label] = best?.model ?? options.candidates[0]!.id;
  });
  // The savings of what is served: each bucket by its own model.
  const servedSavings = captured(
    issues.map((issue) => jobSaving(state, issue, composite(state, issue, served))),
  );
  const rows: SkillRow[] = [];
  HORIZON_BUCKETS.forEach(({ label }, bucket) => {
    for (const { model, rows: modelRows } of scored) {
      const isServed = model === served[label];
      rows.push({
        ...modelRows[bucket]!,
        served: isServed,
        ...(isServed && { savings_captured: servedSavings }),
      });
    }
  });
  return {
    zone,
    basis,
    from: issues[0]?.issueTs ?? null,
    to: issues.at(-1)?.issueTs ?? null,
    issues: issues.length,
    rows,
    served,
    bands: Object.fromEntries(bands),
  };
}

/** One issue's forecast as served: each slot from the model serving its bucket. */
function composite(
  state: ZoneState,
  issue: IssueForecasts,
  served: Readonly<Record<BucketLabel, string>>,
): Float64Array {
  const length = issue.values.get(served['1-6'])!.length;
  const out = new Float64Array(length);
  for (let i = 0; i < length; i++) {
    const hours = horizonHours(
      state.slotTs(issue.visibleEnd + i),
      state.series.step,
      issue.issueTs,
    );
    const label = HORIZON_BUCKETS[bucketIndex(servedHours(hours))]!.label;
    out[i] = issue.values.get(served[label])![i]!;
  }
  return out;
}

/** Achieved over possible savings, summed over the issues that had both; NaN without any. */
function captured(savings: readonly ({ achieved: number; possible: number } | null)[]): number {
  let achieved = 0;
  let possible = 0;
  for (const saving of savings) {
    if (!saving) continue;
    achieved += saving.achieved;
    possible += saving.possible;
  }
  return possible > 0 ? achieved / possible : Number.NaN;
}

interface Sums {
  n: number;
  abs: number;
  sq: number;
  pct: number;
  pctN: number;
  persistenceSq: number;
  climatologySq: number;
  inBand: number;
  banded: number;
  spearman: number;
  spearmanN: number;
}

const emptySums = (): Sums => ({
  n: 0,
  abs: 0,
  sq: 0,
  pct: 0,
  pctN: 0,
  persistenceSq: 0,
  climatologySq: 0,
  inBand: 0,
  banded: 0,
  spearman: 0,
  spearmanN: 0,
});

/** Scores one model over every issue, walking forward; returns its rows and its final band. */
/** Scores one model over every issue, walking forward, a step per issue. */
function* scoreModel(
  state: ZoneState,
  issues: readonly IssueForecasts[],
  modelId: string,
): Generator<void, { rows: Omit<SkillRow, 'served'>[]; band: ErrorBand }> {
  const actual = state.series.values;
  const step = state.series.step;
  const lag = state.inputs.publicationLagSeconds;
  const sums = HORIZON_BUCKETS.map(emptySums);
  // Errors by hour ahead (index hours - 1), in issue order.
  const errors: ScoredError[][] = Array.from({ length: HORIZON_HOURS }, () => []);
  let pools: number[][] = [];
  // The quantile levels of the band's edges, adapted so that a tenth of the outcomes falls below
  // and a tenth above (adaptive conformal inference, Gibbs & Candes 2021). An issue's misses
  // adapt them only once its outcomes would have been published.
  let levels: [number, number] = [TAIL, 1 - TAIL];
  const pendingMisses: { knownAt: number; below: number; above: number; banded: number }[] = [];
  const savings: ({ achieved: number; possible: number } | null)[] = [];

  for (const [index, issue] of issues.entries()) {
    yield;
    // What was published by this issue time: errors of intervals over by then, misses known.
    const knownBy = issue.issueTs - lag;
    while (pendingMisses.length > 0 && pendingMisses[0]!.knownAt <= knownBy) {
      const { below, above, banded } = pendingMisses.shift()!;
      levels = adaptLevels(levels, below / banded, above / banded);
    }
    if (index % BAND_REFRESH_ISSUES === 0) pools = errorPools(errors, index, knownBy);
    const forecast = issue.values.get(modelId)!;
    const persistence = issue.values.get(PERSISTENCE.id)!;
    const climatology = issue.values.get(WEEKLY_PROFILE.id)!;
    const pairs = HORIZON_BUCKETS.map(() => ({ forecast: [] as number[], actual: [] as number[] }));
    let banded = 0;
    let below = 0;
    let above = 0;
    let lastEnd = issue.issueTs;
    for (let i = 0; i < forecast.length; i++) {
      const slot = issue.visibleEnd + i;
      const value = actual[slot];
      const predicted = forecast[i]!;
      if (value === undefined || Number.isNaN(value) || Number.isNaN(predicted)) continue;
      const slotTs = state.slotTs(slot);
      const hours = horizonHours(slotTs, step, issue.issueTs);
      if (hours < 1) continue;
      const bucket = bucketIndex(hours);
      if (bucket < 0) continue;
      const s = sums[bucket]!;
      const error = value - predicted;
      s.n++;
      s.abs += Math.abs(error);
      s.sq += error * error;
      if (value !== 0) {
        s.pct += Math.abs(error / value);
        s.pctN++;
      }
      s.persistenceSq += (value - persistence[i]!) ** 2;
      s.climatologySq += (value - climatology[i]!) ** 2;
      const pool = pools[hours - 1];
      if (pool && pool.length >= MIN_BAND_SAMPLES) {
        banded++;
        s.banded++;
        if (error < quantile(pool, levels[0])) below++;
        else if (error > quantile(pool, levels[1])) above++;
        else s.inBand++;
      }
      pairs[bucket]!.forecast.push(predicted);
      pairs[bucket]!.actual.push(value);
      errors[hours - 1]!.push({ issue: index, end: slotTs + step, error });
      lastEnd = Math.max(lastEnd, slotTs + step);
    }
    if (banded > 0) pendingMisses.push({ knownAt: lastEnd, below, above, banded });
    pairs.forEach((pair, bucket) => {
      const rho = spearman(pair.forecast, pair.actual);
      if (rho === null) return;
      sums[bucket]!.spearman += rho;
      sums[bucket]!.spearmanN++;
    });
    savings.push(jobSaving(state, issue, forecast));
  }

  const savingsCaptured = captured(savings);
  const rows = HORIZON_BUCKETS.map(({ label }, bucket) => {
    const s = sums[bucket]!;
    const rmse = Math.sqrt(s.sq / s.n);
    return {
      bucket: label,
      model: modelId,
      n: s.n,
      mae: s.abs / s.n,
      rmse,
      mape: (100 * s.pct) / s.pctN,
      skill_vs_persistence: 1 - rmse / Math.sqrt(s.persistenceSq / s.n),
      skill_vs_climatology: 1 - rmse / Math.sqrt(s.climatologySq / s.n),
      spearman: s.spearman / s.spearmanN,
      p10_p90_coverage: s.inBand / s.banded,
      savings_captured: savingsCaptured,
    };
  });
  // The band served next: every error known after the last issue, at the levels reached.
  const finalPools = errorPools(errors, issues.length, Number.POSITIVE_INFINITY);
  const edge = (level: number) =>
    finalPools.map((pool) =>
      pool.length >= MIN_BAND_SAMPLES ? quantile(pool, level) : Number.NaN,
    );
  return { rows, band: { q10: edge(levels[0]), q90: edge(levels[1]) } };
}

interface ScoredError {
  readonly issue: number;
  /** When the interval scored ended (its value was published a lag later). */
  readonly end: number;
  readonly error: number;
}

/** The share of outcomes each edge of the band aims to leave outside. */
const TAIL = 0.1;
/** How far one issue's misses move a level. */
const ADAPT_RATE = 0.03;

function adaptLevels(
  [low, high]: [number, number],
  belowShare: number,
  aboveShare: number,
): [number, number] {
  const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));
  return [
    clamp(low + ADAPT_RATE * (TAIL - belowShare), 0.005, 0.3),
    clamp(high + ADAPT_RATE * (aboveShare - TAIL), 0.7, 0.995),
  ];
}

/**
 * Per hour ahead, sorted: the errors of the `BAND_ISSUES` issues before `beforeIssue` whose
 * intervals ended by `knownBy` (published by then), pooled with the neighbouring hours.
 */
function errorPools(
  errors: readonly (readonly ScoredError[])[],
  beforeIssue: number,
  knownBy: number,
): number[][] {
  const since = beforeIssue - BAND_ISSUES;
  // Each hour's errors in issue order: only the tail of each list is read.
  const recent = errors.map((list) => {
    const out: number[] = [];
    for (let k = list.length - 1; k >= 0; k--) {
      const entry = list[k]!;
      if (entry.issue < since) break;
      if (entry.issue < beforeIssue && entry.end <= knownBy) out.push(entry.error);
    }
    return out;
  });
  const pools: number[][] = [];
  for (let hour = 0; hour < HORIZON_HOURS; hour++) {
    const pool: number[] = [];
    const from = Math.max(0, hour - BAND_POOL_HOURS);
    const to = Math.min(HORIZON_HOURS - 1, hour + BAND_POOL_HOURS);
    for (let h = from; h <= to; h++) pool.push(...recent[h]!);
    pools.push(pool.sort((a, b) => a - b));
  }
  return pools;
}

/** Linear interpolation between order statistics of a sorted array. */
export function quantile(sorted: readonly number[], p: number): number {
  const position = (sorted.length - 1) * p;
  const below = Math.floor(position);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (position - below);
}

/** Spearman's rank correlation; null for fewer than 3 pairs or a constant side. */
export function spearman(a: readonly number[], b: readonly number[]): number | null {
  if (a.length < 3) return null;
  const ra = ranks(a);
  const rb = ranks(b);
  const mean = (ra.length + 1) / 2;
  let cov = 0;
  let va = 0;
  let vb = 0;
  for (let i = 0; i < ra.length; i++) {
    cov += (ra[i]! - mean) * (rb[i]! - mean);
    va += (ra[i]! - mean) ** 2;
    vb += (rb[i]! - mean) ** 2;
  }
  return va === 0 || vb === 0 ? null : cov / Math.sqrt(va * vb);
}

/** Ranks from 1, ties sharing their mean rank. */
function ranks(values: readonly number[]): number[] {
  const order = values.map((value, index) => ({ value, index })).sort((x, y) => x.value - y.value);
  const result = new Array<number>(values.length);
  for (let start = 0; start < order.length;) {
    let end = start;
    while (end + 1 < order.length && order[end + 1]!.value === order[start]!.value) end++;
    const rank = (start + end) / 2 + 1;
    for (let k = start; k <= end; k++) result[order[k]!.index] = rank;
    start = end + 1;
  }
  return result;
}

/**
 * A 4-hour job placed in the 24 hours after the issue where `forecast` is lowest: what it saved
 * against starting at once, and what the best placement in hindsight would have saved. Null when
 * the forecast or the outcome is incomplete there.
 */
function jobSaving(
  state: ZoneState,
  issue: IssueForecasts,
  forecast: Float64Array,
): { achieved: number; possible: number } | null {
  const step = state.series.step;
  const actual = state.series.values;
  const jobSlots = Math.ceil((JOB_HOURS * HOUR_SECONDS) / step);
  const windowSlots = Math.ceil((JOB_WINDOW_HOURS * HOUR_SECONDS) / step);
  // The first slot that starts at or after the issue time.
  const first = Math.ceil((issue.issueTs - state.series.startTs) / step);
  if (first < issue.visibleEnd) return null;
  const offset = first - issue.visibleEnd;
  if (offset + windowSlots > forecast.length || first + windowSlots > actual.length) return null;
  const starts = windowSlots - jobSlots + 1;
  let bestForecast = Number.POSITIVE_INFINITY;
  let chosen = 0;
  let oracle = Number.POSITIVE_INFINITY;
  let atOnce = 0;
  for (let start = 0; start < starts; start++) {
    let predicted = 0;
    let outcome = 0;
    for (let k = 0; k < jobSlots; k++) {
      predicted += forecast[offset + start + k]!;
      outcome += actual[first + start + k]!;
    }
    if (Number.isNaN(predicted) || Number.isNaN(outcome)) return null;
    if (start === 0) atOnce = outcome;
    if (predicted < bestForecast) {
      bestForecast = predicted;
      chosen = outcome;
    }
    oracle = Math.min(oracle, outcome);
  }
  return { achieved: (atOnce - chosen) / jobSlots, possible: (atOnce - oracle) / jobSlots };
}

/** The issue times of a walk-forward over `[fromTs, toTs]`: one every 24 hours from `fromTs`. */
export function dailyIssues(fromTs: number, toTs: number): number[] {
  const times: number[] = [];
  for (let ts = fromTs; ts <= toTs; ts += DAY_SECONDS) times.push(ts);
  return times;
}
