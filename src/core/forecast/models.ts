import { blendHandOvers } from './hand-over.js';
import {
  bucketIndex,
  DAY_SECONDS,
  HORIZON_BUCKETS,
  HORIZON_HOURS,
  HOUR_SECONDS,
  horizonHours,
  type IssuedSeries,
  servedHours,
  type RegularSeries,
  WEEK_SECONDS,
} from './series.js';

/**
 * The forecast models: pure functions of what was known at an issue time, versioned as
 * `name@version` (a change in what a model computes is a new version). docs/forecast.md describes
 * them; the backtest (backtest.ts) measures them and decides which one serves each horizon bucket.
 */

/** Upstream forecasts a model may use, on the zone's grid (what each zone's upstream publishes). */
export interface UpstreamInputs {
  /** ENTSO-E day-ahead wind, solar, total load and scheduled generation, MW. */
  readonly wind?: IssuedSeries;
  readonly solar?: IssuedSeries;
  readonly load?: IssuedSeries;
  readonly generation?: IssuedSeries;
  /** EIA day-ahead demand forecast, MWh per hour. */
  readonly demandForecast?: IssuedSeries;
  /** NESO's own national intensity forecast (fw48h), gCO2eq/kWh. */
  readonly operatorForecast?: IssuedSeries;
}

export interface ZoneInputs {
  /** The values being forecast (one basis of one zone). */
  readonly actual: RegularSeries;
  readonly upstream: UpstreamInputs;
  /**
   * The zone's total generation (MWh per slot) as published, where wind or solar forecasts come
   * without a load or generation forecast: its hour-of-week mean stands in for the load.
   */
  readonly generation?: RegularSeries;
  /**
   * How long after an interval its value is usually published (Europe 3 h, GB 1 h, US 24 h):
   * the training issues of a model see only what had been published by then.
   */
  readonly publicationLagSeconds: number;
}

/** One issue: the time it is made and the first slot it cannot see (its actuals end there). */
export interface Issue {
  readonly issueTs: number;
  /** Slots before this one may hold published values; this one and later are forecast. */
  readonly visibleEnd: number;
}

export interface ForecastModel {
  readonly id: string;
  /**
   * Values for slots `issue.visibleEnd` up to (excluding) `end`; NaN where the model has nothing
   * to say (the caller falls back to another model there).
   */
  predict(zone: ZoneState, issue: Issue, end: number): Float64Array;
  /** What the model reads of the zone's inputs (the skill table records it). */
  inputsOf(zone: ZoneState): readonly string[];
  /** Whether the model has anything to say of the zone (default: yes); else it is no candidate. */
  appliesTo?(zone: ZoneState): boolean;
}

const HISTORY_ONLY = (): readonly string[] => ['history'];

const CLIMATOLOGY_WEEKS = 10;
/** Days of earlier issues a regression is fitted on. */
const TRAINING_DAYS = 35;
/** Weeks the day-of-week offsets of `ZoneState.dailyWeeklyProfile` are averaged over. */
const WEEKLY_OFFSET_WEEKS = 52;
/** Days of earlier issues the departure regression is fitted on: a year of each hour of the week. */
const DEPARTURE_TRAINING_DAYS = 365;
/** The departure regression is refitted every this many days (a year of rows moves slowly). */
const DEPARTURE_REFIT_DAYS = 7;
/**
 * Values a model looks back on from an issue: the profiles' weeks and the fitting days (for the
 * departure regression, the week since its fit, a year of past issues and their profiles' weeks),
 * and 3 days for the publication lags.
 */
export const LOOKBACK_SECONDS =
  Math.max(
    Math.max(CLIMATOLOGY_WEEKS, WEEKLY_OFFSET_WEEKS) * 7 + TRAINING_DAYS + 7,
    CLIMATOLOGY_WEEKS * 7 + DEPARTURE_TRAINING_DAYS + DEPARTURE_REFIT_DAYS + 3,
  ) * DAY_SECONDS;
/** Upstream forecasts a model looks back on: its fitting days. */
export const UPSTREAM_LOOKBACK_SECONDS = (TRAINING_DAYS + 3) * DAY_SECONDS;
/** At least this many published values before an issue, or the zone cannot be forecast. */
export const MIN_HISTORY_SECONDS = 7 * DAY_SECONDS;
/** Days the daily profile looks back on, and how fast its days lose weight. */
const DAILY_PROFILE_DAYS = 42;
const DAILY_HALF_LIFE_DAYS = 7;
/** Days the four-week hour-of-day mean looks back on. */
const FOUR_WEEK_DAYS = 28;
/** How far back the newest published value is looked for. */
const LATEST_LOOKBACK_SECONDS = 7 * DAY_SECONDS;

/**
 * What the models share about one zone's series: hour-of-week profiles and the newest value as of
 * any cut-off, computed once however many models and issues ask (the backtest asks thousands).
 */
export class ZoneState {
  private readonly profiles = new Map<number, Float64Array | null>();
  private readonly generationProfiles = new Map<number, Float64Array | null>();
  private readonly reshapedProfiles = new Map<number, Float64Array | null>();
  private readonly dailyProfiles = new Map<number, Float64Array | null>();
  private readonly dailyWeeklyProfiles = new Map<number, Float64Array | null>();
  private dailyWeightTable: Float64Array | undefined;
  private readonly fourWeekProfiles = new Map<number, Float64Array | null>();
  private fourWeekWeightTable: Float64Array | undefined;
  readonly slotsPerWeek: number;
  /** Slot-of-week of slot 0. */
  private readonly weekPhase: number;

  /**
   * `carried`: the departure regression's fits of the same zone and basis made by earlier states
   * (serve prepares a new state whenever data arrives, often several times an hour).
   */
  constructor(
    readonly inputs: ZoneInputs,
    readonly carried?: CarriedFits,
  ) {
    const { startTs, step } = inputs.actual;
    this.slotsPerWeek = WEEK_SECONDS / step;
    this.weekPhase = Math.floor((((startTs % WEEK_SECONDS) + WEEK_SECONDS) % WEEK_SECONDS) / step);
  }

  get series(): RegularSeries {
    return this.inputs.actual;
  }

