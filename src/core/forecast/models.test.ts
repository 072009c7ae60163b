import { describe, expect, it } from 'vitest';
import {
  DAY,
  H,
  historyZone,
  LAST_ISSUE,
  periodic,
  START,
  TWELVE_WEEKS,
  windyZone,
} from '../../../test/support/forecast-zones.js';
import { PERSISTENCE, WEEKLY_PROFILE } from './baselines.js';
import { DEPARTURE_FOUR_WEEKS, DEPARTURE_REGRESSION } from './departure-regression.js';
import { CLIMATOLOGY, DAILY_PROFILE, DAILY_WEEKLY } from './profile-models.js';
import { DAILY_UPSTREAM, DEPARTURE_UPSTREAM } from './upstream-corrected.js';
import { UPSTREAM_REGRESSION } from './upstream-regression.js';
import { type ZoneInputs, ZoneState } from './zone-state.js';

describe('the models', () => {
  const { length } = TWELVE_WEEKS;

  it('climatology reproduces an exactly weekly series and persistence holds the newest value', () => {
    const points = Array.from({ length: length - 72 }, (_, slot) => ({
      ts: START + slot * H,
      value: periodic(slot),
    }));
    const zone = historyZone(points, 3 * H);
    const issue = LAST_ISSUE;
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
});
