import type { DepartureFit, DepartureVariant } from './departure-fit.js';
import {
  type Anchor,
  anchorOf,
  dailyBase,
  daysToPublishAll,
  forEachTrainingBlock,
  type ForecastModel,
  HISTORY_ONLY,
  nanArray,
} from './forecast-model.js';
import { blendHandOvers } from './hand-over.js';
import {
  type DepartureBlock,
  DepartureSums,
  type IncludedRows,
  SPARSE_STRIDE,
} from './departure-sums.js';
import {
  bucketIndex,
  DAY_SECONDS,
  HORIZON_BUCKETS,
  HOUR_SECONDS,
  horizonHours,
  servedHours,
  WEEK_SECONDS,
} from './series.js';
import { featureSet, SHORT_DECAY_HOURS } from './upstream-regression.js';
import {
  CLIMATOLOGY_WEEKS,
  DAILY_PROFILE_DAYS,
  type FitCarrier,
  type ZoneState,
} from './zone-state.js';

/** The departure regressions: the daily base corrected by a year of what it missed. */

/** Days of earlier issues the departure regression is fitted on: a year of each hour of the week. */
export const DEPARTURE_TRAINING_DAYS = 365;
/** The departure regression is refitted every this many days (a year of rows moves slowly). */
export const DEPARTURE_REFIT_DAYS = 7;

/**
 * The daily base (`dailyBase`: the recent days' hour-of-day profile plus the newest value's
 * departure, decaying over a day) corrected by a ridge regression of what it missed, fitted per
 * horizon bucket on the issues of the previous year at the same time of day (refitted weekly), on:
 * the hour-of-week profile's difference from the daily one, the newest departure with a short and
 * a long decay and with a coefficient per hour ahead, the last hours' change, the same hour a day
 * and a week before, the last day's and week's level, and the mean of what the base missed at
 * each hour of the week over that year. What a gradient-boosted model learns from a year of
 * issues (the day of the week, how a departure fades at each hour of the day), as a linear fit
 * that a week of new issues moves little (docs/forecast.md: against the yardstick).
 */
function departureRegression(
  id: string,
  variant: DepartureVariant,
  appliesTo?: (zone: ZoneState) => boolean,
): ForecastModel {
  return {
    id,
    inputsOf: HISTORY_ONLY,
    ...(appliesTo && { appliesTo }),
    predict(zone, issue, end) {
      const out = nanArray(end - issue.visibleEnd);
      const anchor = anchorOf(zone, issue.visibleEnd);
      if (!anchor) return out;
      const fits = HORIZON_BUCKETS.map((_, bucket) =>
        departureFit(zone, variant, issue.issueTs, bucket),
      );
      const buckets = HORIZON_BUCKETS.length;
      const sources = Array.from({ length: buckets }, () => nanArray(out.length));
      const choice = new Uint8Array(out.length);
      const recent = recentValues(zone, anchor);
      const row = new DepartureRow(variant);
      for (let i = 0; i < out.length; i++) {
        const slot = issue.visibleEnd + i;
        const hours = servedHours(horizonHours(zone.slotTs(slot), zone.series.step, issue.issueTs));
        const bucket = bucketIndex(hours);
        choice[i] = bucket;
        const fit = fits[bucket];
        if (!fit) continue;
        row.fill(zone, anchor, recent, slot, hours, bucket);
        sources[bucket]![i] =
          row.base + row.dot(fit.coefficients, fit.offsets[zone.slotOfWeek(slot)]!);
      }
      out.set(blendHandOvers(sources, choice, HOUR_SECONDS / zone.series.step));
      return out;
    },
  };
}

/** The departure regression's inputs without the four-week mean. */
export const PLAIN_DEPARTURE: DepartureVariant = { fourWeeks: false };

/**
 * A candidate only where the zone has no upstream forecasts: elsewhere `departure-upstream@1`
 * takes its place, the same forecast beyond the upstream's reach, which the best three would
 * otherwise weigh twice.
 */
