import { describe, expect, it } from 'vitest';
import { DAY, LAST_ISSUE, TWELVE_WEEKS, windyZone } from '../../../test/support/forecast-zones.js';
import { spearman } from './walk-forward.js';
import { DEPARTURE_REGRESSION } from './departure-regression.js';
import { DAILY_PROFILE } from './profile-models.js';
import { DAILY_UPSTREAM, DEPARTURE_UPSTREAM } from './upstream-corrected.js';
import { ZoneState } from './zone-state.js';

describe('the models corrected by upstream forecasts', () => {
  const { length } = TWELVE_WEEKS;
  // One windy zone for both models: its inputs are only read.
  const { inputs, truth } = windyZone(100);

  it('the daily profile corrected by the wind forecast orders the next day by the wind', () => {
    const zone = new ZoneState(inputs);
    const { visibleEnd } = LAST_ISSUE;
    const corrected = DAILY_UPSTREAM.predict(zone, LAST_ISSUE, length);
    const daily = DAILY_PROFILE.predict(zone, LAST_ISSUE, length);
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
    const zone = new ZoneState(inputs);
    // Over the next 24 hours of ten daily issues: what the wind forecast explains is removed.
    const squared = new Map([DEPARTURE_UPSTREAM, DEPARTURE_REGRESSION].map(({ id }) => [id, 0]));
    for (let day = 10; day > 0; day--) {
      const issueTs = LAST_ISSUE.issueTs - day * DAY;
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
    const { visibleEnd } = LAST_ISSUE;
    const corrected = DEPARTURE_UPSTREAM.predict(zone, LAST_ISSUE, length);
    const plain = DEPARTURE_REGRESSION.predict(zone, LAST_ISSUE, length);
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
});
