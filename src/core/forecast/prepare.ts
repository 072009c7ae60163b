import { fillFrom, type ForecastBasis, type ZoneBacktest } from './backtest.js';
import { combine, SERVED } from './walk-forward.js';
import { blendHandOvers } from './hand-over.js';
import { reshapeDay } from './day-shape.js';
import { type ForecastModel, horizonEnd } from './forecast-model.js';
import { CANDIDATE_MODELS } from './models.js';
import { OPERATOR_FORECAST } from './operator-forecast.js';
import { CLIMATOLOGY } from './profile-models.js';
import type { ZoneState } from './zone-state.js';
import {
  bucketIndex,
  HORIZON_BUCKETS,
  HORIZON_HOURS,
  HOUR_SECONDS,
  horizonHours,
  servedHours,
} from './series.js';

/** One zone's forecast on one basis, interval by interval at the zone's resolution. */
export interface ZoneForecast {
  readonly zone: string;
  /** What the response's `basis` echoes. */
  readonly basis: ForecastBasis;
  /** `name@version` of the model that made the first interval's value. */
  readonly model: string;
  /** When this forecast was computed, epoch seconds. */
  readonly generatedAt: number;
  /** Start of the first interval forecast: the one after the zone's newest published reading. */
  readonly startTs: number;
  readonly stepSeconds: number;
  /** One per interval from `startTs`, up to 72 hours past `generatedAt`. */
  readonly values: Float64Array;
  /** NaN where the backtest has not measured the model's errors at that horizon yet. */
  readonly p10: Float64Array;
  readonly p90: Float64Array;
}

/**
 * Every model that may serve: the backtest's candidates (taken from its list, so that a new
 * candidate's weight is never dropped here) and GB's operator forecast.
 */
const MODELS: readonly ForecastModel[] = [...CANDIDATE_MODELS, OPERATOR_FORECAST];
const MODEL_IDS: ReadonlySet<string> = new Set(MODELS.map(({ id }) => id));

/**
 * Whether a stored backtest names only models this version has. One stored by a version with
 * other candidates cannot be served as it was measured: its weights lose the models renamed or
 * retired, and its served models stand in for the mix.
 */
export function namesKnownModels(backtest: ZoneBacktest): boolean {
  const named = [
    ...Object.values(backtest.served),
    ...Object.values(backtest.weights ?? {}).flatMap((weights) => Object.keys(weights)),
    ...Object.keys(backtest.dayShapeWeights ?? {}),
  ];
  return named.every((id) => MODEL_IDS.has(id));
}

const nanFilled = (length: number): Float64Array => new Float64Array(length).fill(Number.NaN);

/**
 * The forecast issued at `issueTs` from everything published so far: each horizon bucket by the
 * weighted mean of the candidates the backtest weighed there, the next day reshaped by its day
 * shape (a run stored before the weights: the model it found best; the climatology without a
 * backtest, or where a model has no value), the band from the measured errors of the forecast as
 * served. GB's own figure is the operator's forecast alone, as far as it reaches. Null when the
 * zone has too little history.
 */