export const DEPARTURE_REGRESSION = departureRegression(
  'departure-regression@1',
  PLAIN_DEPARTURE,
  (zone) => featureSet(zone.inputs.upstream).length === 0,
);

/**
 * The same regression with one more input: the four-week hour-of-day mean, every day alike (the
 * yardstick's anchor), less the daily profile, whose recent days weigh more. Where the level has
 * moved within the month the two fits part, and the mean of the best three gains from both
 * (docs/forecast.md: the best three).
 */
export const DEPARTURE_FOUR_WEEKS = departureRegression('departure-four-weeks@1', {
  fourWeeks: true,
});

/**
 * The departure regression's dense features (intercept; hour-of-week profile less the daily one;
 * the newest departure decaying short and slow; the last hour's and three hours' change, fading;
 * the same hour a day and a week before; the last day's and week's level), then the hour of the
 * week's mean miss; the per-hour ones follow.
 */
const DEPARTURE_DENSE = 10;

/** The variant's place among the two: a zone's fits are kept by it. */
const variantIndex = (variant: DepartureVariant): number => (variant.fourWeeks ? 1 : 0);

/** The variant's dense inputs; the hour of the week's mean miss is the column after them. */
const denseOf = (variant: DepartureVariant): number =>
  DEPARTURE_DENSE + (variant.fourWeeks ? 1 : 0);
/** E-folding times of the newest departure's slow fade and of the last hours' change, hours. */
const SLOW_DECAY_HOURS = 72;
const TREND_DECAY_HOURS = 3;

/** What the newest values say at one issue, apart from the hour being forecast. */
export interface RecentValues {
  /** The newest value's departure from the daily profile. */
  readonly departure: number;
  /** The newest value less the one an hour and three hours before it (0 when unpublished). */
  readonly lastHourChange: number;
  readonly lastThreeHoursChange: number;
  /** The mean of the last day's and the last week's values, less the newest one's profile value. */
  readonly lastDayLevel: number;
  readonly lastWeekLevel: number;
}

/** By anchor (one zone's each), what its newest values say: asked for at every training issue. */
const recentByAnchor = new WeakMap<Anchor, RecentValues>();

export function recentValues(zone: ZoneState, anchor: Anchor): RecentValues {
  let recent = recentByAnchor.get(anchor);
  if (!recent) recentByAnchor.set(anchor, (recent = measureRecentValues(zone, anchor)));
  return recent;
}

function measureRecentValues(zone: ZoneState, anchor: Anchor): RecentValues {
  const { values, step } = zone.series;
  const perHour = HOUR_SECONDS / step;
  const latest = anchor.latestSlot;
  const latestProfile = anchor.dailyProfile[zone.slotOfWeek(latest)]!;
  const hourBefore = latest >= perHour ? values[latest - perHour]! : Number.NaN;
  const hoursBefore = latest >= 3 * perHour ? values[latest - 3 * perHour]! : Number.NaN;
  // Sums over the last day and week, the newest value (published) included: never empty.
  let daySum = 0;
  let dayCount = 0;
  let weekSum = 0;
  let weekCount = 0;
  for (let k = 0; k < WEEK_SECONDS / step && k <= latest; k++) {
    const value = values[latest - k]!;
    if (Number.isNaN(value)) continue;
    weekSum += value;
    weekCount++;
    if (k < DAY_SECONDS / step) {
      daySum += value;
      dayCount++;
    }
  }
  return {
    departure: anchor.latest - latestProfile,
    lastHourChange: Number.isNaN(hourBefore) ? 0 : anchor.latest - hourBefore,
    lastThreeHoursChange: Number.isNaN(hoursBefore) ? 0 : anchor.latest - hoursBefore,
    lastDayLevel: daySum / dayCount - latestProfile,
    lastWeekLevel: weekSum / weekCount - latestProfile,
  };
}

/** One row of the departure regression: dense features and at most two per-hour ones. */
export class DepartureRow {
  readonly dense: Float64Array;
  /** The daily base the regression corrects. */
  base = 0;
  /** Per-hour features: the newest departure, and (first bucket) the last hour's change. */
  readonly sparseIndex = new Int32Array(2);
  readonly sparseValue = new Float64Array(2);
  sparse = 0;

