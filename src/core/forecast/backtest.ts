import { CLIMATOLOGY_ANOMALY, PERSISTENCE, WEEKLY_PROFILE } from './baselines.js';
import { type ForecastBasis, type ForecastModel, horizonEnd } from './forecast-model.js';
import { CANDIDATE_MODELS } from './models.js';
import { OPERATOR_FORECAST } from './operator-forecast.js';
import { CLIMATOLOGY } from './profile-models.js';
import { type UpstreamInputs, type ZoneInputs, ZoneState } from './zone-state.js';
import {
  type BacktestIdentity,
  fallBackReason,
  type FallBackReason,
  isSettled,
  publishedEnd,
  resumable,
  stateToKeep,
  type StoredIssue,
  type ZoneBacktestState,
} from './backtest-state.js';
import { blendHandOvers } from './hand-over.js';
import {
  type BucketLabel,
  HORIZON_BUCKETS,
  HOUR_SECONDS,
  IssuedSeries,
  type IssuedSeriesData,
  type RegularSeries,
} from './series.js';
import {
  type ErrorBand,
  type IssueForecasts,
  SERVED,
  type SkillRow,
  WalkForward,
  type WalkForwardData,
} from './walk-forward.js';

export type { ForecastBasis, IssueForecasts, SkillRow };

/**
 * The walk-forward backtest: at every issue time a model sees only the values published by then
 * (the zone's usual publication lag) and the upstream forecasts issued by then, forecasts 72 hours,
 * and is scored against what was published later. Its out-of-sample errors give each zone's
 * P10-P90 band and decide which model serves each horizon bucket. Pure: the CLI and `serve` load
 * the data and store the result.
 */

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
  /**
   * The state the previous run of the zone kept (`keep`): its issues are not forecast again when
   * it still holds (backtest-state.ts), and the result is the same as without it.
   */
  readonly previous?: ZoneBacktestState;
  /** Called with the state the next run resumes from. */
  readonly keep?: (state: ZoneBacktestState) => void;
  /** Called once: null when `previous` was resumed from, else why the zone ran from its first issue. */
  readonly onResumption?: (fellBack: FallBackReason | null) => void;
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
 * nothing but typed arrays, Maps, numbers and strings crosses (the resumed and kept states too).
 */
export function backtestZoneData(
  zone: string,
  basis: ForecastBasis,
  inputs: ZoneInputsData,
  issueTimes: readonly number[],
  candidateIds: readonly string[],
  resume: Pick<BacktestOptions, 'previous' | 'keep' | 'onResumption'> = {},
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
  return backtestZone(zone, basis, state, { issueTimes, candidates, ...resume });
}

/** The models a zone-base's backtest forecasts with, and what identifies it to a stored state. */
function backtestPlan(
  zone: string,
  basis: ForecastBasis,
  state: ZoneState,
  options: Pick<BacktestOptions, 'candidates' | 'issueTimes'>,
) {
  // A model with nothing to say of the zone (upstream forecasts it has none of) is no candidate.
  const candidates = options.candidates.filter((model) => model.appliesTo?.(state) ?? true);
  // Where a candidate has no value the climatology serves (prepare.ts): scored the same way. The
  // operator's forecast is republished as it is, and ends where it ends.
  const fallback = candidates.some((model) => model.id === OPERATOR_FORECAST.id)
    ? undefined
    : CLIMATOLOGY;
  const models = [...candidates, PERSISTENCE, WEEKLY_PROFILE, CLIMATOLOGY_ANOMALY];
  if (fallback && !models.includes(fallback)) models.push(fallback);
  const asked: BacktestIdentity = {
    zone,
    basis,
    models: models.map((model) => model.id),
    issueTimes: options.issueTimes,
  };
  return { candidates, fallback, models, asked };
}

/**
 * Whether `backtestZone` with these options would resume from `options.previous` (null) or why it
 * would run from the first issue; changes nothing (a caller picks where the zone-base runs).
 */