  slotTs(slot: number): number {
    return this.series.startTs + slot * this.series.step;
  }

  slotOfWeek(slot: number): number {
    return (((slot + this.weekPhase) % this.slotsPerWeek) + this.slotsPerWeek) % this.slotsPerWeek;
  }

  /** The first slot an issue made at `issueTs` cannot see, given the usual publication lag. */
  visibleEndAt(issueTs: number): number {
    const { startTs, step } = this.series;
    const end = Math.floor((issueTs - this.inputs.publicationLagSeconds - startTs) / step);
    return Math.max(0, Math.min(end, this.series.values.length));
  }

  /** The newest published slot before `visibleEnd`, or -1. */
  latestSlot(visibleEnd: number): number {
    const { values, step } = this.series;
    const stop = Math.max(0, visibleEnd - LATEST_LOOKBACK_SECONDS / step);
    for (let slot = Math.min(visibleEnd, values.length) - 1; slot >= stop; slot--) {
      if (!Number.isNaN(values[slot]!)) return slot;
    }
    return -1;
  }

  /**
   * Mean value per slot of the week over the `weeks` weeks before `visibleEnd`; a slot
   * never published there takes the mean of its hour of day, then the overall mean. Null with
   * less than `MIN_HISTORY_SECONDS` of values.
   */
  profile(visibleEnd: number, weeks = CLIMATOLOGY_WEEKS): Float64Array | null {
    // Slots are far below 1e9: one number keys both.
    const key = weeks * 1e9 + visibleEnd;
    const cached = this.profiles.get(key);
    if (cached !== undefined) return cached;
    const built = this.buildProfile(this.series.values, visibleEnd, weeks);
    this.profiles.set(key, built);
    return built;
  }

  /**
   * The ten-week profile with each hour of the day moved by the mean departure of that hour over
   * the last `days` days: the recent days' daily shape (solar in spring rises earlier and higher
   * than ten weeks of it say) on the climatology's weekly pattern.
   */
  reshapedProfile(visibleEnd: number, days: number): Float64Array | null {
    const key = days * 1e9 + visibleEnd;
    const cached = this.reshapedProfiles.get(key);
    if (cached !== undefined) return cached;
    const profile = this.profile(visibleEnd);
    let reshaped: Float64Array | null = null;
    if (profile) {
      const { step, values } = this.series;
      const perDay = DAY_SECONDS / step;
      const sums = new Float64Array(perDay);
      const counts = new Float64Array(perDay);
      for (let slot = Math.max(0, visibleEnd - days * perDay); slot < visibleEnd; slot++) {
        const value = values[slot]!;
        if (Number.isNaN(value)) continue;
        const ofWeek = this.slotOfWeek(slot);
        sums[ofWeek % perDay]! += value - profile[ofWeek]!;
        counts[ofWeek % perDay]! += 1;
      }
      reshaped = profile.map((value, ofWeek) => {
        const hour = ofWeek % perDay;
        return counts[hour]! > 0 ? value + sums[hour]! / counts[hour]! : value;
      });
    }
    this.reshapedProfiles.set(key, reshaped);
    return reshaped;
  }

  /**
   * The mean value per hour of the day over the last DAILY_PROFILE_DAYS days, each day weighted
   * by half every DAILY_HALF_LIFE_DAYS back, laid out per slot of the week (every day alike).
   * The order of the hours within the next day is what a job's placement needs: this follows the
   * recent daily shape (the season's sun, the heating) on many days per hour, where the hour of
   * the week has ten. Null with less than `MIN_HISTORY_SECONDS` of values.
   */
  dailyProfile(visibleEnd: number): Float64Array | null {
    return this.hourOfDayMean(visibleEnd, this.dailyWeights(), this.dailyProfiles);
  }

  /**
   * The mean value per hour of the day over the last FOUR_WEEK_DAYS days, every day alike, laid
   * out per slot of the week; null as the daily profile is.
   */
  fourWeekProfile(visibleEnd: number): Float64Array | null {
    this.fourWeekWeightTable ??= new Float64Array(
      (FOUR_WEEK_DAYS * DAY_SECONDS) / this.series.step,
    ).fill(1);
    return this.hourOfDayMean(visibleEnd, this.fourWeekWeightTable, this.fourWeekProfiles);
  }

  /**
   * The weighted mean per hour of the day of the values before `visibleEnd`; `weightOf` holds
   * the weight of a value `k` slots before the newest, as far back as it reaches.
   */
  private hourOfDayMean(
    visibleEnd: number,
    weightOf: Float64Array,
    cache: Map<number, Float64Array | null>,
  ): Float64Array | null {
    const cached = cache.get(visibleEnd);
    if (cached !== undefined) return cached;
    const { step, values } = this.series;
    const perDay = DAY_SECONDS / step;
    const sums = new Float64Array(perDay);
    const weights = new Float64Array(perDay);
    let seen = 0;
    let total = 0;
    let totalWeight = 0;
    for (let slot = Math.max(0, visibleEnd - weightOf.length); slot < visibleEnd; slot++) {
      const value = values[slot]!;
      if (Number.isNaN(value)) continue;
      const weight = weightOf[visibleEnd - 1 - slot]!;
      const ofDay = this.slotOfWeek(slot) % perDay;
      sums[ofDay]! += weight * value;
      weights[ofDay]! += weight;
      seen++;
      total += weight * value;
      totalWeight += weight;
    }
    let built: Float64Array | null = null;
    if (seen * step >= MIN_HISTORY_SECONDS) {
      const mean = total / totalWeight;
      built = new Float64Array(this.slotsPerWeek);
      for (let index = 0; index < built.length; index++) {
        const ofDay = index % perDay;
        built[index] = weights[ofDay]! > 0 ? sums[ofDay]! / weights[ofDay]! : mean;
      }
    }
    cache.set(visibleEnd, built);
    return built;
  }

  /** The daily profile's weight of a value `k` slots before the newest, by `k` (a table: the
   * backtest builds hundreds of thousands of profiles). */
  private dailyWeights(): Float64Array {
    if (!this.dailyWeightTable) {
      const { step } = this.series;
      const halving = (DAILY_HALF_LIFE_DAYS * DAY_SECONDS) / step;
      this.dailyWeightTable = Float64Array.from(
        { length: (DAILY_PROFILE_DAYS * DAY_SECONDS) / step },
        (_, k) => 0.5 ** (k / halving),
      );
    }
    return this.dailyWeightTable;
  }