  constructor(private readonly variant: DepartureVariant) {
    this.dense = new Float64Array(denseOf(variant));
  }

  fill(
    zone: ZoneState,
    anchor: Anchor,
    recent: RecentValues,
    slot: number,
    hours: number,
    bucket: number,
  ): void {
    const { values, step } = zone.series;
    const perDay = DAY_SECONDS / step;
    const { first, last } = HORIZON_BUCKETS[bucket]!;
    const bucketHours = Math.min(last, Math.max(first, hours));
    const ofWeek = zone.slotOfWeek(slot);
    const daily = anchor.dailyProfile[ofWeek]!;
    const slotsAfter = slot - anchor.latestSlot;
    const { departure } = recent;
    const dayBefore = slot - perDay;
    const weekBefore = slot - 7 * perDay;
    const lastDay =
      dayBefore >= 0 && dayBefore < anchor.visibleEnd ? values[dayBefore]! : Number.NaN;
    const lastWeek =
      weekBefore >= 0 && weekBefore < anchor.visibleEnd ? values[weekBefore]! : Number.NaN;
    this.base = dailyBase(zone, anchor, slot);
    const x = this.dense;
    x[0] = 1;
    x[1] = anchor.profile[ofWeek]! - daily;
    x[2] = departure * zone.decay(SHORT_DECAY_HOURS).at(slotsAfter);
    x[3] = departure * zone.decay(SLOW_DECAY_HOURS).at(slotsAfter);
    x[4] = recent.lastHourChange * zone.decay(TREND_DECAY_HOURS).at(slotsAfter);
    x[5] = recent.lastThreeHoursChange * zone.decay(SHORT_DECAY_HOURS).at(slotsAfter);
    x[6] = Number.isNaN(lastDay) ? 0 : lastDay - daily;
    x[7] = Number.isNaN(lastWeek) ? 0 : lastWeek - daily;
    x[8] = recent.lastDayLevel;
    x[9] = recent.lastWeekLevel;
    if (this.variant.fourWeeks) {
      const fourWeeks = zone.fourWeekProfile(anchor.visibleEnd);
      x[DEPARTURE_DENSE] = fourWeeks ? fourWeeks[ofWeek]! - daily : 0;
    }
    const hourColumn = x.length + 1 + bucketHours - first;
    this.sparseIndex[0] = hourColumn;
    this.sparseValue[0] = departure;
    this.sparse = 1;
    if (bucket === 0) {
      this.sparseIndex[1] = hourColumn + last - first + 1;
      this.sparseValue[1] = recent.lastHourChange;
      this.sparse = 2;
    }
  }

  dot(coefficients: Float64Array, offset: number): number {
    const dense = this.dense.length;
    let value = coefficients[dense]! * offset;
    for (let c = 0; c < dense; c++) value += coefficients[c]! * this.dense[c]!;
    for (let k = 0; k < this.sparse; k++) {
      value += coefficients[this.sparseIndex[k]!]! * this.sparseValue[k]!;
    }
    return value;
  }
}

/**
 * Fits by zone, keyed by fitting time, variant and bucket: the backtest's issues of a week share
 * one.
 */
const departureFits = new WeakMap<ZoneState, Map<number, DepartureFit | undefined>>();

/**
 * The departure regression's fit for an issue at `issueTs`: made at the start of the issue's hour
 * on the newest day (counted from 1970) divisible by DEPARTURE_REFIT_DAYS, from what was known
 * then.
 */
export function departureFit(
  zone: ZoneState,
  variant: DepartureVariant,
  issueTs: number,
  bucket: number,
): DepartureFit | undefined {
  const hourTs = Math.floor(issueTs / HOUR_SECONDS) * HOUR_SECONDS;
  const fitTs = hourTs - (Math.floor(hourTs / DAY_SECONDS) % DEPARTURE_REFIT_DAYS) * DAY_SECONDS;
  let fits = departureFits.get(zone);
  if (!fits) departureFits.set(zone, (fits = new Map()));
  const key = (fitTs * 2 + variantIndex(variant)) * HORIZON_BUCKETS.length + bucket;
  if (!fits.has(key)) {
    fits.set(
      key,
      zone.carried
        ? zone.carried.fit(zone, variant, fitTs, bucket)
        : fitDeparture(zone, variant, fitTs, bucket),
    );
  }
  return fits.get(key);
}

