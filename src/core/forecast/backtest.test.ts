import { describe, expect, it } from 'vitest';
import {
  backtestWindyZone,
  DAY,
  H,
  historyZone,
  periodic,
  random,
  START,
  TWELVE_WEEKS,
  windyZone,
} from '../../../test/support/forecast-zones.js';
import {
  backtestZone,
  backtestZoneData,
  issueTimes,
  publishedRows,
  zoneInputsData,
} from './backtest.js';
import { quantile, SERVED, spearman } from './walk-forward.js';
import { CLIMATOLOGY_ANOMALY } from './baselines.js';
import { CANDIDATE_MODELS } from './models.js';
import { prepareForecast } from './prepare.js';
import { CLIMATOLOGY, DAILY_PROFILE } from './profile-models.js';
import { DAILY_UPSTREAM } from './upstream-corrected.js';
import { UPSTREAM_REGRESSION } from './upstream-regression.js';
import { ZoneState } from './zone-state.js';

describe('the backtest', () => {
  const { weeks, length } = TWELVE_WEEKS;

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

  it('the backtest measures how often the band had to be widened to contain a biased forecast', () => {
    const backtestOf = (trendPerHour: number) => {
      const noise = random(17);
      const points = Array.from({ length: length - 72 }, (_, slot) => ({
        ts: START + slot * H,
        value: periodic(slot) + trendPerHour * slot + 20 * (noise() - 0.5),
      }));
      const zone = historyZone(points, 3 * H);
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