  /**
   * The daily profile plus, per slot of the week, the mean departure of the value from its own
   * week's mean of that hour of the day, over the whole weeks of the last WEEKLY_OFFSET_WEEKS
   * before `visibleEnd`: the recent days' shape with the day of the week's difference learned
   * over many weeks (a week's level and season cancel out of each departure). Null when the
   * daily profile is.
   */
  dailyWeeklyProfile(visibleEnd: number): Float64Array | null {
    const cached = this.dailyWeeklyProfiles.get(visibleEnd);
    if (cached !== undefined) return cached;
    const daily = this.dailyProfile(visibleEnd);
    let built: Float64Array | null = null;
    if (daily) {
      const { step, values } = this.series;
      const perDay = DAY_SECONDS / step;
      const perWeek = this.slotsPerWeek;
      const sums = new Float64Array(perWeek);
      const counts = new Float64Array(perWeek);
      const hourSums = new Float64Array(perDay);
      const hourCounts = new Float64Array(perDay);
      // Whole weeks (from slot-of-week 0) that end by visibleEnd.
      const end = visibleEnd - this.slotOfWeek(visibleEnd);
      for (let week = 1; week <= WEEKLY_OFFSET_WEEKS; week++) {
        const start = end - week * perWeek;
        if (start < 0) break;
        hourSums.fill(0);
        hourCounts.fill(0);
        for (let k = 0; k < perWeek; k++) {
          const value = values[start + k]!;
          if (Number.isNaN(value)) continue;
          hourSums[k % perDay]! += value;
          hourCounts[k % perDay]! += 1;
        }
        for (let k = 0; k < perWeek; k++) {
          const value = values[start + k]!;
          // A mean of fewer than four days of the week is no week's mean.
          if (Number.isNaN(value) || hourCounts[k % perDay]! < 4) continue;
          sums[k]! += value - hourSums[k % perDay]! / hourCounts[k % perDay]!;
          counts[k]! += 1;
        }
      }
      // `start` lies at slot-of-week 0: sums[k] is slot of the week k, as the profile's index.
      built = daily.map((value, ofWeek) =>
        counts[ofWeek]! > 0 ? value + sums[ofWeek]! / counts[ofWeek]! : value,
      );
    }
    this.dailyWeeklyProfiles.set(visibleEnd, built);
    return built;
  }

  /** The same profile of the zone's total generation, when the inputs carry it. */
  generationProfile(visibleEnd: number): Float64Array | null {
    const generation = this.inputs.generation;
    if (!generation) return null;
    const cached = this.generationProfiles.get(visibleEnd);
    if (cached !== undefined) return cached;
    const built = this.buildProfile(generation.values, visibleEnd, CLIMATOLOGY_WEEKS);
    this.generationProfiles.set(visibleEnd, built);
    return built;
  }

  private buildProfile(
    values: Float64Array,
    visibleEnd: number,
    weeks: number,
  ): Float64Array | null {
    const { step } = this.series;
    const perWeek = this.slotsPerWeek;
    const sums = new Float64Array(perWeek);
    const counts = new Float64Array(perWeek);
    let seen = 0;
    let total = 0;
    const from = Math.max(0, visibleEnd - weeks * perWeek);
    for (let slot = from; slot < visibleEnd; slot++) {
      const value = values[slot]!;
      if (Number.isNaN(value)) continue;
      const index = this.slotOfWeek(slot);
      sums[index]! += value;
      counts[index]! += 1;
      seen++;
      total += value;
    }
    if (seen * step < MIN_HISTORY_SECONDS) return null;
    const perDay = DAY_SECONDS / step;
    const daySums = new Float64Array(perDay);
    const dayCounts = new Float64Array(perDay);
    for (let index = 0; index < perWeek; index++) {
      daySums[index % perDay]! += sums[index]!;
      dayCounts[index % perDay]! += counts[index]!;
    }
    const profile = new Float64Array(perWeek);
    for (let index = 0; index < perWeek; index++) {
      const ofDay = index % perDay;
      profile[index] =
        counts[index]! > 0
          ? sums[index]! / counts[index]!
          : dayCounts[ofDay]! > 0
            ? daySums[ofDay]! / dayCounts[ofDay]!
            : total / seen;
    }
    return profile;
  }
}

/** What every model starts from at one issue: the profile, the newest value and its anomaly. */
interface Anchor {
  /** The first slot the issue could not see. */
  readonly visibleEnd: number;
  readonly profile: Float64Array;
  readonly latestSlot: number;
  readonly latest: number;
  readonly anomaly: number;
  /** The hour-of-week mean generation, where the inputs carry the generation. */
  readonly generationProfile: Float64Array | null;
  /** The recent days' hour-of-day profile (`ZoneState.dailyProfile`), else the profile. */
  readonly dailyProfile: Float64Array;
}

function anchorOf(zone: ZoneState, visibleEnd: number): Anchor | null {
  const profile = zone.profile(visibleEnd);
  const latestSlot = zone.latestSlot(visibleEnd);
  if (!profile || latestSlot < 0) return null;
  const latest = zone.series.values[latestSlot]!;
  return {
    visibleEnd,
    profile,
    latestSlot,
    latest,
    anomaly: latest - profile[zone.slotOfWeek(latestSlot)]!,
    generationProfile: zone.generationProfile(visibleEnd),
    dailyProfile: zone.dailyProfile(visibleEnd) ?? profile,
  };
}

const nanArray = (length: number): Float64Array =>
  new Float64Array(Math.max(0, length)).fill(Number.NaN);

/** Baseline: the newest published value, held. */
export const PERSISTENCE: ForecastModel = {
  id: 'persistence@1',
  inputsOf: HISTORY_ONLY,
  predict(zone, issue, end) {
    const out = nanArray(end - issue.visibleEnd);
    const latestSlot = zone.latestSlot(issue.visibleEnd);
    if (latestSlot >= 0 && zone.profile(issue.visibleEnd))
      out.fill(zone.series.values[latestSlot]!);
    return out;
  },
};