/** The fits a zone's state made at `fromTs` or later (a rerun's stored state keeps them). */
export function departureFitsSince(
  zone: ZoneState,
  fromTs: number,
): [key: number, fit: DepartureFit | undefined][] {
  const perFitTs = 2 * HORIZON_BUCKETS.length;
  return [...(departureFits.get(zone) ?? [])].filter(
    ([key]) => Math.floor(key / perFitTs) >= fromTs,
  );
}

/** Fits made by an earlier state of the zone on the same values (`departureFitsSince`): reused. */
export function holdDepartureFits(
  zone: ZoneState,
  fits: readonly (readonly [key: number, fit: DepartureFit | undefined])[],
): void {
  let held = departureFits.get(zone);
  if (!held) departureFits.set(zone, (held = new Map()));
  for (const [key, fit] of fits) held.set(key, fit);
}

/**
 * How far before a fit's visible end its rows read values: a year of issues and their ten-week
 * profiles (a day more than they need: a later change to the rows' inputs has that slack).
 */
const DEPARTURE_READ_SECONDS =
  (DEPARTURE_TRAINING_DAYS + Math.max(CLIMATOLOGY_WEEKS * 7, DAILY_PROFILE_DAYS) + 1) * DAY_SECONDS;

/**
 * The departure regression's fits of one zone and basis, kept from one ZoneState to the next:
 * a fit is reused while every value it read is the same (a late or revised value inside its year
 * makes a new one). Holds the fits of one fitting time: the last asked for.
 */
export class CarriedFits implements FitCarrier {
  private fitTs = Number.NaN;
  private readTs = Number.NaN;
  private step = 0;
  private publicationLag = 0;
  private read = new Float64Array(0);
  private readonly fits = new Map<number, DepartureFit | undefined>();
  /** Fits made and fits reused (bench:forecast prints them). */
  made = 0;
  reused = 0;

  fit(
    zone: ZoneState,
    variant: DepartureVariant,
    fitTs: number,
    bucket: number,
  ): DepartureFit | undefined {
    const [start, end] = readSlots(zone, fitTs);
    if (!this.holds(zone, fitTs, start, end)) {
      this.fits.clear();
      this.fitTs = fitTs;
      this.readTs = zone.slotTs(start);
      this.step = zone.series.step;
      this.publicationLag = zone.inputs.publicationLagSeconds;
      this.read = zone.series.values.slice(start, end);
    }
    const key = variantIndex(variant) * HORIZON_BUCKETS.length + bucket;
    if (this.fits.has(key)) {
      this.reused++;
      return this.fits.get(key);
    }
    const fit = fitDeparture(zone, variant, fitTs, bucket);
    this.fits.set(key, fit);
    this.made++;
    return fit;
  }

  /** Whether the fits held were made at `fitTs` on the values `zone` has in [start, end). */
  private holds(zone: ZoneState, fitTs: number, start: number, end: number): boolean {
    const { series } = zone;
    if (fitTs !== this.fitTs || series.step !== this.step) return false;
    if (zone.inputs.publicationLagSeconds !== this.publicationLag) return false;
    if (zone.slotTs(start) !== this.readTs || end - start !== this.read.length) return false;
    for (let k = 0; k < this.read.length; k++) {
      const held = this.read[k]!;
      const value = series.values[start + k]!;
      // Two NaNs (unpublished both times) are the same; NaN !== NaN.
      if (held !== value && !(Number.isNaN(held) && Number.isNaN(value))) return false;
    }
    return true;
  }
}