export function resumptionOf(
  zone: string,
  basis: ForecastBasis,
  state: ZoneState,
  options: Pick<BacktestOptions, 'candidates' | 'issueTimes' | 'previous'>,
): FallBackReason | null {
  return fallBackReason(options.previous, state, backtestPlan(zone, basis, state, options).asked);
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
  const { candidates, fallback, models, asked } = backtestPlan(zone, basis, state, options);
  const candidateIds = candidates.map((model) => model.id);
  const resumption = resumable(options.previous, state, asked);
  options.onResumption?.('fellBack' in resumption ? resumption.fellBack : null);
  const previous = 'state' in resumption ? resumption.state : undefined;
  // Walk-forward: each issue is served, bucket by bucket, by a weighted mean of the candidates
  // that erred least over the earlier issues whose outcomes were published by then, each
  // weighted by its inverse mean squared error (a combination beats the choice of one forecast
  // when each errs its own way), its next day's shape then refitted for placing a job
  // (day-shape.ts), not where the operator's forecast is republished as it is; the forecast so
  // served is scored (and its errors make the band) like any model (walk-forward.ts).
  const walk = new WalkForward(state, candidateIds, fallback !== undefined, previous?.checkpoint);
  const published = publishedEnd(state.series.values);
  // The state to keep: the walk-forward before the first issue not yet settled, and the issues
  // from there on.
  let checkpoint: WalkForwardData | undefined;
  const tail: StoredIssue[] = [];
  const issues: IssueForecasts[] = [];
  const add = (issue: IssueForecasts) => {
    if (options.keep) {
      if (!checkpoint && !isSettled(state, issue.issueTs, published)) checkpoint = walk.snapshot();
      if (checkpoint) tail.push({ ...issue, values: new Map(issue.values) });
    }
    walk.add(issue);
    if (options.onIssues) issues.push(issue);
  };
  for (const issue of previous?.tail ?? []) {
    add({ ...issue, values: new Map(issue.values) });
    yield;
  }
  const newIssues = previous
    ? options.issueTimes.filter((issueTs) => issueTs > previous.lastIssueTs)
    : options.issueTimes;
  for (const issueTs of newIssues) {
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
    add({ issueTs, visibleEnd, values });
    yield;
  }
  if (options.keep && options.issueTimes.length > 0) {
    options.keep(stateToKeep(state, asked, checkpoint ?? walk.snapshot(), tail));
  }
  options.onIssues?.(issues);
  const result = walk.finish();
  // What serves next: the weights the newest outcomes give.
  const served = {} as Record<BucketLabel, string>;
  const servedWeights = {} as Record<BucketLabel, Record<string, number>>;
  HORIZON_BUCKETS.forEach(({ label }, bucket) => {
    const row = result.finalWeights.subarray(
      bucket * candidateIds.length,
      (bucket + 1) * candidateIds.length,
    );
    servedWeights[label] = Object.fromEntries(candidateIds.map((id, k) => [id, row[k]!]));
    served[label] = candidateIds[row.indexOf(Math.max(...row))]!;
  });
  const rows: SkillRow[] = [];
  HORIZON_BUCKETS.forEach(({ label }, bucket) => {
    candidates.forEach((model, k) => {
      rows.push({
        ...result.rows[k]![bucket]!,
        inputs: model.inputsOf(state),
        served: model.id === served[label],
      });
    });
  });
  const inputs = [...new Set(candidates.flatMap((model) => model.inputsOf(state)))];
  const asServed = result.servedRows.map((row, bucket) => ({
    ...row,
    model: served[HORIZON_BUCKETS[bucket]!.label],
    served: true,
    inputs,
    chosen: result.chosen[bucket]!,
  }));
  const nextDayShape = result.nextDayShape;
  return {
    zone,
    basis,
    from: walk.firstIssueTs,
    to: walk.lastIssueTs,
    issues: walk.issues,
    rows,
    served,
    weights: servedWeights,
    ...(nextDayShape && {
      dayShapeWeights: Object.fromEntries(candidateIds.map((id, k) => [id, nextDayShape[k]!])),
    }),
    bands: { [SERVED]: result.band },
    asServed,
  };
}

/** `own`, its NaNs filled from `filler`, the hand-overs blended (hand-over.ts). */
export function fillFrom(own: Float64Array, filler: Float64Array, step: number): Float64Array {
  if (!own.some(Number.isNaN)) return own;
  const choice = own.map((value) => (Number.isNaN(value) ? 1 : 0));
  return blendHandOvers([own, filler], choice, HOUR_SECONDS / step);
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