/** Baseline: the hour-of-week mean of the last ten weeks. */
export const WEEKLY_PROFILE: ForecastModel = {
  id: 'weekly-profile@1',
  inputsOf: HISTORY_ONLY,
  predict(zone, issue, end) {
    const out = nanArray(end - issue.visibleEnd);
    const profile = zone.profile(issue.visibleEnd);
    if (!profile) return out;
    for (let i = 0; i < out.length; i++) {
      out[i] = profile[zone.slotOfWeek(issue.visibleEnd + i)]!;
    }
    return out;
  },
};

/**
 * Baseline: the hour-of-week mean of the last ten weeks plus the newest value's departure from
 * it, decaying with a 24-hour e-folding time (issue 19's yardstick for the 7-72 h buckets).
 */
export const CLIMATOLOGY_ANOMALY: ForecastModel = {
  id: 'climatology-anomaly@1',
  inputsOf: HISTORY_ONLY,
  predict(zone, issue, end) {
    const out = nanArray(end - issue.visibleEnd);
    const anchor = anchorOf(zone, issue.visibleEnd);
    if (!anchor) return out;
    const step = zone.series.step;
    for (let i = 0; i < out.length; i++) {
      const slot = issue.visibleEnd + i;
      const hoursAfter = ((slot - anchor.latestSlot) * step) / HOUR_SECONDS;
      out[i] = anchor.profile[zone.slotOfWeek(slot)]! + anchor.anomaly * Math.exp(-hoursAfter / 24);
    }
    return out;
  },
};

/**
 * The hour-of-week profile plus the newest value's departure from it, decaying: per horizon
 * bucket, with the profile's window (the last 4 or 10 weeks) and the e-folding time (from an hour
 * to never) that did best on the issues of the previous 35 days at the same time of day. A zone
 * whose values drift slowly keeps its departure (the newest value carried along the profile's
 * shape), one ruled by its daily cycle drops it; one whose mix changed lately (a season, a plant)
 * follows the shorter window.
 */
export const CLIMATOLOGY: ForecastModel = profileModel('climatology@3', [
  { weeks: CLIMATOLOGY_WEEKS },
  { weeks: 4 },
  { weeks: CLIMATOLOGY_WEEKS, reshapeDays: 7 },
]);

/**
 * The recent days' hour-of-day profile (`ZoneState.dailyProfile`: six weeks, each day weighing
 * half as much a week further back) plus the newest value's departure from it, decaying with the
 * e-folding time chosen per bucket as the climatology's is. Blind to the day of the week, it
 * orders the hours of the next day by many recent days instead of ten weeks of one weekday: what
 * placing a job needs.
 */
export const DAILY_PROFILE: ForecastModel = profileModel('daily-profile@1', [{ daily: true }]);

/**
 * The daily profile with the day of the week's departures from it learned over a year
 * (`ZoneState.dailyWeeklyProfile`), plus the newest value's departure decaying as the daily
 * profile's does.
 */
export const DAILY_WEEKLY: ForecastModel = profileModel('daily-weekly@1', [
  { daily: true, weekly: true },
]);

/** The e-folding times a profile model chooses from, in hours; the first without training data. */
const DECAY_HOURS = [8, 1, 3, 24, 72, 240, Number.POSITIVE_INFINITY];

/**
 * A profile a model may follow: the last `weeks` weeks of the hour of the week, reshaped by the
 * recent days, or the recent days' hour of the day.
 */
type ProfileWindow =
  | { readonly weeks: number; readonly reshapeDays?: number; readonly daily?: undefined }
  | { readonly daily: true; readonly weekly?: true };

function windowProfile(
  zone: ZoneState,
  visibleEnd: number,
  window: ProfileWindow,
): Float64Array | null {
  if (window.daily) {
    return window.weekly ? zone.dailyWeeklyProfile(visibleEnd) : zone.dailyProfile(visibleEnd);
  }
  return window.reshapeDays
    ? zone.reshapedProfile(visibleEnd, window.reshapeDays)
    : zone.profile(visibleEnd, window.weeks);
}

/**
 * A profile plus the newest value's departure from it, decaying; per bucket, the profile among
 * `windows` (the first without training data) and the e-folding time that did best.
 */
function profileModel(id: string, windows: readonly ProfileWindow[]): ForecastModel {
  return {
    id,
    inputsOf: HISTORY_ONLY,
    predict(zone, issue, end) {
      const out = nanArray(end - issue.visibleEnd);
      const anchor = anchorOf(zone, issue.visibleEnd);
      if (!anchor) return out;
      const fits = HORIZON_BUCKETS.map((_, bucket) => fitProfile(zone, issue, bucket, windows));
      const step = zone.series.step;
      const latestWeek = zone.slotOfWeek(anchor.latestSlot);
      for (let i = 0; i < out.length; i++) {
        const slot = issue.visibleEnd + i;
        const hours = servedHours(horizonHours(zone.slotTs(slot), step, issue.issueTs));
        const { window, decayHours } = fits[bucketIndex(hours)]!;
        const profile = windowProfile(zone, issue.visibleEnd, window) ?? anchor.profile;
        const hoursAfter = ((slot - anchor.latestSlot) * step) / HOUR_SECONDS;
        out[i] =
          profile[zone.slotOfWeek(slot)]! +
          (anchor.latest - profile[latestWeek]!) * Math.exp(-hoursAfter / decayHours);
      }
      return out;
    },
  };
}

