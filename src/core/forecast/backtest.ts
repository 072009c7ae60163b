import type { Basis } from '../factors.js';
import { CLIMATOLOGY_ANOMALY, PERSISTENCE, WEEKLY_PROFILE } from './baselines.js';
import { type ForecastModel, horizonEnd } from './forecast-model.js';
import { CANDIDATE_MODELS } from './models.js';
import { OPERATOR_FORECAST } from './operator-forecast.js';
import { CLIMATOLOGY } from './profile-models.js';
import { type UpstreamInputs, type ZoneInputs, ZoneState } from './zone-state.js';
import { reshapeDay, weighDayShapes } from './day-shape.js';
import { ErrorPools, type ScoredError } from './error-pools.js';
import { blendHandOvers } from './hand-over.js';
import {
  type BucketLabel,
  bucketIndex,
  HORIZON_BUCKETS,
  HORIZON_HOURS,
  DAY_SECONDS,
  HOUR_SECONDS,
  horizonHours,
  IssuedSeries,
  type IssuedSeriesData,
  type RegularSeries,
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
  /**
   * Against the hour-of-week mean of the last ten weeks plus the newest value's departure,
   * decaying with a 24-hour e-folding time (issue 19's yardstick). Not served by the API (yet).
   */
  readonly skill_vs_climatology_anomaly?: number;
  /** What the model read (`history`, upstream forecast kinds). Not served by the API (yet). */
  readonly inputs?: readonly string[];
  /** Mean per issue of the rank correlation of forecast and outcome within the bucket. */
  readonly spearman: number;
  /** Share of outcomes inside the P10-P90 band known at the issue (walk-forward). */
  readonly p10_p90_coverage: number;
  /**
   * Share of the banded outcomes whose band, as the error quantiles gave it, lay wholly above or
   * below the forecast (a biased point forecast), so that only widening it to contain the
   * forecast made it legal. The forecast as served only; not served by the API.
   */
  readonly band_clamped?: number;
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
interface ErrorBand {
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
  /**
   * Per bucket, the weight of each candidate in the forecast served next (walk-forward inverse
   * mean squared errors of the WEIGHED_CANDIDATES best, 0 for the others); `served` names the
   * heaviest. Absent in runs stored before issue 19.
   */
  readonly weights?: Readonly<Record<BucketLabel, Readonly<Record<string, number>>>>;
  /**
   * The weight of each candidate's shape in the next day's shape served next (day-shape.ts);
   * absent until enough days are published, and where the operator's forecast is republished.
   */
  readonly dayShapeWeights?: Readonly<Record<string, number>>;
  /** By model id, or SERVED: the band of the forecast as served (what `serve` uses). */
  readonly bands: Readonly<Record<string, ErrorBand>>;
  /**
   * Per bucket, the forecast as served (each issue by the models chosen walk-forward from the
   * earlier issues' published outcomes): `model` is what serves next, `chosen` the share of
   * issues each candidate served (its mean weight). Absent in runs stored before issue 19.
   */
  readonly asServed?: readonly (SkillRow & { readonly chosen: Readonly<Record<string, number>> })[];
}

/**
 * The rows the skill table publishes, one per bucket: the forecast as served, which is what
 * `/v1/intensity/forecast` answers and what the band was measured on, named by the candidate
 * serving next; from runs stored before issue 19 (no `asServed`), the served candidate's own.
 */
export function publishedRows(entry: ZoneBacktest): readonly SkillRow[] {
  return entry.asServed ?? entry.rows.filter((row) => row.served);
}

/** One run of the backtest over every zone and basis, as stored and served. */
export interface BacktestRun {
  /** When it was run, epoch seconds. */
  readonly createdAt: number;
  readonly zones: readonly ZoneBacktest[];
}

export interface BacktestOptions {
  /** Issue times, ascending (`issueTimes`: one every 6 h). */
  readonly issueTimes: readonly number[];
  /** The models competing to serve, first preferred on a tie. */
  readonly candidates: readonly ForecastModel[];
  /**
   * Called once with every issue's forecasts (each candidate, the baselines and SERVED, slots
   * from `visibleEnd`): the GBM yardstick (bench/reference) scores the same forecasts outside.
   */
  readonly onIssues?: (issues: readonly IssueForecasts[]) => void;
}

/** At least this many earlier errors (pooled over neighbouring hours) before coverage counts. */
const MIN_BAND_SAMPLES = 40;
/** The band used for the next issues is refreshed this often. */
const BAND_REFRESH_SECONDS = 7 * DAY_SECONDS;
const JOB_HOURS = 4;
const JOB_WINDOW_HOURS = 24;

export interface IssueForecasts {
  readonly issueTs: number;
  readonly visibleEnd: number;
  /** One array per model id (candidates and baselines), slots from visibleEnd. */
  readonly values: Map<string, Float64Array>;
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

/** A zone's inputs as plain data: what a worker receives (issue 21). */
export interface ZoneInputsData {
  readonly actual: RegularSeries;
  readonly upstream: Readonly<Partial<Record<keyof UpstreamInputs, IssuedSeriesData>>>;
  readonly generation?: RegularSeries;
  readonly publicationLagSeconds: number;
}

export function zoneInputsData(inputs: ZoneInputs): ZoneInputsData {
  return {
    actual: inputs.actual,
    upstream: Object.fromEntries(
      Object.entries(inputs.upstream).map(([name, series]) => [name, series.toData()]),
    ),
    ...(inputs.generation && { generation: inputs.generation }),
    publicationLagSeconds: inputs.publicationLagSeconds,
  };
}

/**
 * `backtestZone` on plain data in and out (models named by id), so that it can run in a worker:
 * nothing but typed arrays, numbers and strings crosses.
 */
export function backtestZoneData(
  zone: string,
  basis: ForecastBasis,
  inputs: ZoneInputsData,
  issueTimes: readonly number[],
  candidateIds: readonly string[],
): ZoneBacktest {
  const candidates = candidateIds.map((id) => {
    const model = [...CANDIDATE_MODELS, OPERATOR_FORECAST].find((entry) => entry.id === id);
    if (!model) throw new Error(`unknown model ${id}`);
    return model;
  });
  const upstream = Object.fromEntries(
    Object.entries(inputs.upstream).map(([name, data]) => [name, IssuedSeries.fromData(data)]),
  );
  const state = new ZoneState({ ...inputs, upstream });
  return backtestZone(zone, basis, state, { issueTimes, candidates });
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
  // A model with nothing to say of the zone (upstream forecasts it has none of) is no candidate.
  const candidates = options.candidates.filter((model) => model.appliesTo?.(state) ?? true);
  // Where a candidate has no value the climatology serves (prepare.ts): scored the same way. The
  // operator's forecast is republished as it is, and ends where it ends.
  const fallback = candidates.some((model) => model.id === OPERATOR_FORECAST.id)
    ? undefined
    : CLIMATOLOGY;
  const models = [...candidates, PERSISTENCE, WEEKLY_PROFILE, CLIMATOLOGY_ANOMALY];
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
    if (candidates.every((model) => values.get(model.id)!.every(Number.isNaN))) continue;
    if (fallback) {
      const filler = values.get(fallback.id)!;
      for (const model of candidates) {
        values.set(model.id, fillFrom(values.get(model.id)!, filler, state.series.step));
      }
    }
    issues.push({ issueTs, visibleEnd, values });
    yield;
  }
  const scored: { model: string; rows: Omit<SkillRow, 'served'>[]; perIssue: IssueErrors[] }[] = [];
  for (const model of candidates) {
    const { rows, perIssue } = yield* scoreModel(state, issues, model.id, false);
    scored.push({
      model: model.id,
      rows: rows.map((row) => ({ ...row, inputs: model.inputsOf(state) })),
      perIssue,
    });
  }
  // Walk-forward: each issue is served, bucket by bucket, by a weighted mean of the candidates
  // that erred least over the earlier issues whose outcomes were published by then, each
  // weighted by its inverse mean squared error (a combination beats the choice of one forecast
  // when each errs its own way); the forecast so served is scored (and its errors make the band)
  // like any model.
  const lag = state.inputs.publicationLagSeconds;
  const weights = weighWalkForward(issues, scored, lag);
  const candidateIds = candidates.map((model) => model.id);
  const sourcesOf = (index: number) => candidateIds.map((id) => issues[index]!.values.get(id)!);
  // The next day's shape is then refitted for placing a job (day-shape.ts), walk-forward too;
  // not where the operator's forecast is republished as it is.
  const dayShapes = fallback ? weighDayShapes(state, issues, sourcesOf) : [];
  // The last entry is fitted for after the last issue: what `serve` applies next.
  const nextDayShape = dayShapes.at(-1);
  for (const [index, issue] of issues.entries()) {
    const sources = sourcesOf(index);
    const combined = combine(state, issue, sources, weights[index]!);
    const dayShape = dayShapes[index];
    issue.values.set(
      SERVED,
      dayShape ? reshapeDay(state, issue, combined, sources, dayShape) : combined,
    );
  }
  options.onIssues?.(issues);
  const asServedScore = yield* scoreModel(state, issues, SERVED, true);
  // What serves next: the weights the newest outcomes give.
  const finalWeights = weighWalkForward(issues, scored, lag, true)[0]!;
  const served = {} as Record<BucketLabel, string>;
  const servedWeights = {} as Record<BucketLabel, Record<string, number>>;
  HORIZON_BUCKETS.forEach(({ label }, bucket) => {
    const row = finalWeights.subarray(
      bucket * candidateIds.length,
      (bucket + 1) * candidateIds.length,
    );
    servedWeights[label] = Object.fromEntries(candidateIds.map((id, k) => [id, row[k]!]));
    served[label] = candidateIds[row.indexOf(Math.max(...row))]!;
  });
  const rows: SkillRow[] = [];
  HORIZON_BUCKETS.forEach(({ label }, bucket) => {
    for (const { model, rows: modelRows } of scored) {
      rows.push({ ...modelRows[bucket]!, served: model === served[label] });
    }
  });
  const inputs = [...new Set(candidates.flatMap((model) => model.inputsOf(state)))];
  const asServed = asServedScore.rows.map((row, bucket) => ({
    ...row,
    model: served[HORIZON_BUCKETS[bucket]!.label],
    served: true,
    inputs,
    chosen: meanWeights(weights, bucket, candidateIds),
  }));
  return {
    zone,
    basis,
    from: issues[0]?.issueTs ?? null,
    to: issues.at(-1)?.issueTs ?? null,
    issues: issues.length,
    rows,
    served,
    weights: servedWeights,
    ...(nextDayShape && {
      dayShapeWeights: Object.fromEntries(candidateIds.map((id, k) => [id, nextDayShape[k]!])),
    }),
    bands: { [SERVED]: asServedScore.band },
    asServed,
  };
}

/** `own`, its NaNs filled from `filler`, the hand-overs blended (hand-over.ts). */
export function fillFrom(own: Float64Array, filler: Float64Array, step: number): Float64Array {
  if (!own.some(Number.isNaN)) return own;
  const choice = own.map((value) => (Number.isNaN(value) ? 1 : 0));
  return blendHandOvers([own, filler], choice, HOUR_SECONDS / step);
}

/** The key of the walk-forward served forecast among an issue's values and in `bands`. */
export const SERVED = 'served';

/** How far back the walk-forward weights look: half a year ranks the candidates steadily. */
const WEIGHT_DAYS = 180;
/**
 * Candidates weighed per bucket: the best this many over WEIGHT_DAYS; the others weigh 0. The
 * candidates err much alike, and one a little behind the best three adds more of its error than
 * of its difference (docs/forecast.md: the combination).
 */
const WEIGHED_CANDIDATES = 3;
/**
 * Weights go with the inverse mean squared error to this power: above 1, a candidate clearly
 * worse than the others (persistence a day ahead) weighs little.
 */
const WEIGHT_POWER = 2;

interface IssueErrors {
  /** When every outcome scored for this issue had been published. */
  readonly knownAt: number;
  readonly sq: Float64Array;
  readonly n: Float64Array;
}

/**
 * Per issue (or, with `last`, once for after the last issue): per bucket and candidate (index
 * `bucket * candidates + k`), the candidate's weight: for the WEIGHED_CANDIDATES best, its inverse
 * mean squared error (to WEIGHT_POWER) over the earlier issues of the last WEIGHT_DAYS whose
 * outcomes were published by the issue time, else 0; the weights of a bucket summing to 1. All on
 * the first candidate before any outcome is known.
 */
function weighWalkForward(
  issues: readonly IssueForecasts[],
  scored: readonly { perIssue: readonly IssueErrors[] }[],
  lagSeconds: number,
  last = false,
): Float64Array[] {
  const buckets = HORIZON_BUCKETS.length;
  const count = scored.length;
  const times = last ? [Number.POSITIVE_INFINITY] : issues.map((issue) => issue.issueTs);
  return times.map((at) => {
    const lastIssueTs = Number.isFinite(at) ? at : (issues.at(-1)?.issueTs ?? 0) + DAY_SECONDS;
    const since = lastIssueTs - WEIGHT_DAYS * DAY_SECONDS;
    const weights = new Float64Array(buckets * count);
    // Per candidate, one pass over the earlier issues sums every bucket's errors.
    const inverses = scored.map(({ perIssue }) => {
      const sq = new Float64Array(buckets);
      const n = new Float64Array(buckets);
      for (let k = perIssue.length - 1; k >= 0; k--) {
        if (issues[k]!.issueTs < since) break;
        const errors = perIssue[k]!;
        if (errors.knownAt + lagSeconds > at) continue;
        for (let bucket = 0; bucket < buckets; bucket++) {
          sq[bucket]! += errors.sq[bucket]!;
          n[bucket]! += errors.n[bucket]!;
        }
      }
      return Array.from(n, (count, bucket) =>
        count > 0 ? (count / Math.max(sq[bucket]!, 1e-9)) ** WEIGHT_POWER : Number.NaN,
      );
    });
    for (let bucket = 0; bucket < buckets; bucket++) {
      const measured = inverses.map((byBucket) => byBucket[bucket]!);
      // Ties at the cut all weigh: no candidate is dropped for its place in the list.
      const cut = measured.filter((value) => !Number.isNaN(value)).sort((a, b) => b - a)[
        WEIGHED_CANDIDATES - 1
      ];
      const inverse = measured.map((value) => (cut !== undefined && value < cut ? 0 : value));
      const total = inverse.reduce((sum, value) => sum + (Number.isNaN(value) ? 0 : value), 0);
      inverse.forEach((value, k) => {
        weights[bucket * count + k] =
          total > 0 ? (Number.isNaN(value) ? 0 : value / total) : k === 0 ? 1 : 0;
      });
    }
    return weights;
  });
}

/** Per candidate id, its mean weight over the issues in `bucket`. */
function meanWeights(
  weights: readonly Float64Array[],
  bucket: number,
  ids: readonly string[],
): Record<string, number> {
  const means: Record<string, number> = {};
  ids.forEach((id, k) => {
    let sum = 0;
    for (const issue of weights) sum += issue[bucket * ids.length + k]!;
    means[id] = weights.length > 0 ? sum / weights.length : 0;
  });
  return means;
}

/**
 * One forecast from several: per bucket the weighted mean of `sources` (weights as
 * weighWalkForward lays them out), the hand-overs from bucket to bucket blended (hand-over.ts).
 */
export function combine(
  state: ZoneState,
  issue: { readonly issueTs: number; readonly visibleEnd: number },
  sources: readonly Float64Array[],
  weights: Float64Array,
): Float64Array {
  const length = sources[0]!.length;
  const count = sources.length;
  const buckets = HORIZON_BUCKETS.length;
  const mixed = Array.from({ length: buckets }, () => new Float64Array(length));
  const choice = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    const hours = horizonHours(
      state.slotTs(issue.visibleEnd + i),
      state.series.step,
      issue.issueTs,
    );
    choice[i] = bucketIndex(servedHours(hours));
    for (let bucket = 0; bucket < buckets; bucket++) {
      let value = 0;
      for (let k = 0; k < count; k++) {
        const weight = weights[bucket * count + k]!;
        if (weight > 0) value += weight * sources[k]![i]!;
      }
      mixed[bucket]![i] = value;
    }
  }
  return blendHandOvers(mixed, choice, HOUR_SECONDS / state.series.step);
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
  anomalySq: number;
  inBand: number;
  banded: number;
  clamped: number;
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
  anomalySq: 0,
  inBand: 0,
  banded: 0,
  clamped: 0,
  spearman: 0,
  spearmanN: 0,
});

