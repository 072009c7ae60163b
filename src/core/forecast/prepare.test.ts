import { describe, expect, it } from 'vitest';
import {
  backtestWindyZone,
  DAY,
  H,
  historyZone,
  LAST_ISSUE,
  START,
  TWELVE_WEEKS,
} from '../../../test/support/forecast-zones.js';
import type { ZoneBacktest } from './backtest.js';
import { CarriedFits } from './departure-regression.js';
import { CANDIDATE_MODELS } from './models.js';
import { prepareForecast } from './prepare.js';
import { DAILY_PROFILE, DAILY_WEEKLY } from './profile-models.js';
import { DAILY_UPSTREAM, DEPARTURE_UPSTREAM } from './upstream-corrected.js';
import { UPSTREAM_REGRESSION } from './upstream-regression.js';
import { ZoneState } from './zone-state.js';

describe('the forecast served', () => {
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

  it('cannot forecast with less than a week of values', () => {
    const points = Array.from({ length: 6 * 24 }, (_, slot) => ({
      ts: START + slot * H,
      value: 1,
    }));
    const zone = historyZone(points, 3 * H);
    expect(prepareForecast('DE', 'lifecycle', zone, START + 6 * DAY, undefined)).toBeNull();
  });

  it('the forecast served weighs every candidate the backtest weighed, takes its day shape and predicts no other', () => {
    const { zone, result } = backtestWindyZone();
    // Fitted on 60 days of published days, the day shape weighs the wind-reading candidates.
    const dayShape = result.dayShapeWeights!;
    expect(dayShape[UPSTREAM_REGRESSION.id]! + dayShape[DAILY_UPSTREAM.id]!).toBeGreaterThan(0.5);
    const issue = LAST_ISSUE;
    const { issueTs } = issue;
    const end = TWELVE_WEEKS.length + 1;
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
});