function fitProfile(
  zone: ZoneState,
  issue: Issue,
  bucket: number,
  windows: readonly ProfileWindow[],
): { window: ProfileWindow; decayHours: number } {
  const decays = DECAY_HOURS.length;
  const errors = new Float64Array(windows.length * decays);
  const step = zone.series.step;
  const decay = new Float64Array(decays);
  // The past issues' profiles of each window, looked up once per past issue, not per target.
  let profilesOf: Anchor | undefined;
  const profiles: (Float64Array | null)[] = [];
  forEachTrainingTarget(zone, issue, bucket, (anchor, _pastTs, slot, actual) => {
    if (anchor !== profilesOf) {
      profilesOf = anchor;
      windows.forEach((window, w) => {
        profiles[w] = windowProfile(zone, anchor.visibleEnd, window);
      });
    }
    const hoursAfter = ((slot - anchor.latestSlot) * step) / HOUR_SECONDS;
    for (let k = 0; k < decays; k++) decay[k] = Math.exp(-hoursAfter / DECAY_HOURS[k]!);
    const ofWeek = zone.slotOfWeek(slot);
    const latestOfWeek = zone.slotOfWeek(anchor.latestSlot);
    for (let w = 0; w < windows.length; w++) {
      const profile = profiles[w];
      if (!profile) {
        // Not enough history for this window then: it is not chosen.
        errors.fill(Number.POSITIVE_INFINITY, w * decays, (w + 1) * decays);
        continue;
      }
      const value = profile[ofWeek]!;
      const anomaly = anchor.latest - profile[latestOfWeek]!;
      for (let k = 0; k < decays; k++) {
        const forecast = value + anomaly * decay[k]!;
        errors[w * decays + k]! += (forecast - actual) ** 2;
      }
    }
  });
  let best = 0;
  for (let k = 1; k < errors.length; k++) if (errors[k]! < errors[best]!) best = k;
  return { window: windows[Math.floor(best / decays)]!, decayHours: DECAY_HOURS[best % decays]! };
}

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
 * The recent days' hour-of-day profile plus the newest value's departure (24-hour e-folding
 * time), corrected where the zone's upstream forecasts reach by a per-bucket linear fit of what
 * that profile missed on the upstream features of the regression (wind and solar shares, load,
 * demand, operator). Two coefficients per feature at most, fitted on the issues of the previous
 * 35 days at the same time of day: the upstream forecasts reorder the next day's hours on the
 * profile that orders them best. Beyond their reach it is the profile alone, handed over with
 * the 3-hour blend. Only a candidate where the zone has upstream forecasts.
 */
export const DAILY_UPSTREAM: ForecastModel = upstreamCorrected('daily-upstream@1', {
  forecast(zone, issue, anchor, end) {
    const out = nanArray(end - issue.visibleEnd);
    for (let i = 0; i < out.length; i++) out[i] = dailyBase(zone, anchor, issue.visibleEnd + i);
    return out;
  },
  training: (zone) => (pastAnchor, _pastTs, slot) => dailyBase(zone, pastAnchor, slot),
});

/**
 * `departure-regression@1` corrected where the zone's upstream forecasts reach, as
 * `daily-upstream@1` corrects the daily profile: by a per-bucket linear fit, on the issues of the
 * previous 35 days at the same time of day, of what the regression missed on the upstream
 * features. The regression learns from a year what the zone's own history says (the day of the
 * week, how a departure fades); the correction adds what the day-ahead wind, solar, load or
 * demand say of the next day on top of it. The past issues' misses are those of the fit that
 * serves the issue (made at most a week before it, from what was published then).
 */
export const DEPARTURE_UPSTREAM: ForecastModel = upstreamCorrected('departure-upstream@1', {
  forecast: (zone, issue, _anchor, end) => DEPARTURE_REGRESSION.predict(zone, issue, end),
  training(zone, issue) {
    const fits = HORIZON_BUCKETS.map((_, bucket) =>
      departureFit(zone, PLAIN_DEPARTURE, issue.issueTs, bucket),
    );
    const row = new DepartureRow(PLAIN_DEPARTURE);
    let recentOf: Anchor | undefined;
    let recent: RecentValues | undefined;
    return (pastAnchor, pastTs, slot) => {
      const hours = servedHours(horizonHours(zone.slotTs(slot), zone.series.step, pastTs));
      const bucket = bucketIndex(hours);
      const fit = fits[bucket];
      if (!fit) return Number.NaN;
      if (pastAnchor !== recentOf) {
        recentOf = pastAnchor;
        recent = recentValues(zone, pastAnchor);
      }
      row.fill(zone, pastAnchor, recent!, slot, hours, bucket);
      return row.base + row.dot(fit.coefficients, fit.offsets[zone.slotOfWeek(slot)]!);
    };
  },
});

/** What an upstream-corrected model corrects: its forecast, and its value at past issues. */
interface CorrectedBase {
  /** The base forecast of slots `issue.visibleEnd` to `end` (NaN where it has none). */
  forecast(zone: ZoneState, issue: Issue, anchor: Anchor, end: number): Float64Array;
  /** The base's value of `slot` as a past issue (its anchor and time) would have had it. */
  training(
    zone: ZoneState,
    issue: Issue,
  ): (pastAnchor: Anchor, pastTs: number, slot: number) => number;
}

/**
 * A base forecast corrected where the zone's upstream forecasts reach by a per-bucket linear fit
 * (an intercept and the regression's upstream features) of what the base missed on the issues of
 * the previous 35 days at the same time of day; beyond their reach the base alone, handed over
 * with the 3-hour blend. Only a candidate where the zone has upstream forecasts.
 */
function upstreamCorrected(id: string, base: CorrectedBase): ForecastModel {
  return {
    id,
    inputsOf: (zone) => ['history', ...upstreamInputNames(zone)],
    appliesTo: (zone) => featureSet(zone.inputs.upstream).length > 0,
    predict(zone, issue, end) {
      const out = nanArray(end - issue.visibleEnd);
      const anchor = anchorOf(zone, issue.visibleEnd);
      const features = featureSet(zone.inputs.upstream);
      if (!anchor || features.length === 0) return out;
      const scale = featureScale(zone, features, issue);
      const buckets = HORIZON_BUCKETS.length;
      const baseAt = base.training(zone, issue);
      const fits = HORIZON_BUCKETS.map((_, bucket) =>
        fitCorrection(zone, features, scale, issue, bucket, baseAt),
      );
      const forecast = base.forecast(zone, issue, anchor, end);
      // Source b: bucket b's correction; source `buckets`: the base alone.
      const sources = Array.from({ length: buckets + 1 }, () => nanArray(out.length));
      const choice = new Uint8Array(out.length);
      const row = new Float64Array(BASE_FEATURES + features.length);
      for (let i = 0; i < out.length; i++) {
        const slot = issue.visibleEnd + i;
        sources[buckets]![i] = forecast[i]!;
        choice[i] = buckets;
        if (!fillRow(row, zone, features, scale, anchor, issue.issueTs, slot)) continue;
        const hours = servedHours(horizonHours(zone.slotTs(slot), zone.series.step, issue.issueTs));
        const bucket = bucketIndex(hours);
        const coefficients = fits[bucket];
        if (!coefficients) continue;
        sources[bucket]![i] = forecast[i]! + correction(coefficients, row);
        choice[i] = bucket;
      }
      out.set(blendHandOvers(sources, choice, HOUR_SECONDS / zone.series.step));
      return out;
    },
  };
}

