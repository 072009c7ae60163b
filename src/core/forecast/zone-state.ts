import type { DepartureFit, DepartureVariant } from './departure-fit.js';
import {
  DAY_SECONDS,
  HOUR_SECONDS,
  type IssuedSeries,
  type RegularSeries,
  WEEK_SECONDS,
} from './series.js';

/**
 * What the models read of a zone (its inputs) and the features they share (ZoneState: its
 * profiles and newest value as of any cut-off).
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

/** Weeks of the hour-of-week profile (`ZoneState.profile`) unless told otherwise. */
export const CLIMATOLOGY_WEEKS = 10;
/** Weeks the day-of-week offsets of `ZoneState.dailyWeeklyProfile` are averaged over. */
export const WEEKLY_OFFSET_WEEKS = 52;

/** At least this many published values before an issue, or the zone cannot be forecast. */
const MIN_HISTORY_SECONDS = 7 * DAY_SECONDS;
/** Days the daily profile looks back on, and how fast its days lose weight. */
export const DAILY_PROFILE_DAYS = 42;
const DAILY_HALF_LIFE_DAYS = 7;
/** Days the four-week hour-of-day mean looks back on. */
const FOUR_WEEK_DAYS = 28;
/** How far back the newest published value is looked for. */
const LATEST_LOOKBACK_SECONDS = 7 * DAY_SECONDS;

/**
 * The departure regression's fits made by earlier states of a zone and basis, carried to the next
 * (departure-regression.ts `CarriedFits`).
 */
export interface FitCarrier {
  fit(
    zone: ZoneState,
    variant: DepartureVariant,
    fitTs: number,
    bucket: number,
  ): DepartureFit | undefined;
}

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
  private readonly weeklyOffsets = new Map<number, Float64Array>();
  private dailyWeightTable: Float64Array | undefined;
  private readonly fourWeekProfiles = new Map<number, Float64Array | null>();
  private fourWeekWeightTable: Float64Array | undefined;
  private readonly decayTables = new Map<number, DecayTable>();
  readonly slotsPerWeek: number;
  /** Slot-of-week of slot 0. */
  private readonly weekPhase: number;

  /**
   * `carried`: the departure regression's fits of the same zone and basis made by earlier states
   * (serve prepares a new state whenever data arrives, often several times an hour).
   */
  constructor(
    readonly inputs: ZoneInputs,
    readonly carried?: FitCarrier,
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

  /**
   * `Math.exp(-hoursAfter / eFoldingHours)` by the slots after the newest value (`hoursAfter`
   * hours): the models decay the newest departure millions of times over a few hundred lags.
   */
  decay(eFoldingHours: number): DecayTable {
    let table = this.decayTables.get(eFoldingHours);
    if (!table)
      this.decayTables.set(
        eFoldingHours,
        (table = new DecayTable(this.series.step, eFoldingHours)),
      );
    return table;
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
    return memo(this.profiles, key, () => this.buildProfile(this.series.values, visibleEnd, weeks));
  }

  /**
   * The ten-week profile with each hour of the day moved by the mean departure of that hour over
   * the last `days` days: the recent days' daily shape (solar in spring rises earlier and higher
   * than ten weeks of it say) on the climatology's weekly pattern.
   */
  reshapedProfile(visibleEnd: number, days: number): Float64Array | null {
    const key = days * 1e9 + visibleEnd;
    return memo(this.reshapedProfiles, key, () => {
      const profile = this.profile(visibleEnd);
      if (!profile) return null;
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
      return profile.map((value, ofWeek) => {
        const hour = ofWeek % perDay;
        return counts[hour]! > 0 ? value + sums[hour]! / counts[hour]! : value;
      });
    });
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
    return memo(cache, visibleEnd, () => {
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
      if (seen * step < MIN_HISTORY_SECONDS) return null;
      const mean = total / totalWeight;
      const built = new Float64Array(this.slotsPerWeek);
      for (let index = 0; index < built.length; index++) {
        const ofDay = index % perDay;
        built[index] = weights[ofDay]! > 0 ? sums[ofDay]! / weights[ofDay]! : mean;
      }
      return built;
    });
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
    return memo(this.dailyWeeklyProfiles, visibleEnd, () => {
      const daily = this.dailyProfile(visibleEnd);
      if (!daily) return null;
      // Whole weeks (from slot-of-week 0) that end by visibleEnd: every issue of a week shares them.
      const end = visibleEnd - this.slotOfWeek(visibleEnd);
      const offsets = memo(this.weeklyOffsets, end, () => this.weeklyOffsetsBefore(end));
      return daily.map((value, ofWeek) => {
        const offset = offsets[ofWeek]!;
        return Number.isNaN(offset) ? value : value + offset;
      });
    });
  }

  /**
   * Per slot of the week, the mean departure of the value from its own week's mean of that hour
   * of the day over the WEEKLY_OFFSET_WEEKS whole weeks before `end` (a week's start); NaN where
   * none was published.
   */
  private weeklyOffsetsBefore(end: number): Float64Array {
    const { step, values } = this.series;
    const perDay = DAY_SECONDS / step;
    const perWeek = this.slotsPerWeek;
    const sums = new Float64Array(perWeek);
    const counts = new Float64Array(perWeek);
    const hourSums = new Float64Array(perDay);
    const hourCounts = new Float64Array(perDay);
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
    return sums.map((sum, ofWeek) => (counts[ofWeek]! > 0 ? sum / counts[ofWeek]! : Number.NaN));
  }

  /** The same profile of the zone's total generation, when the inputs carry it. */
  generationProfile(visibleEnd: number): Float64Array | null {
    const generation = this.inputs.generation;
    if (!generation) return null;
    return memo(this.generationProfiles, visibleEnd, () =>
      this.buildProfile(generation.values, visibleEnd, CLIMATOLOGY_WEEKS),
    );
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

/** The value `cache` holds for `key`, built and kept on the first ask (null, too, is kept). */
function memo<V>(cache: Map<number, V>, key: number, build: () => V): V {
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const built = build();
  cache.set(key, built);
  return built;
}

/** One e-folding time's decay by lag in slots, each computed once as the models compute it. */
export class DecayTable {
  private factors = new Float64Array(0);

  constructor(
    private readonly step: number,
    private readonly eFoldingHours: number,
  ) {}

  /** The decay `slotsAfter` slots after the newest value. */
  at(slotsAfter: number): number {
    if (slotsAfter >= 0 && slotsAfter < this.factors.length) {
      const factor = this.factors[slotsAfter]!;
      if (!Number.isNaN(factor)) return factor;
    }
    const hoursAfter = (slotsAfter * this.step) / HOUR_SECONDS;
    const factor = Math.exp(-hoursAfter / this.eFoldingHours);
    if (slotsAfter >= 0 && slotsAfter < 1 << 16) {
      if (slotsAfter >= this.factors.length) {
        const grown = new Float64Array(Math.max(2 * this.factors.length, slotsAfter + 1, 256));
        grown.fill(Number.NaN).set(this.factors);
        this.factors = grown;
      }
      this.factors[slotsAfter] = factor;
    }
    return factor;
  }
}
