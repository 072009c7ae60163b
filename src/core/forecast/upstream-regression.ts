import {
  type Anchor,
  anchorOf,
  forEachTrainingBlock,
  type TrainingBlock,
  type ForecastModel,
  type Issue,
  nanArray,
  TRAINING_DAYS,
} from './forecast-model.js';
import { blendHandOvers } from './hand-over.js';
import { ColumnScale, NormalEquations } from './linalg.js';
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
    const byBucket = HORIZON_BUCKETS.map((_, bucket) =>
      fitBucket(zone, features, scale, issue, bucket),
    );
    const fits = [[] as FeatureName[], features].map((set, k) => ({
      set,
      width: BASE_FEATURES + set.length,
      buckets: byBucket.map((fit) => (k === 0 ? fit.own : fit.upstream)),
    }));
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

/** A scale of 1 throughout: `fillRow` then gives a row's features before any issue's scale. */
const UNIT_SCALE: Scale = { load: 1, demand: 1, profile: 1, share: 1 };

/**
 * One past issue's training targets of one bucket (forecast-model.ts `forEachTrainingBlock`),
 * their rows filled once, before any issue's scale, for the regression and the upstream-corrected
 * models alike, and the sums their fits are solved from (issue 38): each of the issues that train
 * on the past issue (the next TRAINING_DAYS at its time of day) adds the block's sums, scaled by
 * its own scale, instead of every row. The same fit as summing the scaled rows, to rounding.
 */
interface UpstreamBlock extends TrainingBlock {
  /** `fillRow` at UNIT_SCALE (`BASE_FEATURES` plus one column per upstream feature, each). */
  readonly rows: Float64Array;
  /** Whether every upstream feature of the row was known (`fillRow` said true). */
  readonly complete: Uint8Array;
  readonly actuals: Float64Array;
  readonly anchor: Anchor;
  readonly pastTs: number;
  /** Whether the shares' denominator is the scale's (no load forecast nor generation profile). */
  readonly shareScaled: boolean;
  /** The regression's sums over the first `published` rows, as last asked. */
  sums?: RegressionSums;
  /** By corrected model: the correction's sums, as last asked. */
  readonly corrections: Map<string, CorrectionSums>;
}

interface RegressionSums {
  published: number;
  /** The zone's own fit: every row, the first BASE_FEATURES columns. */
  readonly own: NormalEquations;
  /**
   * The upstream fit: the complete rows, every column; null where the zone has no upstream
   * features (no upstream fit is made).
   */
  readonly upstream: NormalEquations | null;
}

interface CorrectionSums {
  published: number;
  /** What the base's values depend on besides the past issue (its fits). */
  readonly key: unknown;
  /** Intercept and the upstream columns of the complete rows, against what the base missed. */
  readonly equations: NormalEquations;
}

/** Keys the upstream models' blocks among the training blocks of a zone. */
const UPSTREAM_BLOCKS = {};

/** By zone, the blocks of the last issue, per bucket, and how many rows of each are published. */
const lastBlocks = new WeakMap<
  ZoneState,
  { issueTs: number; visibleEnd: number; byBucket: (IncludedBlock[] | undefined)[] }
>();

interface IncludedBlock {
  readonly block: UpstreamBlock;
  readonly published: number;
}

/** The training blocks of `bucket` at `issue` on the zone's upstream `features`, oldest last. */
function upstreamBlocks(
  zone: ZoneState,
  features: FeatureName[],
  issue: Issue,
  bucket: number,
): IncludedBlock[] {
  let last = lastBlocks.get(zone);
  if (last?.issueTs !== issue.issueTs || last.visibleEnd !== issue.visibleEnd) {
    last = { ...issue, byBucket: [] };
    lastBlocks.set(zone, last);
  }
  let included = last.byBucket[bucket];
  if (!included) {
    const list: IncludedBlock[] = [];
    forEachTrainingBlock(
      UPSTREAM_BLOCKS,
      zone,
      issue,
      bucket,
      TRAINING_DAYS,
      (anchor, pastTs, slots) => upstreamBlock(zone, features, anchor, pastTs, slots),
      (block, published) => list.push({ block, published }),
    );
    last.byBucket[bucket] = included = list;
  }
  return included;
}

