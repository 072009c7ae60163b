import { describe, expect, it } from 'vitest';
import {
  backtestZone,
  backtestZoneData,
  issueTimes,
  publishedRows,
  quantile,
  SERVED,
  spearman,
  type ZoneBacktest,
  zoneInputsData,
} from './backtest.js';
import { CLIMATOLOGY_ANOMALY, PERSISTENCE, WEEKLY_PROFILE } from './baselines.js';
import { CarriedFits, DEPARTURE_FOUR_WEEKS, DEPARTURE_REGRESSION } from './departure-regression.js';
import { CANDIDATE_MODELS } from './models.js';
import { OPERATOR_FORECAST } from './operator-forecast.js';
import { CLIMATOLOGY, DAILY_PROFILE, DAILY_WEEKLY } from './profile-models.js';
import { DAILY_UPSTREAM, DEPARTURE_UPSTREAM } from './upstream-corrected.js';
import { UPSTREAM_REGRESSION } from './upstream-regression.js';
import { type ZoneInputs, ZoneState } from './zone-state.js';
import { prepareForecast } from './prepare.js';
import { bucketIndex, horizonHours, IssuedSeries, regularSeries, type Grid } from './series.js';

const H = 3600;
const DAY = 24 * H;
// A Monday 00:00 UTC.
const START = Date.UTC(2026, 0, 5) / 1000;

/** A deterministic pseudo-random sequence in [0, 1). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** A slowly varying "weather" series: an AR(1) with a day-long memory. */
function weather(length: number, seed: number): Float64Array {
  const next = random(seed);
  const out = new Float64Array(length);
  let value = 0.5;
  for (let i = 0; i < length; i++) {
    value = 0.5 + 0.96 * (value - 0.5) + 0.08 * (next() - 0.5);
    out[i] = Math.min(1, Math.max(0, value));
  }
  return out;
}

describe('horizon buckets', () => {
  it('counts hours ahead from the issue time, the interval ending in the first hour being 1', () => {
    expect(horizonHours(START, H, START)).toBe(1);
    expect(horizonHours(START + 5 * H, H, START)).toBe(6);
    expect(horizonHours(START + 6 * H, H, START)).toBe(7);
    expect(horizonHours(START - H, H, START)).toBe(0);
    expect(horizonHours(START + 1800, 1800, START)).toBe(1);
    expect(horizonHours(START + 3600, 1800, START)).toBe(2);
    expect([0, 1, 6, 7, 24, 25, 48, 49, 72, 73].map(bucketIndex)).toEqual([
      0, 0, 0, 1, 1, 2, 2, 3, 3, -1,
    ]);
  });
});

describe('IssuedSeries', () => {
  const grid: Grid = { startTs: START, step: H, length: 4 };

  it('gives the value last issued at or before the time asked, averaging finer intervals', () => {
    const series = IssuedSeries.build(
      [
        // Issued at START - 10 h, in quarter hours: slot 0 averages 100, 110, 120, 130.
        ...[100, 110, 120, 130].map((value, k) => ({
          ts: START + k * 900,
          issuedAt: START - 10 * H,
          value,
        })),
        // Re-issued at START - 2 h, hourly.
        { ts: START, issuedAt: START - 2 * H, value: 200 },
        // Only half of slot 1 in quarter hours: not a value of the slot.
        { ts: START + H, issuedAt: START - 10 * H, value: 7 },
        { ts: START + H + 900, issuedAt: START - 10 * H, value: 9 },
      ],
      grid,
    );
    // Issued before the time asked, strictly: an issue at the very time is not yet known.
    expect(series.valueAt(0, START - 10 * H)).toBeNaN();
    expect(series.valueAt(0, START - 10 * H + 1)).toBe(115);
    expect(series.valueAt(0, START - 2 * H)).toBe(115);
    expect(series.valueAt(0, START)).toBe(200);
    expect(series.valueAt(1, START)).toBeNaN();
    expect(series.valueAt(9, START)).toBeNaN();
  });
});