/** The slots a fit made at `fitTs` reads values of. */
function readSlots(zone: ZoneState, fitTs: number): [start: number, end: number] {
  const end = zone.visibleEndAt(fitTs);
  return [Math.max(0, end - DEPARTURE_READ_SECONDS / zone.series.step), end];
}

function departureBlock(
  zone: ZoneState,
  variant: DepartureVariant,
  bucket: number,
  anchor: Anchor,
  pastTs: number,
  slots: readonly number[],
): DepartureBlock {
  const denseCount = denseOf(variant);
  const rows = slots.length;
  const block = {
    slots: Int32Array.from(slots),
    dense: new Float64Array(rows * denseCount),
    sparse: new Float64Array(rows * SPARSE_STRIDE),
    residuals: new Float64Array(rows),
    slotsOfWeek: new Int32Array(rows),
  };
  const recent = recentValues(zone, anchor);
  const row = new DepartureRow(variant);
  slots.forEach((slot, r) => {
    const hours = servedHours(horizonHours(zone.slotTs(slot), zone.series.step, pastTs));
    row.fill(zone, anchor, recent, slot, hours, bucket);
    block.dense.set(row.dense, r * denseCount);
    for (let k = 0; k < 2; k++) {
      block.sparse[r * SPARSE_STRIDE + 2 * k] = k < row.sparse ? row.sparseIndex[k]! : -1;
      block.sparse[r * SPARSE_STRIDE + 2 * k + 1] = row.sparseValue[k]!;
    }
    block.residuals[r] = zone.series.values[slot]! - row.base;
    block.slotsOfWeek[r] = zone.slotOfWeek(slot);
  });
  return block;
}

/** By zone: the sums of each chain of fits (variant, bucket, time of day) as last solved. */
const departureSums = new WeakMap<ZoneState, Map<number, DepartureSums>>();

function fitDeparture(
  zone: ZoneState,
  variant: DepartureVariant,
  fitTs: number,
  bucket: number,
): DepartureFit | undefined {
  const { first, last } = HORIZON_BUCKETS[bucket]!;
  const perHourFeatures = (last - first + 1) * (bucket === 0 ? 2 : 1);
  const denseCount = denseOf(variant);
  // The hour of the week's mean miss follows the dense inputs.
  const width = denseCount + 1 + perHourFeatures;
  let byChain = departureSums.get(zone);
  if (!byChain) departureSums.set(zone, (byChain = new Map()));
  const chain =
    (((fitTs % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS) * 2 * HORIZON_BUCKETS.length +
    variantIndex(variant) * HORIZON_BUCKETS.length +
    bucket;
  let sums = byChain.get(chain);
  if (!sums) byChain.set(chain, (sums = new DepartureSums(width, denseCount, zone.slotsPerWeek)));
  // A week after the chain's last fit, the past issues older than its newest days are those it
  // held, their targets all published then: only the newest days are visited, in the same order.
  const newestDays =
    sums.fitTs === fitTs - DEPARTURE_REFIT_DAYS * DAY_SECONDS
      ? DEPARTURE_REFIT_DAYS + daysToPublishAll(zone)
      : DEPARTURE_TRAINING_DAYS;
  const wanted = new Map<number, IncludedRows>();
  const issue = { issueTs: fitTs, visibleEnd: zone.visibleEndAt(fitTs) };
  forEachTrainingBlock(
    variant,
    zone,
    issue,
    bucket,
    DEPARTURE_TRAINING_DAYS,
    (anchor, pastTs, slots) => departureBlock(zone, variant, bucket, anchor, pastTs, slots),
    (block, rows, pastTs) => wanted.set(pastTs, { block, rows }),
    newestDays,
  );
  if (newestDays < DEPARTURE_TRAINING_DAYS) {
    const from = fitTs - DEPARTURE_TRAINING_DAYS * DAY_SECONDS;
    const before = fitTs - newestDays * DAY_SECONDS;
    sums.held.forEach((held, pastTs) => {
      if (pastTs >= from && pastTs < before) wanted.set(pastTs, held);
    });
  }
  sums.moveTo(wanted);
  sums.fitTs = fitTs;
  return sums.solve();
}