function upstreamBlock(
  zone: ZoneState,
  features: FeatureName[],
  anchor: Anchor,
  pastTs: number,
  slots: readonly number[],
): UpstreamBlock {
  const stride = BASE_FEATURES + features.length;
  const count = slots.length;
  const rows = new Float64Array(count * stride);
  const complete = new Uint8Array(count);
  const actuals = new Float64Array(count);
  const row = new Float64Array(stride);
  slots.forEach((slot, r) => {
    complete[r] = fillRow(row, zone, features, UNIT_SCALE, anchor, pastTs, slot) ? 1 : 0;
    rows.set(row, r * stride);
    actuals[r] = zone.series.values[slot]!;
  });
  const { load, generation } = zone.inputs.upstream;
  return {
    slots: Int32Array.from(slots),
    rows,
    complete,
    actuals,
    anchor,
    pastTs,
    shareScaled: !(load ?? generation) && !anchor.generationProfile,
    corrections: new Map(),
  };
}

/**
 * The block's regression sums over its first `published` rows. Rows are summed in order, so sums
 * of fewer rows are extended by the rows published since: the same numbers as summing anew.
 */
function regressionSums(block: UpstreamBlock, published: number, stride: number): RegressionSums {
  let sums = block.sums;
  if (!sums || sums.published > published) {
    sums = block.sums = {
      published: 0,
      own: new NormalEquations(BASE_FEATURES),
      upstream: stride > BASE_FEATURES ? new NormalEquations(stride) : null,
    };
  }
  const { own, upstream } = sums;
  for (let r = sums.published; r < published; r++) {
    own.addFrom(block.rows, r * stride, BASE_FEATURES, block.actuals[r]!);
    if (upstream && block.complete[r] === 1)
      upstream.addFrom(block.rows, r * stride, stride, block.actuals[r]!);
  }
  sums.published = published;
  return sums;
}

/** What a block's sums are multiplied by at one scale: the regression's columns, the correction's. */
interface BlockScales {
  readonly regression: ColumnScale;
  readonly correction: ColumnScale;
}

/**
 * By scale (one per issue, `featureScale`): the blocks' scales, those whose shares are divided by
 * the scale's (`shareScaled`) second. Every fit of the issue scales dozens of blocks alike.
 */
const blockScalesByScale = new WeakMap<Scale, readonly BlockScales[]>();

function blockScales(features: FeatureName[], scale: Scale): readonly BlockScales[] {
  let scales = blockScalesByScale.get(scale);
  if (!scales) {
    scales = [false, true].map((shareScaled) => {
      const factors = columnFactors(features, scale, shareScaled);
      // The correction's columns: the intercept, then the upstream features.
      const correction = new Float64Array(1 + features.length);
      correction[0] = 1;
      correction.set(factors.subarray(BASE_FEATURES), 1);
      return { regression: new ColumnScale(factors), correction: new ColumnScale(correction) };
    });
    blockScalesByScale.set(scale, scales);
  }
  return scales;
}

/**
 * Per column of a block's rows, what its values are multiplied by at `scale` (`fillRow` divides
 * them by the scale's means).
 */
function columnFactors(features: FeatureName[], scale: Scale, shareScaled: boolean): Float64Array {
  const share = shareScaled ? 1 / scale.share : 1;
  const factors = new Float64Array(BASE_FEATURES + features.length);
  factors.fill(1, 0, BASE_FEATURES);
  features.forEach((name, k) => {
    factors[BASE_FEATURES + k] =
      name === 'windShare' || name === 'solarShare'
        ? share
        : name === 'windLevel' || name === 'solarLevel'
          ? share / scale.profile
          : name === 'loadRatio'
            ? 1 / scale.load
            : name === 'demandRatio'
              ? 1 / scale.demand
              : 1;
  });
  return factors;
}

