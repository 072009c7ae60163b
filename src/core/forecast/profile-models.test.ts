import { describe, expect, it } from 'vitest';
import {
  H,
  historyZone,
  LAST_ISSUE,
  periodic,
  START,
} from '../../../test/support/forecast-zones.js';
import { DAILY_PROFILE, DAILY_WEEKLY } from './profile-models.js';

describe('the profile models', () => {
  it("the daily profile follows the recent days' hour of the day, the newer days weighing more", () => {
    // The daily swing grows from 40 to 160 in the last ten days (spring sun); every weekend is
    // 40 lower, which the hour of the day does not see.
    const { visibleEnd } = LAST_ISSUE;
    const swing = (slot: number) => (slot >= visibleEnd - 10 * 24 ? 160 : 40);
    const value = (slot: number) =>
      300 -
      swing(slot) * Math.sin((2 * Math.PI * slot) / 24) +
      (Math.floor(slot / 24) % 7 >= 5 ? -40 : 0);
    const points = Array.from({ length: visibleEnd }, (_, slot) => ({
      ts: START + slot * H,
      value: value(slot),
    }));
    const zone = historyZone(points, 0);
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
    const forecast = DAILY_PROFILE.predict(zone, LAST_ISSUE, visibleEnd + 24);
    const lowest = forecast.indexOf(Math.min(...forecast));
    expect(Math.abs(((visibleEnd + lowest) % 24) - 6)).toBeLessThanOrEqual(1);
    expect(DAILY_PROFILE.inputsOf(zone)).toEqual(['history']);
  });

  it("the daily-weekly profile adds the day of the week's departure, learned over whole weeks", () => {
    // Weekends 40 lower: each week's departures from its own hour-of-day means hold that
    // difference, which the daily profile (every day alike) cannot.
    const { visibleEnd } = LAST_ISSUE;
    const points = Array.from({ length: visibleEnd }, (_, slot) => ({
      ts: START + slot * H,
      value: periodic(slot),
    }));
    const zone = historyZone(points, 0);
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
    const forecast = DAILY_WEEKLY.predict(zone, LAST_ISSUE, visibleEnd + 72);
    const truth = Array.from({ length: 72 }, (_, i) => periodic(visibleEnd + i));
    const plain = DAILY_PROFILE.predict(zone, LAST_ISSUE, visibleEnd + 72);
    const rmse = (values: Float64Array) =>
      Math.sqrt(values.reduce((sum, value, i) => sum + (value - truth[i]!) ** 2, 0) / 72);
    expect(rmse(forecast)).toBeLessThan(rmse(plain));
  });
});