describe('the models', () => {
  const weeks = 12;
  const length = weeks * 7 * 24 + 72;
  const grid: Grid = { startTs: START, step: H, length };
  // A daily and weekly cycle, exactly repeating.
  const periodic = (slot: number) =>
    300 + 80 * Math.sin((2 * Math.PI * slot) / 24) + (Math.floor(slot / 24) % 7 >= 5 ? -40 : 0);

  it('climatology reproduces an exactly weekly series and persistence holds the newest value', () => {
    const points = Array.from({ length: length - 72 }, (_, slot) => ({
      ts: START + slot * H,
      value: periodic(slot),
    }));
    const zone = new ZoneState({
      actual: regularSeries(points, grid),
      upstream: {},
      publicationLagSeconds: 3 * H,
    });
    const issueTs = START + (length - 72) * H;
    const issue = { issueTs, visibleEnd: length - 72 };
    const end = length;
    const climatology = CLIMATOLOGY.predict(zone, issue, end);
    const profile = WEEKLY_PROFILE.predict(zone, issue, end);
    for (let i = 0; i < 72; i++) {
      expect(climatology[i]).toBeCloseTo(periodic(length - 72 + i), 9);
      expect(profile[i]).toBeCloseTo(periodic(length - 72 + i), 9);
    }
    expect([...PERSISTENCE.predict(zone, issue, end)]).toEqual(
      new Array(72).fill(periodic(length - 73)),
    );
    // No upstream forecasts: the regression still runs, on the zone's own features, and finds
    // the weekly shape (within a few percent of its swing: the ridge penalty shrinks a little).
    const regression = UPSTREAM_REGRESSION.predict(zone, issue, end);
    for (let i = 0; i < 72; i++) {
      expect(Math.abs(regression[i]! - periodic(length - 72 + i))).toBeLessThan(8);
    }
    expect(UPSTREAM_REGRESSION.inputsOf(zone)).toEqual(['history']);
  });

  it("the daily profile follows the recent days' hour of the day, the newer days weighing more", () => {
    // The daily swing grows from 40 to 160 in the last ten days (spring sun); every weekend is
    // 40 lower, which the hour of the day does not see.
    const visibleEnd = length - 72;
    const swing = (slot: number) => (slot >= visibleEnd - 10 * 24 ? 160 : 40);
    const value = (slot: number) =>
      300 -
      swing(slot) * Math.sin((2 * Math.PI * slot) / 24) +
      (Math.floor(slot / 24) % 7 >= 5 ? -40 : 0);
    const points = Array.from({ length: visibleEnd }, (_, slot) => ({
      ts: START + slot * H,
      value: value(slot),
    }));
    const zone = new ZoneState({
      actual: regularSeries(points, grid),
      upstream: {},
      publicationLagSeconds: 0,
    });
    const daily = zone.dailyProfile(visibleEnd)!;
    // Every day alike: the hour of the day only.
    for (let slot = 0; slot < 24 * 6; slot++) expect(daily[slot + 24]).toBe(daily[slot]);
    // Ten of the 42 days swing 160, but they are the newest: most of the weight is theirs.
    const dailySwing = (daily[18]! - daily[6]!) / 2;
    expect(dailySwing).toBeGreaterThan(100);
    expect(dailySwing).toBeLessThan(160);
    // The ten-week hour of the week still says about 40 (10 of 70 days at 160).
    const weekly = zone.profile(visibleEnd)!;
    expect((weekly[18]! - weekly[6]!) / 2).toBeLessThan(dailySwing - 40);
    // The model orders the next day's hours as the recent days did: lowest around 06:00 UTC.
    const issueTs = START + visibleEnd * H;
    const forecast = DAILY_PROFILE.predict(zone, { issueTs, visibleEnd }, visibleEnd + 24);
    const lowest = forecast.indexOf(Math.min(...forecast));
    expect(Math.abs(((visibleEnd + lowest) % 24) - 6)).toBeLessThanOrEqual(1);
    expect(DAILY_PROFILE.inputsOf(zone)).toEqual(['history']);
  });

  it("the daily-weekly profile adds the day of the week's departure, learned over whole weeks", () => {
    // Weekends 40 lower: each week's departures from its own hour-of-day means hold that
    // difference, which the daily profile (every day alike) cannot.
    const visibleEnd = length - 72;
    const points = Array.from({ length: visibleEnd }, (_, slot) => ({
      ts: START + slot * H,
      value: periodic(slot),
    }));
    const zone = new ZoneState({
      actual: regularSeries(points, grid),
      upstream: {},
      publicationLagSeconds: 0,
    });
    const daily = zone.dailyProfile(visibleEnd)!;
    const weekly = zone.dailyWeeklyProfile(visibleEnd)!;
    const offset = (slot: number) => weekly[zone.slotOfWeek(slot)]! - daily[zone.slotOfWeek(slot)]!;
    // Saturday and Wednesday 00:00 and 12:00 UTC (START is a Monday).
    for (const hour of [0, 12]) {
      expect(offset(5 * 24 + hour) - offset(2 * 24 + hour)).toBeCloseTo(-40, 0);
    }
    // Over a week the departures cancel: the daily profile's level is kept.
    const sum = Array.from({ length: 7 }, (_, day) => offset(day * 24)).reduce((a, b) => a + b);
    expect(Math.abs(sum)).toBeLessThan(1);
    // The model's next 72 hours follow the weekend's dip where the daily profile alone cannot.
    const issueTs = START + visibleEnd * H;
    const forecast = DAILY_WEEKLY.predict(zone, { issueTs, visibleEnd }, visibleEnd + 72);
    const truth = Array.from({ length: 72 }, (_, i) => periodic(visibleEnd + i));
    const plain = DAILY_PROFILE.predict(zone, { issueTs, visibleEnd }, visibleEnd + 72);
    const rmse = (values: Float64Array) =>
      Math.sqrt(values.reduce((sum, value, i) => sum + (value - truth[i]!) ** 2, 0) / 72);
    expect(rmse(forecast)).toBeLessThan(rmse(plain));
  });

  /**
   * A daily cycle, Sunday afternoons 120 lower, and a level that wanders for days: the daily
   * base (recent hour-of-day profile plus the newest departure fading over a day) misses the
   * Sunday dip and lets the wandering level fade too fast; a year of issues teaches both.
   */
  function sundayDips(days: number): { ts: number; value: number }[] {
    const wander = weather(days * 24, 7);
    const noise = random(11);
    return Array.from({ length: days * 24 }, (_, slot) => {
      const hour = slot % 24;
      const sunday = Math.floor(slot / 24) % 7 === 6 && hour >= 10 && hour <= 16;
      return {
        ts: START + slot * H,
        value:
          400 +
          100 * Math.cos((2 * Math.PI * (hour - 14)) / 24) -
          (sunday ? 120 : 0) +
          600 * (wander[slot]! - 0.5) +
          10 * (noise() - 0.5),
      };
    });
  }

  it('the departure regressions learn from a year what the daily base misses', () => {
    const days = 420;
    const points = sundayDips(days);
    const zone = new ZoneState({
      actual: regularSeries(points, { startTs: START, step: H, length: days * 24 }),
      upstream: {},
      publicationLagSeconds: 3 * H,
    });
    const departures = [DEPARTURE_REGRESSION, DEPARTURE_FOUR_WEEKS];
    const models = [...departures, DAILY_PROFILE, DAILY_WEEKLY, CLIMATOLOGY];
    const squared = new Map(models.map((model) => [model.id, 0]));
    for (let day = 390; day < days - 3; day++) {
      const issueTs = START + day * DAY + 6 * H;
      const issue = { issueTs, visibleEnd: zone.visibleEndAt(issueTs) };
      for (const model of models) {
        const forecast = model.predict(zone, issue, issue.visibleEnd + 75);
        for (let i = 0; i < forecast.length; i++) {
          expect(Number.isFinite(forecast[i]!), model.id).toBe(true);
          const error = forecast[i]! - points[issue.visibleEnd + i]!.value;
          squared.set(model.id, squared.get(model.id)! + error ** 2);
        }
      }
    }
    // Better than each of the profiles, those that see the day of the week included; the two
    // fits differ (one more input), and neither is far behind the other.
    const error = (model: { id: string }) => squared.get(model.id)!;
    for (const departure of departures) {
      expect(error(departure), departure.id).toBeLessThan(0.8 * error(DAILY_PROFILE));
      expect(error(departure), departure.id).toBeLessThan(
        0.9 * Math.min(error(DAILY_WEEKLY), error(CLIMATOLOGY)),
      );
    }
    expect(error(DEPARTURE_FOUR_WEEKS)).not.toBe(error(DEPARTURE_REGRESSION));
    expect(error(DEPARTURE_FOUR_WEEKS)).toBeLessThan(1.1 * error(DEPARTURE_REGRESSION));
    // Without a year they still forecast, from the weeks they have.
    const early = START + 40 * DAY + 6 * H;
    const earlyIssue = { issueTs: early, visibleEnd: zone.visibleEndAt(early) };
    for (const departure of departures) {
      const forecast = departure.predict(zone, earlyIssue, earlyIssue.visibleEnd + 75);
      expect(forecast.every(Number.isFinite), departure.id).toBe(true);
      expect(departure.inputsOf(zone)).toEqual(['history']);
    }
  });

  it("serve's states carry the departure regression's fits while the values they read are the same", () => {
    const points = sundayDips(460);
    // States of the same zone as serve prepares them: windows of 445 days ending later each
    // time, with some values replaced (NaN: not yet published).
    const stateAt = (issueTs: number, carried?: CarriedFits, edits = new Map<number, number>()) => {
      const from = issueTs - 445 * DAY - ((issueTs - START) % H);
      const window = points
        .filter(({ ts }) => ts >= from && ts < issueTs)
        .map((point) => ({ ts: point.ts, value: edits.get(point.ts) ?? point.value }));
      const actual = regularSeries(window, { startTs: from, step: H, length: window.length + 80 });
      return new ZoneState({ actual, upstream: {}, publicationLagSeconds: 3 * H }, carried);
    };
    // Both departure regressions, each with four fits (one per bucket), kept apart.
    const forecastOf = (state: ZoneState, issueTs: number) => {
      const issue = { issueTs, visibleEnd: state.visibleEndAt(issueTs) };
      return [DEPARTURE_REGRESSION, DEPARTURE_FOUR_WEEKS].map((model) =>
        model.predict(state, issue, issue.visibleEnd + 75),
      );
    };
    const first = START + 455 * DAY + 6 * H + 300;
    const later = first + 1200;
    // Fitted at the start of the hour on the last day since 1970 that 7 divides, on the values
    // published 3 hours before, reading 436 days of them (a year of issues and their profiles).
    const hourTs = Math.floor(later / H) * H;
    const fitTs = hourTs - (Math.floor(hourTs / DAY) % 7) * DAY;
    const firstRead = fitTs - 3 * H - 436 * DAY;
    const lateTs = fitTs - 200 * DAY;
    const unpublished = new Map([[lateTs, Number.NaN]]);
    const carried = new CarriedFits();
    const counts = () => [carried.made, carried.reused];
    forecastOf(stateAt(first, carried, unpublished), first);
    expect(counts()).toEqual([8, 0]);

    // Twenty minutes later, a new state on the same values (the gap still unpublished): the
    // eight fits are reused, and the forecast is the one a state without carried fits makes.
    const reused = forecastOf(stateAt(later, carried, unpublished), later);
    expect(counts()).toEqual([8, 8]);
    expect(reused).toEqual(forecastOf(stateAt(later, undefined, unpublished), later));

    // The late value published: made again, as without carried fits.
    const published = forecastOf(stateAt(later, carried), later);
    expect(counts()).toEqual([16, 8]);
    expect(published).toEqual(forecastOf(stateAt(later), later));
    expect(published[0]).not.toEqual(reused[0]);
    expect(published[1]).not.toEqual(reused[1]);
    // The two variants' fits are their own.
    expect(published[1]).not.toEqual(published[0]);
    // A value revised an hour before the first one the fits read: reused, and rightly (a
    // state without carried fits, which reads it if anything does, forecasts the same).
    const revisedBefore = new Map([
      [firstRead - H, points[(firstRead - H - START) / H]!.value + 300],
    ]);
    expect(forecastOf(stateAt(later, carried, revisedBefore), later)).toEqual(
      forecastOf(stateAt(later, undefined, revisedBefore), later),
    );
    expect(counts()).toEqual([16, 16]);

    // The first value they read revised: made again.
    const revisedFirst = new Map([[firstRead, points[(firstRead - START) / H]!.value + 300]]);
    const revised = forecastOf(stateAt(later, carried, revisedFirst), later);
    expect(counts()).toEqual([24, 16]);
    expect(revised).toEqual(forecastOf(stateAt(later, undefined, revisedFirst), later));

    // The next hour is fitted at another time of day.
    forecastOf(stateAt(first + H, carried), first + H);
    expect(carried.made).toBe(32);
  });

  it('cannot forecast with less than a week of values', () => {
    const points = Array.from({ length: 6 * 24 }, (_, slot) => ({
      ts: START + slot * H,
      value: 1,
    }));
    const zone = new ZoneState({
      actual: regularSeries(points, grid),
      upstream: {},
      publicationLagSeconds: 3 * H,
    });
    expect(prepareForecast('DE', 'lifecycle', zone, START + 6 * DAY, undefined)).toBeNull();
  });

  /** A zone whose intensity falls with the wind share, the wind forecast issued the day before. */
  function windyZone(
    forecastError: number,
    poison: (ts: number, issuedAt?: number) => boolean = () => false,
  ): { inputs: ZoneInputs; truth: Float64Array } {
    const wind = weather(length, 7);
    const noise = random(11);
    const errors = weather(length, 13);
    const truth = new Float64Array(length);
    const windForecasts = [];
    const loadForecasts = [];
    const points = [];
    for (let slot = 0; slot < length; slot++) {
      const ts = START + slot * H;
      const load = 1000 + 200 * Math.sin((2 * Math.PI * slot) / 24);
      const windMw = 900 * wind[slot]!;
      truth[slot] = 600 - 500 * (windMw / load) + 4 * (noise() - 0.5);
      if (slot < length - 72) points.push({ ts, value: poison(ts) ? 1e6 : truth[slot]! });
      // Day-ahead: issued at 17:00 the day before the interval's day.
      const issuedAt = Math.floor(ts / DAY) * DAY - 7 * H;
      const bad = poison(ts, issuedAt);
      windForecasts.push({
        ts,
        issuedAt,
        value: bad ? 1e6 : windMw + forecastError * (errors[slot]! - 0.5),
      });
      loadForecasts.push({ ts, issuedAt, value: bad ? 1 : load });
    }
    return {
      truth,
      inputs: {
        actual: regularSeries(points, grid),
        upstream: {
          wind: IssuedSeries.build(windForecasts, grid),
          load: IssuedSeries.build(loadForecasts, grid),
        },
        publicationLagSeconds: 3 * H,
      },
    };
  }

  it('the regression learns intensity from the forecast wind share and beats the climatology', () => {
    const { inputs, truth } = windyZone(100);
    const zone = new ZoneState(inputs);
    const issueTs = START + (length - 72) * H;
    const visibleEnd = length - 72;
    const regression = UPSTREAM_REGRESSION.predict(zone, { issueTs, visibleEnd }, length);
    const climatology = CLIMATOLOGY.predict(zone, { issueTs, visibleEnd }, length);
    const rmse = (forecast: Float64Array, from: number, to: number) => {
      let sum = 0;
      for (let i = from; i < to; i++) sum += (forecast[i]! - truth[visibleEnd + i]!) ** 2;
      return Math.sqrt(sum / (to - from));
    };
    // The day-ahead forecast reaches the end of the next day (24 h here); beyond it the fit on
    // the zone's own features serves, handed over without a jump.
    expect(regression.every(Number.isFinite)).toBe(true);
    expect(rmse(regression, 0, 24)).toBeLessThan(0.75 * rmse(climatology, 0, 24));
    expect(UPSTREAM_REGRESSION.inputsOf(zone)).toEqual(['history', 'wind', 'load']);
  });

  it('the daily profile corrected by the wind forecast orders the next day by the wind', () => {
    const { inputs, truth } = windyZone(100);
    const zone = new ZoneState(inputs);
    const issueTs = START + (length - 72) * H;
    const visibleEnd = length - 72;
    const corrected = DAILY_UPSTREAM.predict(zone, { issueTs, visibleEnd }, length);
    const daily = DAILY_PROFILE.predict(zone, { issueTs, visibleEnd }, length);
    const next = (forecast: Float64Array) => [...forecast.subarray(0, 24)];
    const outcome = [...truth.subarray(visibleEnd, visibleEnd + 24)];
    expect(spearman(next(corrected), outcome)!).toBeGreaterThan(0.8);
    expect(spearman(next(corrected), outcome)!).toBeGreaterThan(spearman(next(daily), outcome)!);
    // Beyond the day-ahead's reach, the profile alone: never a gap.
    expect(corrected.every(Number.isFinite)).toBe(true);
    expect(DAILY_UPSTREAM.inputsOf(zone)).toEqual(['history', 'wind', 'load']);
    expect(DAILY_UPSTREAM.appliesTo!(zone)).toBe(true);
    // Without upstream forecasts it is no candidate.
    const bare = new ZoneState({ ...inputs, upstream: {} });
    expect(DAILY_UPSTREAM.appliesTo!(bare)).toBe(false);
  });

  it('the departure regression corrected by the wind forecast takes its place where the wind is forecast', () => {
    const { inputs, truth } = windyZone(100);
    const zone = new ZoneState(inputs);
    // Over the next 24 hours of ten daily issues: what the wind forecast explains is removed.
    const squared = new Map([DEPARTURE_UPSTREAM, DEPARTURE_REGRESSION].map(({ id }) => [id, 0]));
    for (let day = 10; day > 0; day--) {
      const issueTs = START + (length - 72) * H - day * DAY;
      const issue = { issueTs, visibleEnd: zone.visibleEndAt(issueTs) };
      for (const model of [DEPARTURE_UPSTREAM, DEPARTURE_REGRESSION]) {
        const forecast = model.predict(zone, issue, issue.visibleEnd + 24);
        for (let i = 0; i < 24; i++) {
          const error = forecast[i]! - truth[issue.visibleEnd + i]!;
          squared.set(model.id, squared.get(model.id)! + error ** 2);
        }
      }
    }
    expect(squared.get(DEPARTURE_UPSTREAM.id)!).toBeLessThan(
      0.5 * squared.get(DEPARTURE_REGRESSION.id)!,
    );
    const issueTs = START + (length - 72) * H;
    const visibleEnd = length - 72;
    const corrected = DEPARTURE_UPSTREAM.predict(zone, { issueTs, visibleEnd }, length);
    const plain = DEPARTURE_REGRESSION.predict(zone, { issueTs, visibleEnd }, length);
    const outcome = truth.subarray(visibleEnd, visibleEnd + 24);
    expect(spearman([...corrected.subarray(0, 24)], [...outcome])!).toBeGreaterThan(0.8);
    // Beyond the day-ahead's reach (25 h), the regression alone, handed over without a gap.
    expect(corrected.every(Number.isFinite)).toBe(true);
    expect(corrected[70]).toBeCloseTo(plain[70]!, 3);
    expect(DEPARTURE_UPSTREAM.inputsOf(zone)).toEqual(['history', 'wind', 'load']);
    // One candidate of the two: the corrected one where the zone has upstream forecasts.
    expect(DEPARTURE_UPSTREAM.appliesTo!(zone)).toBe(true);
    expect(DEPARTURE_REGRESSION.appliesTo!(zone)).toBe(false);
    const bare = new ZoneState({ ...inputs, upstream: {} });
    expect(DEPARTURE_UPSTREAM.appliesTo!(bare)).toBe(false);
    expect(DEPARTURE_REGRESSION.appliesTo!(bare)).toBe(true);
  });

  it('sees nothing published after the lag nor issued at or after the issue time', () => {
    const issueTs = START + 60 * DAY;
    const clean = windyZone(100, () => false);
    // The same zone with every value it must not see, and every forecast issued at or after
    // the issue time, replaced by absurd ones.
    const poisoned = windyZone(100, (ts, issuedAt) =>
      issuedAt === undefined ? ts >= issueTs - 3 * H : issuedAt >= issueTs,
    );
    for (const model of [
      CLIMATOLOGY,
      DAILY_PROFILE,
      UPSTREAM_REGRESSION,
      DAILY_UPSTREAM,
      DAILY_WEEKLY,
      DEPARTURE_REGRESSION,
      DEPARTURE_FOUR_WEEKS,
      DEPARTURE_UPSTREAM,
      PERSISTENCE,
      WEEKLY_PROFILE,
    ]) {
      const forecastOf = ({ inputs }: { inputs: ZoneInputs }) => {
        const zone = new ZoneState(inputs);
        const issue = { issueTs, visibleEnd: zone.visibleEndAt(issueTs) };
        return [...model.predict(zone, issue, issue.visibleEnd + 96)];
      };
      expect(forecastOf(poisoned), model.id).toEqual(forecastOf(clean));
    }
  });

  /** The windy zone's backtest, every 6 hours from its 15th day to three days before its end. */
  const backtestWindyZone = () => {
    const zone = new ZoneState(windyZone(150).inputs);
    const result = backtestZone('DE', 'lifecycle', zone, {
      issueTimes: issueTimes(START + 14 * DAY, START + (weeks * 7 - 3) * DAY),
      candidates: CANDIDATE_MODELS,
    });
    return { zone, result };
  };

  /** A run's weights with every bucket's weight on one candidate (and `others` beside it). */
  const allWeightOn = (
    result: ZoneBacktest,
    id: string,
    others: Readonly<Record<string, number>> = {},
  ): ZoneBacktest['weights'] =>
    Object.fromEntries(
      Object.keys(result.weights!).map((bucket) => [
        bucket,
        {
          ...Object.fromEntries(
            CANDIDATE_MODELS.map((model) => [model.id, model.id === id ? 1 : 0]),
          ),
          ...others,
        },
      ]),
    ) as ZoneBacktest['weights'];

  it('the backtest scores out of sample, picks the better model per bucket and calibrates its band', () => {
    const { zone, result } = backtestWindyZone();
    // Every 6 hours.
    expect(result.issues).toBe((weeks * 7 - 3 - 14) * 4 + 1);
    const row = (bucket: string, model: string) =>
      result.rows.find((entry) => entry.bucket === bucket && entry.model === model)!;
    // The wind forecast covers up to 31 h ahead of a midnight issue: the regression serves there.
    expect(result.served['1-6']).toBe(UPSTREAM_REGRESSION.id);
    expect(result.served['7-24']).toBe(UPSTREAM_REGRESSION.id);
    // Beyond its reach, a profile serves (daily-upstream is the daily profile there).
    expect([CLIMATOLOGY.id, CLIMATOLOGY_ANOMALY.id, DAILY_PROFILE.id, DAILY_UPSTREAM.id]).toContain(
      result.served['49-72'],
    );
    expect(row('7-24', UPSTREAM_REGRESSION.id).served).toBe(true);
    // The forecast as served, its models chosen walk-forward.
    const day = result.asServed!.find((entry) => entry.bucket === '7-24')!;
    expect(day.model).toBe(UPSTREAM_REGRESSION.id);
    // The candidates that read the wind forecast carry the day.
    expect(day.chosen[UPSTREAM_REGRESSION.id]! + day.chosen[DAILY_UPSTREAM.id]!).toBeGreaterThan(
      0.8,
    );
    expect(day.n).toBeGreaterThan(1000);
    expect(day.skill_vs_climatology).toBeGreaterThan(0.3);
    expect(day.skill_vs_persistence).toBeGreaterThan(0.3);
    expect(day.spearman).toBeGreaterThan(0.5);
    expect(day.p10_p90_coverage).toBeGreaterThan(0.7);
    expect(day.p10_p90_coverage).toBeLessThan(0.9);
    expect(day.savings_captured).toBeGreaterThan(0.5);
    expect(day.savings_captured).toBeLessThanOrEqual(1);
    expect(result.bands[SERVED]!.q10[11]).toBeLessThan(0);
    expect(result.bands[SERVED]!.q90[11]).toBeGreaterThan(0);
    // What the skill table publishes: the forecast as served; from a run stored before that was
    // measured, the rows of the models it served.
    expect(publishedRows(result)).toBe(result.asServed);
    const { asServed: _measured, ...older } = result;
    expect(publishedRows(older).map((entry) => [entry.bucket, entry.model])).toEqual(
      Object.entries(result.served),
    );

    // The forecast served from it: the served model per bucket, the band around each value.
    const issueTs = START + (length - 72) * H;
    const forecast = prepareForecast('DE', 'lifecycle', zone, issueTs, result)!;
    expect(forecast.startTs).toBe(issueTs);
    // 72 hours, and one more for the hour it is served until the next recompute.
    expect(forecast.values.length).toBe(73);
    expect(forecast.model).toBe(UPSTREAM_REGRESSION.id);
    // Where the day-ahead wind ends (25 h ahead) and at each bucket's edge, one model or fit
    // hands over to another: never with a step larger than the band is wide.
    for (const i of [6, 24, 48]) {
      const step = Math.abs(forecast.values[i]! - forecast.values[i - 1]!);
      expect(step, `step into interval ${i}`).toBeLessThanOrEqual(
        forecast.p90[i]! - forecast.p10[i]!,
      );
    }
    for (let i = 0; i < 73; i++) {
      expect(forecast.p10[i]!).toBeLessThan(forecast.p90[i]!);
      expect(forecast.p10[i]!).toBeLessThanOrEqual(forecast.values[i]!);
      expect(forecast.values[i]!).toBeLessThanOrEqual(forecast.p90[i]!);
    }
  });

  it('the backtest gives the same result from plain inputs that went through a structured clone', () => {
    const { inputs } = windyZone(150);
    const options = {
      issueTimes: issueTimes(START + 14 * DAY, START + 30 * DAY),
      candidates: CANDIDATE_MODELS,
    };
    const direct = backtestZone('DE', 'lifecycle', new ZoneState(inputs), options);
    const cloned = structuredClone(zoneInputsData(inputs));
    const viaData = backtestZoneData(
      'DE',
      'lifecycle',
      cloned,
      options.issueTimes,
      CANDIDATE_MODELS.map(({ id }) => id),
    );
    expect(viaData.issues).toBeGreaterThan(0);
    // Plain data out: it survives a structured clone unchanged.
    expect(structuredClone(viaData)).toEqual(direct);
  });

  it('the forecast served weighs every candidate the backtest weighed, takes its day shape and predicts no other', () => {
    const { zone, result } = backtestWindyZone();
    // Fitted on 60 days of published days, the day shape weighs the wind-reading candidates.
    const dayShape = result.dayShapeWeights!;
    expect(dayShape[UPSTREAM_REGRESSION.id]! + dayShape[DAILY_UPSTREAM.id]!).toBeGreaterThan(0.5);
    const issueTs = START + (length - 72) * H;
    const issue = { issueTs, visibleEnd: length - 72 };
    const end = length + 1;
    // All weight on the newest candidate: it serves (it once was left out, and the climatology
    // served in its place), and without a day shape it serves unchanged.
    const { dayShapeWeights: _dropped, ...withoutDayShape } = result;
    const weekly = prepareForecast('DE', 'lifecycle', zone, issueTs, {
      ...withoutDayShape,
      weights: allWeightOn(result, DAILY_WEEKLY.id),
    })!;
    const expected = DAILY_WEEKLY.predict(zone, issue, end);
    for (let i = 0; i < 73; i++) expect(weekly.values[i]).toBeCloseTo(Math.max(0, expected[i]!), 9);
    // Weights that name a model this version lacks (a run stored by another version) are not
    // served: the run's served models are, as from a run stored before the weights.
    const naming = allWeightOn(result, DAILY_WEEKLY.id, { 'retired@1': 0 });
    const { weights: _none, ...unweighed } = withoutDayShape;
    expect(
      prepareForecast('DE', 'lifecycle', zone, issueTs, { ...withoutDayShape, weights: naming })!
        .values,
    ).toEqual(prepareForecast('DE', 'lifecycle', zone, issueTs, unweighed)!.values);
    // With a day shape, the next 24 hours keep their mean and take that shape.
    const reshaped = prepareForecast('DE', 'lifecycle', zone, issueTs, {
      ...withoutDayShape,
      weights: allWeightOn(result, DAILY_WEEKLY.id),
      dayShapeWeights: { [DAILY_PROFILE.id]: 1 },
    })!;
    const profile = DAILY_PROFILE.predict(zone, issue, end);
    const dayMean = (values: ArrayLike<number>) => {
      let sum = 0;
      for (let i = 0; i < 24; i++) sum += values[i]!;
      return sum / 24;
    };
    expect(dayMean(reshaped.values)).toBeCloseTo(dayMean(weekly.values), 9);
    for (let i = 0; i < 24; i++) {
      expect(reshaped.values[i]! - dayMean(weekly.values)).toBeCloseTo(
        profile[i]! - dayMean(profile),
        9,
      );
    }
    expect(reshaped.values[60]).toBeCloseTo(weekly.values[60]!, 3);

    // Only what serves is predicted: the departure regressions' fits are made only when one of
    // them is weighed (or named as served).
    const { dayShapeWeights: _unused, ...run } = result;
    const fitsMade = (id: string) => {
      const carried = new CarriedFits();
      const served = Object.fromEntries(Object.keys(run.served).map((bucket) => [bucket, id]));
      prepareForecast('DE', 'lifecycle', new ZoneState(zone.inputs, carried), issueTs, {
        ...run,
        served: served as typeof run.served,
        weights: allWeightOn(result, id),
      });
      return carried.made;
    };
    expect(fitsMade(DEPARTURE_UPSTREAM.id)).toBeGreaterThan(0);
    expect(fitsMade(DAILY_WEEKLY.id)).toBe(0);
  });

  it('the backtest measures how often the band had to be widened to contain a biased forecast', () => {
    const backtestOf = (trendPerHour: number) => {
      const noise = random(17);
      const points = Array.from({ length: length - 72 }, (_, slot) => ({
        ts: START + slot * H,
        value: periodic(slot) + trendPerHour * slot + 20 * (noise() - 0.5),
      }));
      const zone = new ZoneState({
        actual: regularSeries(points, grid),
        upstream: {},
        publicationLagSeconds: 3 * H,
      });
      return backtestZone('DE', 'lifecycle', zone, {
        issueTimes: issueTimes(START + 14 * DAY, START + (weeks * 7 - 3) * DAY),
        candidates: CANDIDATE_MODELS,
      });
    };
    const clamped = (result: ReturnType<typeof backtestZone>) =>
      result.asServed!.map((row) => row.band_clamped!);
    // A steady cycle: the errors straddle 0, the band needs no widening.
    for (const share of clamped(backtestOf(0))) expect(share).toBeLessThan(0.05);
    // Rising steadily: every model reads only the past and falls short, so that the errors' P10
    // is above 0 (the forecast below its own band).
    const rising = backtestOf(3);
    for (const share of clamped(rising)) expect(share).toBeGreaterThan(0.5);
    // Measured on the forecast as served only: the candidates' rows are what the API serves.
    expect(rising.rows.every((row) => row.band_clamped === undefined)).toBe(true);
  });
});