/**
 * Least squares over the slots of `bucket` of the issues of the previous TRAINING_DAYS days (one
 * a day, at the issue's time of day), each seeing what it would have seen then: the zone's own
 * fit (every row, no upstream feature) and the upstream fit (the complete rows). Undefined with
 * too few rows to fit; the upstream fit too where the zone has no upstream features.
 */
function fitBucket(
  zone: ZoneState,
  features: FeatureName[],
  scale: Scale,
  issue: Issue,
  bucket: number,
): { own: Float64Array | undefined; upstream: Float64Array | undefined } {
  const stride = BASE_FEATURES + features.length;
  const own = new NormalEquations(BASE_FEATURES);
  // Without upstream features there is no upstream fit: its sums are neither kept nor added.
  const upstream = features.length > 0 ? new NormalEquations(stride) : null;
  const scales = blockScales(features, scale);
  for (const { block, published } of upstreamBlocks(zone, features, issue, bucket)) {
    const sums = regressionSums(block, published, stride);
    own.addSums(sums.own);
    if (upstream) upstream.addSums(sums.upstream!, scales[block.shareScaled ? 1 : 0]!.regression);
  }
  return { own: own.solve(), upstream: upstream?.solve() };
}

/**
 * What a base forecast missed at the past issues a correction is fitted on: `at` its value of
 * `slot` as the past issue (its anchor and time) would have had it, the same wherever `key` of
 * the target's bucket is.
 */
export interface MissedBase {
  key(bucket: number): unknown;
  at(pastAnchor: Anchor, pastTs: number, slot: number): number;
}

/**
 * Least squares of what a base missed (`modelId`'s, `base`) on an intercept and the upstream
 * features, over the complete rows of the training blocks of `bucket` where the base has a
 * value, as `fitBucket` fits.
 */
export function fitCorrection(
  zone: ZoneState,
  features: FeatureName[],
  scale: Scale,
  issue: Issue,
  bucket: number,
  modelId: string,
  base: MissedBase,
): Float64Array | undefined {
  const stride = BASE_FEATURES + features.length;
  const width = 1 + features.length;
  const equations = new NormalEquations(width);
  const key = base.key(bucket);
  const scales = blockScales(features, scale);
  for (const { block, published } of upstreamBlocks(zone, features, issue, bucket)) {
    let sums = block.corrections.get(modelId);
    if (!sums || sums.key !== key || sums.published > published) {
      sums = { published: 0, key, equations: new NormalEquations(width) };
      block.corrections.set(modelId, sums);
    }
    extendCorrectionSums(block, sums, published, stride, base);
    equations.addSums(sums.equations, scales[block.shareScaled ? 1 : 0]!.correction);
  }
  return equations.solve();
}

/**
 * The correction's sums extended to the block's first `published` rows (rows are summed in
 * order: the same numbers as summing them anew).
 */
function extendCorrectionSums(
  block: UpstreamBlock,
  sums: CorrectionSums,
  published: number,
  stride: number,
  base: MissedBase,
): void {
  if (sums.published === published) return;
  const { equations } = sums;
  const width = equations.width;
  const x = new Float64Array(width);
  for (let r = sums.published; r < published; r++) {
    if (block.complete[r] !== 1) continue;
    const missed = block.actuals[r]! - base.at(block.anchor, block.pastTs, block.slots[r]!);
    if (Number.isNaN(missed)) continue;
    x[0] = 1;
    for (let c = 1; c < width; c++) x[c] = block.rows[r * stride + BASE_FEATURES + c - 1]!;
    equations.add(x, missed);
  }
  sums.published = published;
}