export function prepareForecast(
  zone: string,
  basis: ForecastBasis,
  state: ZoneState,
  issueTs: number,
  backtest: ZoneBacktest | undefined,
): ZoneForecast | null {
  const latest = state.latestSlot(state.series.values.length);
  if (latest < 0 || !state.profile(latest + 1)) return null;
  const issue = { issueTs, visibleEnd: latest + 1 };
  // One hour past 72: a forecast served until the next recompute still reaches now + 72 h.
  const end = horizonEnd(state, issueTs, HORIZON_HOURS + 1);
  const predictions = new Map<string, Float64Array>();
  const predict = (model: ForecastModel): Float64Array => {
    let values = predictions.get(model.id);
    if (!values) {
      values = model.predict(state, issue, end);
      predictions.set(model.id, values);
    }
    return values;
  };
  const length = Math.max(0, end - issue.visibleEnd);
  const values = new Float64Array(length);
  const p10 = new Float64Array(length);
  const p90 = new Float64Array(length);
  // The operator's forecast may start after the newest published half hour: GB's own starts there.
  const skip = basis === 'operator' ? leadingGap(predict(OPERATOR_FORECAST)) : 0;
  // Per slot, the model serving its bucket; where it has no value the climatology's is used, and
  // every hand-over is blended (hand-over.ts), as the backtest scored it.
  const modelAt = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    const hours = servedHours(
      horizonHours(state.slotTs(issue.visibleEnd + i), state.series.step, issueTs),
    );
    const bucket = HORIZON_BUCKETS[bucketIndex(hours)]!.label;
    const index = MODELS.findIndex(({ id }) => id === backtest?.served[bucket]);
    modelAt[i] = basis === 'operator' ? MODELS.indexOf(OPERATOR_FORECAST) : Math.max(0, index);
  }
  // The weighted mean the backtest measured, bucket by bucket; unless it names models this
  // version does not have (a run stored by an earlier version): then its served models.
  const weights =
    backtest?.weights && namesKnownModels(backtest)
      ? Float64Array.from(
          HORIZON_BUCKETS.flatMap(({ label }) =>
            MODELS.map((model) => backtest.weights![label][model.id] ?? 0),
          ),
        )
      : undefined;
  // Only the models that serve are predicted: one weighed at zero everywhere, or never a
  // candidate in this zone, would cost its predictions for nothing.
  const serving = new Set<ForecastModel>([CLIMATOLOGY]);
  if (weights) {
    MODELS.forEach((model, k) => {
      const weighedAt = (bucket: number) => weights[bucket * MODELS.length + k]! > 0;
      if (HORIZON_BUCKETS.some((_, bucket) => weighedAt(bucket))) serving.add(model);
      if ((backtest?.dayShapeWeights?.[model.id] ?? 0) > 0) serving.add(model);
    });
  } else {
    for (const index of modelAt) serving.add(MODELS[index]!);
  }
  const filled = MODELS.map((model) =>
    model === OPERATOR_FORECAST || !serving.has(model)
      ? nanFilled(length)
      : fillFrom(predict(model), predict(CLIMATOLOGY), state.series.step),
  );
  const forecast =
    basis === 'operator'
      ? predict(OPERATOR_FORECAST)
      : weights
        ? withDayShape(state, issue, combine(state, issue, filled, weights), filled, backtest)
        : blendHandOvers(filled, modelAt, HOUR_SECONDS / state.series.step);
  let firstModel: string | undefined;
  let count = length;
  for (let i = skip; i < length; i++) {
    const slot = issue.visibleEnd + i;
    const hours = servedHours(horizonHours(state.slotTs(slot), state.series.step, issueTs));
    const value = forecast[i]!;
    if (Number.isNaN(value)) {
      // The operator's forecast ends (about 48 hours out): so does GB's own.
      count = i;
      break;
    }
    let model = MODELS[modelAt[i]!]!;
    if (Number.isNaN(predict(model)[i]!)) model = CLIMATOLOGY;
    firstModel ??= model.id;
    // The band of the forecast as served, else (runs stored before issue 19) the model's own.
    const band = backtest?.bands[SERVED] ?? backtest?.bands[model.id];
    // Intensity is never negative: an additive departure or a regression can say so. The band
    // always contains the value: a chart must never show a forecast outside its own band.
    values[i] = Math.max(0, value);
    p10[i] = Math.min(values[i]!, Math.max(0, value + measured(band?.q10[hours - 1])));
    p90[i] = Math.max(values[i]!, value + measured(band?.q90[hours - 1]));
  }
  return {
    zone,
    basis,
    model: firstModel ?? (basis === 'operator' ? OPERATOR_FORECAST.id : CLIMATOLOGY.id),
    generatedAt: issueTs,
    startTs: state.slotTs(issue.visibleEnd + skip),
    stepSeconds: state.series.step,
    values: values.subarray(skip, Math.max(skip, count)),
    p10: p10.subarray(skip, Math.max(skip, count)),
    p90: p90.subarray(skip, Math.max(skip, count)),
  };
}

/** The next day's shape as the backtest fitted it last (day-shape.ts), where it did. */
function withDayShape(
  state: ZoneState,
  issue: { readonly issueTs: number; readonly visibleEnd: number },
  combined: Float64Array,
  filled: readonly Float64Array[],
  backtest: ZoneBacktest | undefined,
): Float64Array {
  const dayShape = backtest?.dayShapeWeights;
  if (!dayShape) return combined;
  const weights = Float64Array.from(MODELS, (model) => dayShape[model.id] ?? 0);
  return reshapeDay(state, issue, combined, filled, weights);
}

/** A stored band quantile; unmeasured ones were NaN, which JSON keeps as null. */
const measured = (quantile: number | null | undefined): number =>
  typeof quantile === 'number' ? quantile : Number.NaN;

function leadingGap(values: Float64Array): number {
  const first = values.findIndex((value) => !Number.isNaN(value));
  return first < 0 ? values.length : first;
}