/**
 * Scores one model over every issue, walking forward, a step per issue: its rows, its errors per
 * issue and, when `banded`, its band (the band's coverage is measured only then: pooling and
 * sorting errors is most of the backtest's work).
 */
function* scoreModel(
  state: ZoneState,
  issues: readonly IssueForecasts[],
  modelId: string,
  banded: boolean,
): Generator<void, { rows: Omit<SkillRow, 'served'>[]; band: ErrorBand; perIssue: IssueErrors[] }> {
  const actual = state.series.values;
  const step = state.series.step;
  const lag = state.inputs.publicationLagSeconds;
  const sums = HORIZON_BUCKETS.map(emptySums);
  // Errors by hour ahead (index hours - 1), in issue order.
  const errors: ScoredError[][] = Array.from({ length: HORIZON_HOURS }, () => []);
  const bandPools = new ErrorPools(errors);
  const issueTimes = issues.map((issue) => issue.issueTs);
  let pools: Float64Array[] = [];
  let poolsAt = Number.NEGATIVE_INFINITY;
  // Per bucket, the quantile levels of the band's edges, adapted so that a tenth of the outcomes
  // falls below and a tenth above (adaptive conformal inference, Gibbs & Candes 2021). An issue's
  // misses adapt them only once its outcomes would have been published.
  let levels: [number, number][] = HORIZON_BUCKETS.map(() => [TAIL, 1 - TAIL]);
  const pendingMisses: { knownAt: number; misses: BucketMisses[] }[] = [];
  const savings: ({ achieved: number; possible: number } | null)[] = [];
  const perIssue: IssueErrors[] = [];

  for (const [index, issue] of issues.entries()) {
    yield;
    // What was published by this issue time: errors of intervals over by then, misses known.
    const knownBy = issue.issueTs - lag;
    while (pendingMisses.length > 0 && pendingMisses[0]!.knownAt <= knownBy) {
      const { misses } = pendingMisses.shift()!;
      levels = levels.map((level, bucket) => {
        const { below, above, banded: count } = misses[bucket]!;
        return count > 0 ? adaptLevels(level, below / count, above / count) : level;
      });
    }
    if (banded && issue.issueTs - poolsAt >= BAND_REFRESH_SECONDS) {
      pools = bandPools.at(issueTimes, index, knownBy);
      poolsAt = issue.issueTs;
    }
    const forecast = issue.values.get(modelId)!;
    const persistence = issue.values.get(PERSISTENCE.id)!;
    const climatology = issue.values.get(WEEKLY_PROFILE.id)!;
    const anomaly = issue.values.get(CLIMATOLOGY_ANOMALY.id)!;
    const pairs = HORIZON_BUCKETS.map(() => ({ forecast: [] as number[], actual: [] as number[] }));
    const misses: BucketMisses[] = HORIZON_BUCKETS.map(() => ({ below: 0, above: 0, banded: 0 }));
    const issueSq = new Float64Array(HORIZON_BUCKETS.length);
    const issueN = new Float64Array(HORIZON_BUCKETS.length);
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
      issueSq[bucket]! += error * error;
      issueN[bucket]! += 1;
      if (value !== 0) {
        s.pct += Math.abs(error / value);
        s.pctN++;
      }
      s.persistenceSq += (value - persistence[i]!) ** 2;
      s.climatologySq += (value - climatology[i]!) ** 2;
      s.anomalySq += (value - anomaly[i]!) ** 2;
      const pool = pools[hours - 1];
      if (banded && pool && pool.length >= MIN_BAND_SAMPLES) {
        const [low, high] = levels[bucket]!;
        const miss = misses[bucket]!;
        miss.banded++;
        s.banded++;
        const lowEdge = quantile(pool, low);
        const highEdge = quantile(pool, high);
        if (lowEdge > 0 || highEdge < 0) s.clamped++;
        // The band always contains the forecast (prepare.ts serves it so).
        if (error < Math.min(0, lowEdge)) miss.below++;
        else if (error > Math.max(0, highEdge)) miss.above++;
        else s.inBand++;
      }
      pairs[bucket]!.forecast.push(predicted);
      pairs[bucket]!.actual.push(value);
      if (banded) errors[hours - 1]!.push({ issue: index, end: slotTs + step, error });
      lastEnd = Math.max(lastEnd, slotTs + step);
    }
    if (misses.some((miss) => miss.banded > 0)) pendingMisses.push({ knownAt: lastEnd, misses });
    perIssue.push({ knownAt: lastEnd, sq: issueSq, n: issueN });
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
      skill_vs_climatology_anomaly: 1 - rmse / Math.sqrt(s.anomalySq / s.n),
      spearman: s.spearman / s.spearmanN,
      p10_p90_coverage: s.inBand / s.banded,
      ...(banded && { band_clamped: s.clamped / s.banded }),
      savings_captured: savingsCaptured,
    };
  });
  // The band served next: every error known after the last issue, at the levels reached.
  const finalPools = banded
    ? bandPools.at(issueTimes, issues.length, Number.POSITIVE_INFINITY)
    : [];
  const edge = (side: 0 | 1) =>
    Array.from({ length: HORIZON_HOURS }, (_, hour) => {
      const pool = finalPools[hour];
      if (!pool || pool.length < MIN_BAND_SAMPLES) return Number.NaN;
      const value = quantile(pool, levels[bucketIndex(hour + 1)]![side]);
      return side === 0 ? Math.min(0, value) : Math.max(0, value);
    });
  return { rows, band: { q10: edge(0), q90: edge(1) }, perIssue };
}

interface BucketMisses {
  below: number;
  above: number;
  banded: number;
}

/** The share of outcomes each edge of the band aims to leave outside. */
const TAIL = 0.1;
/**
 * How far one issue's misses move a level. Small: an issue's misses are known only once its 72
 * hours are published (a dozen issues later at one every 6 hours), and a level adapted on stale
 * news swings past its mark, more often to the narrow side (a quantile widens slower than it
 * narrows in the tails): coverage then falls below target.
 */
const ADAPT_RATE = 0.005;

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

/** Linear interpolation between order statistics of a sorted array. */
export function quantile(sorted: ArrayLike<number>, p: number): number {
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

/** Hours between the issue times of a walk-forward: through the day, so that what serves at
 * 14:00 was learned from issues at that time of day too. */
export const ISSUE_EVERY_HOURS = 6;

/** The issue times of a walk-forward over `[fromTs, toTs]`: one every `everyHours` from `fromTs`. */
export function issueTimes(fromTs: number, toTs: number, everyHours = ISSUE_EVERY_HOURS): number[] {
  const times: number[] = [];
  for (let ts = fromTs; ts <= toTs; ts += everyHours * HOUR_SECONDS) times.push(ts);
  return times;
}
