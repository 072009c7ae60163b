import { describe, expect, it } from 'vitest';
import { dayWindow, nonNegativeRidge, reshapeDay, weighDayShapes } from './day-shape.js';

const HOUR = 3600;
const DAY = 24 * HOUR;
const LAG_HOURS = 3;
const DAYS = 40;
/** What is published: a daily sine around 100 g. */
const truth = (slot: number) => 100 + 10 * Math.sin((2 * Math.PI * slot) / 24);
/** A forecast of the right shape at the wrong level, and one of the wrong shape. */
const rightShape = (slot: number) => 150 + 10 * Math.sin((2 * Math.PI * slot) / 24);
const wrongShape = (slot: number) => 100 + 10 * Math.cos((2 * Math.PI * slot) / 24);

function zoneOf(values: Float64Array) {
  return {
    series: { startTs: 0, step: HOUR, values },
    inputs: { publicationLagSeconds: LAG_HOURS * HOUR },
  };
}

/** One issue a day at midnight; its arrays start where its published values end. */
const issues = Array.from({ length: DAYS }, (_, day) => ({
  issueTs: day * DAY,
  visibleEnd: day * 24 - LAG_HOURS,
}));
const arraysOf = (issue: { visibleEnd: number }) =>
  [rightShape, wrongShape].map((model) =>
    Float64Array.from({ length: 72 + LAG_HOURS }, (_, i) => model(issue.visibleEnd + i)),
  );

describe('the next day shape', () => {
  it('lies at the first slot at or after the issue time, 24 hours long', () => {
    const zone = zoneOf(new Float64Array(100));
    expect(dayWindow(zone, { issueTs: 10 * HOUR, visibleEnd: 7 })).toEqual({
      offset: 3,
      slots: 24,
    });
    expect(dayWindow(zone, { issueTs: 10 * HOUR, visibleEnd: 11 })).toBeNull();
  });

  it('non-negative ridge: weight on the source that is the outcome, none on one against it', () => {
    // Two orthogonal sources of unit squared norm; the outcome is the first; ridge 0.1 * 1.
    const weights = nonNegativeRidge(Float64Array.from([1, 0, 0, 1, 1, -0.5]), 2);
    expect(weights[0]).toBeCloseTo(1 / 1.1, 9);
    expect(weights[1]).toBe(0);
  });

  it('weighs the shape that was right, walk-forward, once twenty published days are known', () => {
    const values = Float64Array.from({ length: DAYS * 24 + 72 }, (_, slot) => truth(slot));
    const zone = zoneOf(values);
    const weights = weighDayShapes(zone, issues, (index) => arraysOf(issues[index]!));
    expect(weights).toHaveLength(DAYS + 1);
    // Issue k's day is published 3 hours after it ends: issue 21 is the first with 20 such days.
    expect(weights[20]).toBeNull();
    // Equal norms, orthogonal shapes: the right one gets 1 / (1 + ridge), the wrong one none.
    expect(weights[21]![0]).toBeCloseTo(1 / 1.1, 6);
    expect(weights[21]![1]).toBeCloseTo(0, 9);

    // Nothing published after an issue's time less the lag changes that issue's weights.
    const later = Float64Array.from(values);
    later.fill(1e6, 30 * 24 - LAG_HOURS);
    const blind = weighDayShapes(zoneOf(later), issues, (index) => arraysOf(issues[index]!));
    expect(blind.slice(0, 31)).toEqual(weights.slice(0, 31));
    expect(blind[31]).not.toEqual(weights[31]);
  });

  it('keeps the forecast day mean, takes the weighted shapes and hands back after the day', () => {
    const issue = issues[5]!;
    const [right, wrong] = arraysOf(issue);
    const forecast = Float64Array.from({ length: 72 + LAG_HOURS }, (_, i) => 120 + 3 * i);
    const zone = zoneOf(new Float64Array(DAYS * 24));
    const reshaped = reshapeDay(zone, issue, forecast, [right!, wrong!], Float64Array.from([1, 0]));
    expect(reshaped.subarray(0, LAG_HOURS)).toEqual(forecast.subarray(0, LAG_HOURS));
    const day = Array.from({ length: 24 }, (_, k) => LAG_HOURS + k);
    const dayMean = (series: Float64Array) => day.reduce((sum, i) => sum + series[i]!, 0) / 24;
    expect(dayMean(reshaped)).toBeCloseTo(dayMean(forecast), 9);
    for (const i of day) {
      expect(reshaped[i]! - dayMean(forecast)).toBeCloseTo(right![i]! - 150, 9);
    }
    // After the day the forecast returns, from where the reshaped day ended (hand-over.ts).
    const after = LAG_HOURS + 24;
    const offset = reshaped[after - 1]! - forecast[after - 1]!;
    expect(reshaped[after]).toBeCloseTo(forecast[after]! + offset * Math.exp(-1 / 3), 9);
    expect(reshaped[after + 30]).toBeCloseTo(forecast[after + 30]!, 2);
    // A source without weight may lack the day.
    const partial = wrong!.map((value, i) => (i > 10 ? Number.NaN : value));
    const withPartial = reshapeDay(
      zone,
      issue,
      forecast,
      [right!, partial],
      Float64Array.from([1, 0]),
    );
    expect(withPartial).toEqual(reshaped);
  });
});