/** The daily profile plus the newest value's departure from it, decaying over a day. */
function dailyBase(zone: ZoneState, anchor: Anchor, slot: number): number {
  const hoursAfter = ((slot - anchor.latestSlot) * zone.series.step) / HOUR_SECONDS;
  const latestOfWeek = zone.slotOfWeek(anchor.latestSlot);
  return (
    anchor.dailyProfile[zone.slotOfWeek(slot)]! +
    (anchor.latest - anchor.dailyProfile[latestOfWeek]!) * Math.exp(-hoursAfter / DAY_HOURS)
  );
}

const DAY_HOURS = 24;

/** Intercept and the upstream features (the regression's row from BASE_FEATURES on). */
function correction(coefficients: Float64Array, row: Float64Array): number {
  let value = coefficients[0]!;
  for (let c = 1; c < coefficients.length; c++) {
    value += coefficients[c]! * row[BASE_FEATURES + c - 1]!;
  }
  return value;
}

/** Least squares of what a base missed on the upstream features, as fitBucket fits. */
function fitCorrection(
  zone: ZoneState,
  features: FeatureName[],
  scale: Scale,
  issue: Issue,
  bucket: number,
  baseAt: (pastAnchor: Anchor, pastTs: number, slot: number) => number,
): Float64Array | undefined {
  const width = 1 + features.length;
  const gram = new Float64Array(width * width);
  const moment = new Float64Array(width);
  const row = new Float64Array(BASE_FEATURES + features.length);
  const x = new Float64Array(width);
  let rows = 0;
  forEachTrainingTarget(zone, issue, bucket, (anchor, pastTs, slot, actual) => {
    if (!fillRow(row, zone, features, scale, anchor, pastTs, slot)) return;
    const missed = actual - baseAt(anchor, pastTs, slot);
    if (Number.isNaN(missed)) return;
    x[0] = 1;
    for (let c = 1; c < width; c++) x[c] = row[BASE_FEATURES + c - 1]!;
    for (let a = 0; a < width; a++) {
      moment[a]! += x[a]! * missed;
      for (let b = 0; b <= a; b++) gram[a * width + b]! += x[a]! * x[b]!;
    }
    rows++;
  });
  return solveRidge(gram, moment, width, rows);
}

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
const PLAIN_DEPARTURE: DepartureVariant = { fourWeeks: false };

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

/** One departure regression of the two, and what its rows hold. */
interface DepartureVariant {
  /** Whether the four-week hour-of-day mean less the daily profile is a dense input. */
  readonly fourWeeks: boolean;
}

/** The variant's place among the two: a zone's fits are kept by it. */
const variantIndex = (variant: DepartureVariant): number => (variant.fourWeeks ? 1 : 0);

/** The variant's dense inputs; the hour of the week's mean miss is the column after them. */
const denseOf = (variant: DepartureVariant): number =>
  DEPARTURE_DENSE + (variant.fourWeeks ? 1 : 0);
/** E-folding times of the newest departure's slow fade and of the last hours' change, hours. */
const SLOW_DECAY_HOURS = 72;
const TREND_DECAY_HOURS = 3;

/** What the newest values say at one issue, apart from the hour being forecast. */
interface RecentValues {
  /** The newest value's departure from the daily profile. */
  readonly departure: number;
  /** The newest value less the one an hour and three hours before it (0 when unpublished). */
  readonly lastHourChange: number;
  readonly lastThreeHoursChange: number;
  /** The mean of the last day's and the last week's values, less the newest one's profile value. */
  readonly lastDayLevel: number;
  readonly lastWeekLevel: number;
}