describe('the operator forecast (GB, no basis)', () => {
  it('is republished unchanged, from where it starts to where it ends', () => {
    const step = 1800;
    const length = 10 * 48 + 96;
    const grid: Grid = { startTs: START, step, length };
    const points = Array.from({ length: 10 * 48 }, (_, slot) => ({
      ts: START + slot * step,
      value: 200 + (slot % 48),
    }));
    const issueTs = START + 10 * DAY + 3600;
    const fw48h = Array.from({ length: 96 }, (_, k) => ({
      ts: issueTs + k * step,
      issuedAt: issueTs - 60,
      value: 150 + k,
    }));
    const zone = new ZoneState({
      actual: regularSeries(points, grid),
      upstream: { operatorForecast: IssuedSeries.build(fw48h, grid) },
      publicationLagSeconds: H,
    });
    const forecast = prepareForecast('GB', 'operator', zone, issueTs, undefined)!;
    expect(forecast.model).toBe(OPERATOR_FORECAST.id);
    expect(forecast.startTs).toBe(issueTs);
    expect(forecast.stepSeconds).toBe(step);
    expect([...forecast.values]).toEqual(
      fw48h.filter(({ ts }) => ts < START + length * step).map(({ value }) => value),
    );
    // No backtest yet: no band.
    expect(Number.isNaN(forecast.p10[0]!)).toBe(true);
  });
});

describe('statistics', () => {
  it('quantiles interpolate between order statistics', () => {
    expect(quantile([1, 2, 3, 4, 5], 0.1)).toBeCloseTo(1.4, 12);
    expect(quantile([1, 2, 3, 4, 5], 0.9)).toBeCloseTo(4.6, 12);
    expect(quantile([7], 0.5)).toBe(7);
  });

  it("Spearman's rho by ranks, ties sharing their mean rank", () => {
    expect(spearman([1, 2, 3, 4], [10, 20, 30, 40])).toBe(1);
    expect(spearman([1, 2, 3, 4], [4, 3, 2, 1])).toBe(-1);
    expect(spearman([1, 2, 3], [5, 5, 5])).toBeNull();
    expect(spearman([1, 2], [1, 2])).toBeNull();
    // Ranks 1, 2.5, 2.5, 4 against 1, 3, 2, 4: covariance 4.5, variances 4.5 and 5.
    expect(spearman([1, 2, 2, 3], [1, 3, 2, 4])).toBeCloseTo(4.5 / Math.sqrt(4.5 * 5), 12);
  });
});
