import {
  type Anchor,
  anchorOf,
  forEachTrainingTarget,
  type ForecastModel,
  type Issue,
  nanArray,
  TRAINING_DAYS,
} from './forecast-model.js';
import { blendHandOvers } from './hand-over.js';
import { NormalEquations } from './linalg.js';
import {
  bucketIndex,
  DAY_SECONDS,
  HORIZON_BUCKETS,
  HOUR_SECONDS,
  horizonHours,
  type IssuedSeries,
  servedHours,
} from './series.js';
import type { UpstreamInputs, ZoneState } from './zone-state.js';

/**
 * The upstream regression and its features (the upstream forecasts as shares and ratios), which
 * the upstream-corrected models reuse.
 */

/**
 * Per-zone linear regression of the value on its hour-of-week profile, the newest value and its
 * profile value (each with a short and a long decay) and every upstream forecast the zone has, as
 * issued before the issue time: forecast wind and solar as shares of the forecast load (or
 * scheduled generation, or, without either, of the zone's hour-of-week mean generation) alone and
 * times the profile (displacement scales with what is displaced), the load against its mean
 * (ENTSO-E), the demand forecast against its mean (EIA), the operator's intensity forecast (NESO).
 * Two fits per horizon bucket on the issues of the previous 35 days at the same time of day, with
 * a small ridge penalty: one with the upstream features, one on the zone's own features alone,
 * which serves where the upstream forecasts do not reach (or a zone has none). Hand-overs between
 * fits (bucket to bucket, upstream to own) are blended (hand-over.ts).
 */
export const UPSTREAM_REGRESSION: ForecastModel = {
  id: 'upstream-regression@2',
  inputsOf: (zone) => ['history', ...upstreamInputNames(zone)],
  predict(zone, issue, end) {
    const out = nanArray(end - issue.visibleEnd);
    const anchor = anchorOf(zone, issue.visibleEnd);
    if (!anchor) return out;
    const features = featureSet(zone.inputs.upstream);
    const scale = featureScale(zone, features, issue);
    const fits = [[] as string[], features].map((set) => {
      const width = BASE_FEATURES + set.length;
      return {
        set: set as FeatureName[],
        width,
        buckets: HORIZON_BUCKETS.map((_, bucket) =>
          set === features && features.length === 0
            ? undefined
            : fitBucket(zone, set as FeatureName[], scale, issue, bucket, width),
        ),
      };
    });
    const buckets = HORIZON_BUCKETS.length;
    // Source k * buckets + b: fit k (0 own, 1 upstream) with bucket b's coefficients.
    const sources = Array.from({ length: 2 * buckets }, () => nanArray(out.length));
    const choice = new Uint8Array(out.length);
    const row = new Float64Array(BASE_FEATURES + features.length);
    for (let i = 0; i < out.length; i++) {
      const slot = issue.visibleEnd + i;
      const hours = servedHours(horizonHours(zone.slotTs(slot), zone.series.step, issue.issueTs));
      const bucket = bucketIndex(hours);
      let chosen = -1;
      fits.forEach((fit, k) => {
        if (k === 1 && features.length === 0) return;
        if (!fillRow(row, zone, fit.set, scale, anchor, issue.issueTs, slot)) return;
        // Each fit only in its own bucket's hours: a hand-over never reads it outside them.
        const coefficients = fit.buckets[bucket];
        if (!coefficients) return;
        let value = 0;
        for (let c = 0; c < fit.width; c++) value += coefficients[c]! * row[c]!;
        sources[k * buckets + bucket]![i] = value;
        chosen = k * buckets + bucket;
      });
      choice[i] = chosen < 0 ? bucket : chosen;
    }
    const blended = blendHandOvers(sources, choice, HOUR_SECONDS / zone.series.step);
    out.set(blended);
    return out;
  },
};

/**
 * intercept, profile, and the newest value and its profile each with a short and a long decay:
 * the fit can then hold the newest value (persistence), let its departure from the profile fade,
 * or anything between, as the zone's own history says.
 */
export const BASE_FEATURES = 6;
export const SHORT_DECAY_HOURS = 6;
const LONG_DECAY_HOURS = 36;

export type FeatureName =
  | 'windShare'
  | 'windLevel'
  | 'solarShare'
  | 'solarLevel'
  | 'loadRatio'
  | 'demandRatio'
  | 'operator';

/** The upstream features a zone has: every upstream forecast it has is used. */
export function featureSet(upstream: UpstreamInputs): FeatureName[] {
  const names: FeatureName[] = [];
  if (upstream.wind?.size) names.push('windShare', 'windLevel');
  if (upstream.solar?.size) names.push('solarShare', 'solarLevel');
  if ((upstream.load ?? upstream.generation)?.size) names.push('loadRatio');
  if (upstream.demandForecast?.size) names.push('demandRatio');
  if (upstream.operatorForecast?.size) names.push('operator');
  return names;
}

