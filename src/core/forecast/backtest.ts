import type { Basis } from '../factors.js';
import type {
  ZoneState} from './models.js';
import {
  type ForecastModel,
  horizonEnd,
  PERSISTENCE,
  WEEKLY_PROFILE
} from './models.js';
import {
  type BucketLabel,
  bucketIndex,
  HORIZON_BUCKETS,
  HORIZON_HOURS,
  HOUR_SECONDS,
  horizonHours,
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

/** Quantiles of a model's out-of-sample error (outcome - forecast) by hour ahead, 1 to 72. */
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
  const models = [...options.candidates, PERSISTENCE, WEEKLY_PROFILE];
  const issues: IssueForecasts[] = [];
  for (const issueTs of options.issueTimes) {
    const visibleEnd = state.visibleEndAt(issueTs);
    if (!state.profile(visibleEnd) || state.latestSlot(visibleEnd) < 0) continue;
    const end = horizonEnd(state, issueTs);
    const values = new Map<string, Float64Array>();
    for (const model of models)
      values.set(model.id, model.predict(state, { issueTs, visibleEnd }, end));
    issues.push({ issueTs, visibleEnd, values });
  }
  const bands = new Map<string, ErrorBand>();
  const scored = options.candidates.map((model) => {
    const { rows, band } = scoreModel(state, issues, model.id);
    bands.set(model.id, band);
    return { model: model.id, rows };
  });
  const served = {} as Record<BucketLabel, string>;
  const rows: SkillRow[] = [];
  HORIZON_BUCKETS.forEach(({ label }, bucket) => {
    let best: { model: string; rmse: number } | undefined;
    for (const { model, rows: modelRows } of scored) {
      const row = modelRows[bucket]!;
      if (row.n > 0 && (!best || row.rmse < best.rmse)) best = { model, rmse: row.rmse };
    }
    served[label] = best?.model ?? options.candidates[0]!.id;
    for (const { model, rows: modelRows } of scored) {
      rows.push({ ...modelRows[bucket]!, served: model === served[label] });
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
function scoreModel(
  state: ZoneState,
  issues: readonly IssueForecasts[],
  modelId: string,
): { rows: Omit<SkillRow, 'served'>[]; band: ErrorBand } {
  const actual = state.series.values;
  const step = state.series.step;
  const sums = HORIZON_BUCKETS.map(emptySums);
  // Errors by hour ahead (index hours - 1), each with the index of its issue.
  const errors: { issue: number; error: number }[][] = Array.from(
    { length: HORIZON_HOURS },
    () => [],
  );
  let band: ErrorBand | undefined;
  let savedAchieved = 0;
  let savedPossible = 0;

  issues.forEach((issue, index) => {
    if (index % BAND_REFRESH_ISSUES === 0) band = bandOf(errors, index);
    const forecast = issue.values.get(modelId)!;
    const persistence = issue.values.get(PERSISTENCE.id)!;
    const climatology = issue.values.get(WEEKLY_PROFILE.id)!;
    const pairs = HORIZON_BUCKETS.map(() => ({ forecast: [] as number[], actual: [] as number[] }));
    for (let i = 0; i < forecast.length; i++) {
      const slot = issue.visibleEnd + i;
      const value = actual[slot];
      const predicted = forecast[i]!;
      if (value === undefined || Number.isNaN(value) || Number.isNaN(predicted)) continue;
      const hours = horizonHours(state.slotTs(slot), step, issue.issueTs);
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
      const q10 = band?.q10[hours - 1];
      const q90 = band?.q90[hours - 1];
      if (q10 !== undefined && q90 !== undefined && Number.isFinite(q10) && Number.isFinite(q90)) {
        s.banded++;
        if (value >= predicted + q10 && value <= predicted + q90) s.inBand++;
      }
      pairs[bucket]!.forecast.push(predicted);
      pairs[bucket]!.actual.push(value);
      errors[hours - 1]!.push({ issue: index, error });
    }
    pairs.forEach((pair, bucket) => {
      const rho = spearman(pair.forecast, pair.actual);
      if (rho === null) return;
      sums[bucket]!.spearman += rho;
      sums[bucket]!.spearmanN++;
    });
    const saving = jobSaving(state, issue, forecast);
    if (saving) {
      savedAchieved += saving.achieved;
      savedPossible += saving.possible;
    }
  });

  const captured = savedPossible > 0 ? savedAchieved / savedPossible : Number.NaN;
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
      savings_captured: captured,
    };
  });
  return { rows, band: bandOf(errors, issues.length) };
}

/**
 * P10 and P90 of the errors of the `BAND_ISSUES` issues before `beforeIssue`, per hour ahead,
 * pooled with the neighbouring hours; NaN where fewer than MIN_BAND_SAMPLES are known.
 */
function bandOf(
  errors: readonly { issue: number; error: number }[][],
  beforeIssue: number,
): ErrorBand {
  const q10: number[] = [];
  const q90: number[] = [];
  const since = beforeIssue - BAND_ISSUES;
  for (let hour = 0; hour < HORIZON_HOURS; hour++) {
    const pool: number[] = [];
    const from = Math.max(0, hour - BAND_POOL_HOURS);
    const to = Math.min(HORIZON_HOURS - 1, hour + BAND_POOL_HOURS);
    for (let h = from; h <= to; h++) {
      for (const { issue, error } of errors[h]!) {
        if (issue >= since && issue < beforeIssue) pool.push(error);
      }
    }
    if (pool.length < MIN_BAND_SAMPLES) {
      q10.push(Number.NaN);
      q90.push(Number.NaN);
      continue;
    }
    pool.sort((a, b) => a - b);
    q10.push(quantile(pool, 0.1));
    q90.push(quantile(pool, 0.9));
  }
  return { q10, q90 };
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
  for (let ts = fromTs; ts <= toTs; ts += 24 * HOUR_SECONDS) times.push(ts);
  return times;
}