function recentValues(zone: ZoneState, anchor: Anchor): RecentValues {
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
class DepartureRow {
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
    const hoursAfter = ((slot - anchor.latestSlot) * step) / HOUR_SECONDS;
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
    x[2] = departure * Math.exp(-hoursAfter / SHORT_DECAY_HOURS);
    x[3] = departure * Math.exp(-hoursAfter / SLOW_DECAY_HOURS);
    x[4] = recent.lastHourChange * Math.exp(-hoursAfter / TREND_DECAY_HOURS);
    x[5] = recent.lastThreeHoursChange * Math.exp(-hoursAfter / SHORT_DECAY_HOURS);
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

interface DepartureFit {
  readonly coefficients: Float64Array;
  /**
   * The mean of what the daily base missed, per slot of the week, over the training rows (0
   * where fewer than two: the fit, leaving each row out, saw 0 there).
   */
  readonly offsets: Float64Array;
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
function departureFit(
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
export class CarriedFits {
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

/** Per training row: two (column, value) pairs of per-hour features, column -1 when unused. */
const SPARSE_STRIDE = 4;

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
  const offsetColumn = denseCount;
  const width = offsetColumn + 1 + perHourFeatures;
  // Rows first (the offsets need every residual before the fit can use them).
  const dense: number[] = [];
  const sparse: number[] = [];
  const residuals: number[] = [];
  const slotsOfWeek: number[] = [];
  const row = new DepartureRow(variant);
  let recentOf: Anchor | undefined;
  let recent: RecentValues | undefined;
  const issue = { issueTs: fitTs, visibleEnd: zone.visibleEndAt(fitTs) };
  forEachTrainingTarget(
    zone,
    issue,
    bucket,
    (anchor, pastTs, slot, actual) => {
      if (anchor !== recentOf) {
        recentOf = anchor;
        recent = recentValues(zone, anchor);
      }
      const hours = servedHours(horizonHours(zone.slotTs(slot), zone.series.step, pastTs));
      row.fill(zone, anchor, recent!, slot, hours, bucket);
      for (let c = 0; c < denseCount; c++) dense.push(row.dense[c]!);
      for (let k = 0; k < 2; k++) {
        sparse.push(k < row.sparse ? row.sparseIndex[k]! : -1, row.sparseValue[k]!);
      }
      residuals.push(actual - row.base);
      slotsOfWeek.push(zone.slotOfWeek(slot));
    },
    DEPARTURE_TRAINING_DAYS,
  );
  const rows = residuals.length;
  const sums = new Float64Array(zone.slotsPerWeek);
  const counts = new Float64Array(zone.slotsPerWeek);
  for (let r = 0; r < rows; r++) {
    sums[slotsOfWeek[r]!]! += residuals[r]!;
    counts[slotsOfWeek[r]!]! += 1;
  }
  const offsets = sums.map((sum, k) => (counts[k]! > 1 ? sum / counts[k]! : 0));
  const gram = new Float64Array(width * width);
  const moment = new Float64Array(width);
  const x = new Float64Array(offsetColumn + 1);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < denseCount; c++) x[c] = dense[r * denseCount + c]!;
    const residual = residuals[r]!;
    // Each row's offset leaves the row out: with few weeks of rows, an offset holding the row's
    // own residual would fit it and earn a coefficient the next issue does not bear out.
    const week = slotsOfWeek[r]!;
    x[offsetColumn] = counts[week]! > 1 ? (sums[week]! - residual) / (counts[week]! - 1) : 0;
    for (let a = 0; a <= offsetColumn; a++) {
      moment[a]! += x[a]! * residual;
      for (let b = 0; b <= a; b++) gram[a * width + b]! += x[a]! * x[b]!;
    }
    // The row's per-hour features (the others are zero), past the dense ones and in order.
    const at = r * SPARSE_STRIDE;
    for (let k = 0; k < 2; k++) {
      const index = sparse[at + 2 * k]!;
      if (index < 0) continue;
      const value = sparse[at + 2 * k + 1]!;
      moment[index]! += value * residual;
      for (let b = 0; b <= offsetColumn; b++) gram[index * width + b]! += value * x[b]!;
      if (k === 1) gram[index * width + sparse[at]!]! += value * sparse[at + 1]!;
      gram[index * width + index]! += value * value;
    }
  }
  const coefficients = solveRidge(gram, moment, width, rows);
  return coefficients && { coefficients, offsets };
}

/** NESO's fw48h, republished unchanged: GB's default forecast. */
export const OPERATOR_FORECAST: ForecastModel = {
  id: 'upstream:uk-operator:forecast',
  inputsOf: () => ['uk-operator:fw48h'],
  predict(zone, issue, end) {
    const out = nanArray(end - issue.visibleEnd);
    const operator = zone.inputs.upstream.operatorForecast;
    if (!operator) return out;
    for (let i = 0; i < out.length; i++) {
      out[i] = operator.valueAt(issue.visibleEnd + i, issue.issueTs);
    }
    return out;
  },
};

/**
 * Candidates for serving, weighed walk-forward by the backtest (the first serves alone before any
 * outcome is known). The climatology-plus-anomaly baseline is one: the forecast served should
 * never be worse than it.
 */
export const CANDIDATE_MODELS: readonly ForecastModel[] = [
  CLIMATOLOGY,
  DAILY_PROFILE,
  DAILY_WEEKLY,
  UPSTREAM_REGRESSION,
  DAILY_UPSTREAM,
  DEPARTURE_REGRESSION,
  DEPARTURE_FOUR_WEEKS,
  DEPARTURE_UPSTREAM,
  PERSISTENCE,
  CLIMATOLOGY_ANOMALY,
];

// ---- the regression's features ---------------------------------------------------------------

/**
 * intercept, profile, and the newest value and its profile each with a short and a long decay:
 * the fit can then hold the newest value (persistence), let its departure from the profile fade,
 * or anything between, as the zone's own history says.
 */
const BASE_FEATURES = 6;
const SHORT_DECAY_HOURS = 6;
const LONG_DECAY_HOURS = 36;
const RIDGE = 1e-2;

type FeatureName =
  | 'windShare'
  | 'windLevel'
  | 'solarShare'
  | 'solarLevel'
  | 'loadRatio'
  | 'demandRatio'
  | 'operator';

/** The upstream features a zone has: every upstream forecast it has is used. */
function featureSet(upstream: UpstreamInputs): FeatureName[] {
  const names: FeatureName[] = [];
  if (upstream.wind?.size) names.push('windShare', 'windLevel');
  if (upstream.solar?.size) names.push('solarShare', 'solarLevel');
  if ((upstream.load ?? upstream.generation)?.size) names.push('loadRatio');
  if (upstream.demandForecast?.size) names.push('demandRatio');
  if (upstream.operatorForecast?.size) names.push('operator');
  return names;
}

/** The upstream forecasts the regression reads for `zone`, as the skill table names them. */
function upstreamInputNames(zone: ZoneState): string[] {
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
interface Scale {
  readonly load: number;
  readonly demand: number;
  /** The mean of the profile: the `*Level` features are shares times the profile over it. */
  readonly profile: number;
  /** Without a load forecast or a generation history, the shares' denominator. */
  readonly share: number;
}

function featureScale(zone: ZoneState, features: FeatureName[], issue: Issue): Scale {
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

/** The regression's inputs for `slot` as known at `issueTs`; false when one is missing. */
function fillRow(
  row: Float64Array,
  zone: ZoneState,
  features: FeatureName[],
  scale: Scale,
  anchor: Anchor,
  issueTs: number,
  slot: number,
): boolean {
  const { upstream } = zone.inputs;
  const hoursAfter = ((slot - anchor.latestSlot) * zone.series.step) / HOUR_SECONDS;
  const profileValue = anchor.profile[zone.slotOfWeek(slot)]!;
  row[0] = 1;
  row[1] = profileValue;
  const short = Math.exp(-hoursAfter / SHORT_DECAY_HOURS);
  const long = Math.exp(-hoursAfter / LONG_DECAY_HOURS);
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
        value = (upstream.wind?.valueAt(slot, issueTs) ?? Number.NaN) / denominator;
        break;
      case 'windLevel':
        value = ((upstream.wind?.valueAt(slot, issueTs) ?? Number.NaN) / denominator) * level;
        break;
      case 'solarShare':
        value = (upstream.solar?.valueAt(slot, issueTs) ?? Number.NaN) / denominator;
        break;
      case 'solarLevel':
        value = ((upstream.solar?.valueAt(slot, issueTs) ?? Number.NaN) / denominator) * level;
        break;
      case 'loadRatio':
        value = (loadForecast ?? Number.NaN) / scale.load;
        break;
      case 'demandRatio':
        value = (upstream.demandForecast?.valueAt(slot, issueTs) ?? Number.NaN) / scale.demand;
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
  const gram = new Float64Array(width * width);
  const moment = new Float64Array(width);
  const row = new Float64Array(width);
  let rows = 0;
  forEachTrainingTarget(zone, issue, bucket, (anchor, pastTs, slot, actual) => {
    if (!fillRow(row, zone, features, scale, anchor, pastTs, slot)) return;
    for (let a = 0; a < width; a++) {
      moment[a]! += row[a]! * actual;
      for (let b = 0; b <= a; b++) gram[a * width + b]! += row[a]! * row[b]!;
    }
    rows++;
  });
  return solveRidge(gram, moment, width, rows);
}

/**
 * Solves the normal equations whose lower triangle `gram` holds, with the ridge penalty;
 * undefined with too few rows to fit.
 */
function solveRidge(
  gram: Float64Array,
  moment: Float64Array,
  width: number,
  rows: number,
): Float64Array | undefined {
  if (rows < 8 * width) return undefined;
  for (let a = 0; a < width; a++) {
    for (let b = 0; b < a; b++) gram[b * width + a] = gram[a * width + b]!;
  }
  // Ridge on everything but the intercept, relative to each feature's own variance (not its
  // second moment: that would shrink a feature with a large mean, the profile, towards the
  // intercept), and a floor so that a feature that is zero throughout (solar in the night hours
  // of a winter bucket) gets a weight of zero instead of a singular system.
  for (let a = 1; a < width; a++) {
    const spread = Math.max(0, gram[a * width + a]! - gram[a * width]! ** 2 / rows);
    gram[a * width + a] = gram[a * width + a]! + RIDGE * spread + 1e-9 * rows + 1e-12;
  }
  return solve(gram, moment, width);
}

/**
 * Calls `visit` with every target of `bucket` of the daily issues of the previous `days`
 * days (at the issue's time of day) whose value is published by the present issue, with what that
 * past issue knew: its anchor and its time. Nowcasts count with the first bucket.
 */
function forEachTrainingTarget(
  zone: ZoneState,
  issue: Issue,
  bucket: number,
  visit: (anchor: Anchor, pastTs: number, slot: number, actual: number) => void,
  days = TRAINING_DAYS,
): void {
  const values = zone.series.values;
  for (let day = 1; day <= days; day++) {
    const pastTs = issue.issueTs - day * DAY_SECONDS;
    const pastEnd = Math.min(zone.visibleEndAt(pastTs), issue.visibleEnd);
    const anchor = anchorOf(zone, pastEnd);
    if (!anchor) continue;
    const [bucketFirst, bucketEnd] = bucketSlots(zone, pastTs, bucket);
    const firstSlot = bucket === 0 ? pastEnd : Math.max(bucketFirst, pastEnd);
    const lastSlot = Math.min(bucketEnd, issue.visibleEnd);
    for (let slot = firstSlot; slot < lastSlot; slot++) {
      const actual = values[slot]!;
      if (!Number.isNaN(actual)) visit(anchor, pastTs, slot, actual);
    }
  }
}

/** Solves the symmetric system by Gaussian elimination with partial pivoting. */
function solve(matrix: Float64Array, vector: Float64Array, size: number): Float64Array | undefined {
  const a = Float64Array.from(matrix);
  const b = Float64Array.from(vector);
  for (let column = 0; column < size; column++) {
    let pivot = column;
    for (let r = column + 1; r < size; r++) {
      if (Math.abs(a[r * size + column]!) > Math.abs(a[pivot * size + column]!)) pivot = r;
    }
    if (Math.abs(a[pivot * size + column]!) < 1e-12) return undefined;
    if (pivot !== column) {
      for (let c = 0; c < size; c++) {
        const held = a[column * size + c]!;
        a[column * size + c] = a[pivot * size + c]!;
        a[pivot * size + c] = held;
      }
      const held = b[column]!;
      b[column] = b[pivot]!;
      b[pivot] = held;
    }
    for (let r = column + 1; r < size; r++) {
      const factor = a[r * size + column]! / a[column * size + column]!;
      if (factor === 0) continue;
      for (let c = column; c < size; c++) a[r * size + c]! -= factor * a[column * size + c]!;
      b[r]! -= factor * b[column]!;
    }
  }
  const x = new Float64Array(size);
  for (let r = size - 1; r >= 0; r--) {
    let sum = b[r]!;
    for (let c = r + 1; c < size; c++) sum -= a[r * size + c]! * x[c]!;
    x[r] = sum / a[r * size + r]!;
  }
  return x.every(Number.isFinite) ? x : undefined;
}

/** The last slot (exclusive) a forecast issued at `issueTs` reaches, `hours` ahead. */
export function horizonEnd(zone: ZoneState, issueTs: number, hours = HORIZON_HOURS): number {
  const { startTs, step } = zone.series;
  return Math.ceil((issueTs + hours * HOUR_SECONDS - startTs) / step);
}

/** Slots `[first, end)` whose horizon from `issueTs` falls in `bucket`. */
export function bucketSlots(zone: ZoneState, issueTs: number, bucket: number): [number, number] {
  const { first, last } = HORIZON_BUCKETS[bucket]!;
  const { startTs, step } = zone.series;
  // horizonHours(ts) = ceil((ts + step - issueTs) / 1 h) lies in [first, last]: the first slot
  // past `hours` hours is floor((issueTs + hours h - step - startTs) / step) + 1.
  const base = issueTs - step - startTs;
  return [
    Math.floor((base + (first - 1) * HOUR_SECONDS) / step) + 1,
    Math.floor((base + last * HOUR_SECONDS) / step) + 1,
  ];
}