/** The upstream forecasts the regression reads for `zone`, as the skill table names them. */
export function upstreamInputNames(zone: ZoneState): string[] {
  const { upstream } = zone.inputs;
  const names: string[] = [];
  if (upstream.wind?.size) names.push('wind');
  if (upstream.solar?.size) names.push('solar');
  if (upstream.load?.size) names.push('load');
  else if (upstream.generation?.size) names.push('generation');
  else if ((upstream.wind?.size || upstream.solar?.size) && zone.inputs.generation)
    names.push('generation-profile');
  if (upstream.demandForecast?.size) names.push('demand-forecast');
  if (upstream.operatorForecast?.size) names.push('operator');
  return names;
}

/** Means that put the features near 1, measured on what was known at the issue. */
export interface Scale {
  readonly load: number;
  readonly demand: number;
  /** The mean of the profile: the `*Level` features are shares times the profile over it. */
  readonly profile: number;
  /** Without a load forecast or a generation history, the shares' denominator. */
  readonly share: number;
}

/** By zone, the scale of the last issue asked for: every upstream model asks for it at an issue. */
const lastScales = new WeakMap<
  ZoneState,
  { issueTs: number; visibleEnd: number; features: FeatureName[]; scale: Scale }
>();

export function featureScale(zone: ZoneState, features: FeatureName[], issue: Issue): Scale {
  const last = lastScales.get(zone);
  if (
    last?.issueTs === issue.issueTs &&
    last.visibleEnd === issue.visibleEnd &&
    last.features.join() === features.join()
  ) {
    return last.scale;
  }
  const scale = measureScale(zone, features, issue);
  lastScales.set(zone, { ...issue, features, scale });
  return scale;
}

function measureScale(zone: ZoneState, features: FeatureName[], issue: Issue): Scale {
  const { upstream } = zone.inputs;
  const from = Math.max(0, issue.visibleEnd - (TRAINING_DAYS * DAY_SECONDS) / zone.series.step);
  const meanOf = (series: IssuedSeries | undefined): number => {
    if (!series) return Number.NaN;
    let sum = 0;
    let count = 0;
    for (let slot = from; slot < issue.visibleEnd; slot++) {
      const value = series.valueAt(slot, issue.issueTs);
      if (Number.isNaN(value)) continue;
      sum += value;
      count++;
    }
    return count > 0 ? sum / count : Number.NaN;
  };
  const positive = (value: number) => (value > 0 ? value : 1);
  const profile = zone.profile(issue.visibleEnd);
  let profileMean = 0;
  for (const value of profile ?? []) profileMean += value / profile!.length;
  return {
    load: features.includes('loadRatio')
      ? positive(meanOf(upstream.load ?? upstream.generation))
      : 1,
    demand: features.includes('demandRatio') ? positive(meanOf(upstream.demandForecast)) : 1,
    profile: positive(profileMean),
    share: positive(2 * ((meanOf(upstream.wind) || 0) + (meanOf(upstream.solar) || 0))),
  };
}

/** A forecast for `slot` as known at `issueTs`, divided by `divisor`; NaN when missing. */
const forecastRatio = (
  forecast: IssuedSeries | undefined,
  slot: number,
  issueTs: number,
  divisor: number,
): number => (forecast?.valueAt(slot, issueTs) ?? Number.NaN) / divisor;

/** The regression's inputs for `slot` as known at `issueTs`; false when one is missing. */
export function fillRow(
  row: Float64Array,
  zone: ZoneState,
  features: FeatureName[],
  scale: Scale,
  anchor: Anchor,
  issueTs: number,
  slot: number,
): boolean {
  const { upstream } = zone.inputs;
  const slotsAfter = slot - anchor.latestSlot;
  const profileValue = anchor.profile[zone.slotOfWeek(slot)]!;
  row[0] = 1;
  row[1] = profileValue;
  const short = zone.decay(SHORT_DECAY_HOURS).at(slotsAfter);
  const long = zone.decay(LONG_DECAY_HOURS).at(slotsAfter);
  const latestProfile = anchor.latest - anchor.anomaly;
  row[2] = anchor.latest * short;
  row[3] = anchor.latest * long;
  row[4] = latestProfile * short;
  row[5] = latestProfile * long;
  if (features.length === 0) return true;
  const loadForecast = (upstream.load ?? upstream.generation)?.valueAt(slot, issueTs);
  // The shares' denominator: the load forecast, else the zone's hour-of-week mean generation as
  // known at the anchor, else a constant (a share of the forecasts' own scale).
  const denominator =
    loadForecast ?? anchor.generationProfile?.[zone.slotOfWeek(slot)] ?? scale.share;
  const level = profileValue / scale.profile;
  for (let k = 0; k < features.length; k++) {
    let value: number;
    switch (features[k]!) {
      case 'windShare':
        value = forecastRatio(upstream.wind, slot, issueTs, denominator);
        break;
      case 'windLevel':
        value = forecastRatio(upstream.wind, slot, issueTs, denominator) * level;
        break;
      case 'solarShare':
        value = forecastRatio(upstream.solar, slot, issueTs, denominator);
        break;
      case 'solarLevel':
        value = forecastRatio(upstream.solar, slot, issueTs, denominator) * level;
        break;
      case 'loadRatio':
        value = (loadForecast ?? Number.NaN) / scale.load;
        break;
      case 'demandRatio':
        value = forecastRatio(upstream.demandForecast, slot, issueTs, scale.demand);
        break;
      case 'operator':
        value = upstream.operatorForecast?.valueAt(slot, issueTs) ?? Number.NaN;
        break;
    }
    if (!Number.isFinite(value)) return false;
    row[BASE_FEATURES + k] = value;
  }
  return true;
}

/**
 * One issue's training targets of one bucket (forecast-model.ts `forEachTrainingTarget`), their
 * rows filled once for the regression and the upstream-corrected models alike.
 */
export interface TrainingRows {
  readonly count: number;
  /** The upstream set's rows (`stride` columns each); the first BASE_FEATURES are always set. */
  readonly stride: number;
  readonly rows: Float64Array;
  /** Whether every upstream feature of the row was known (`fillRow` said true). */
  readonly complete: Uint8Array;
  readonly actuals: Float64Array;
  readonly anchors: readonly Anchor[];
  readonly pastTimes: Float64Array;
  readonly slots: Int32Array;
}

/** By zone, the training rows of the last issue and scale, per bucket. */
const lastRows = new WeakMap<
  ZoneState,
  { issueTs: number; visibleEnd: number; scale: Scale; byBucket: (TrainingRows | undefined)[] }
>();

/** The training rows of `bucket` at `issue`, on the zone's upstream `features` and `scale`. */
export function trainingRows(
  zone: ZoneState,
  features: FeatureName[],
  scale: Scale,
  issue: Issue,
  bucket: number,
): TrainingRows {
  let last = lastRows.get(zone);
  if (
    last?.issueTs !== issue.issueTs ||
    last.visibleEnd !== issue.visibleEnd ||
    last.scale !== scale
  ) {
    last = { ...issue, scale, byBucket: [] };
    lastRows.set(zone, last);
  }
  let rows = last.byBucket[bucket];
  if (!rows) last.byBucket[bucket] = rows = fillTrainingRows(zone, features, scale, issue, bucket);
  return rows;
}

function fillTrainingRows(
  zone: ZoneState,
  features: FeatureName[],
  scale: Scale,
  issue: Issue,
  bucket: number,
): TrainingRows {
  const stride = BASE_FEATURES + features.length;
  const anchors: Anchor[] = [];
  const pastTimes: number[] = [];
  const slots: number[] = [];
  const actuals: number[] = [];
  forEachTrainingTarget(zone, issue, bucket, (anchor, pastTs, slot, actual) => {
    anchors.push(anchor);
    pastTimes.push(pastTs);
    slots.push(slot);
    actuals.push(actual);
  });
  const count = anchors.length;
  const rows = new Float64Array(count * stride);
  const complete = new Uint8Array(count);
  const row = new Float64Array(stride);
  for (let r = 0; r < count; r++) {
    complete[r] = fillRow(row, zone, features, scale, anchors[r]!, pastTimes[r]!, slots[r]!)
      ? 1
      : 0;
    rows.set(row, r * stride);
  }
  return {
    count,
    stride,
    rows,
    complete,
    actuals: new Float64Array(actuals),
    anchors,
    pastTimes: new Float64Array(pastTimes),
    slots: new Int32Array(slots),
  };
}

/**
 * Least squares over the slots of `bucket` of the issues of the previous TRAINING_DAYS days (one
 * a day, at the issue's time of day), each seeing what it would have seen then. Undefined with
 * too few rows to fit.
 */
function fitBucket(
  zone: ZoneState,
  features: FeatureName[],
  scale: Scale,
  issue: Issue,
  bucket: number,
  width: number,
): Float64Array | undefined {
  const equations = new NormalEquations(width);
  const all = featureSet(zone.inputs.upstream);
  const { count, stride, rows, complete, actuals } = trainingRows(zone, all, scale, issue, bucket);
  // The zone's own fit (no upstream features) takes every row; the upstream one, complete rows.
  const own = features.length === 0;
  for (let r = 0; r < count; r++) {
    if (own || complete[r] === 1) equations.addFrom(rows, r * stride, width, actuals[r]!);
  }
  return equations.solve();
}
