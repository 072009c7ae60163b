import { describe, expect, it } from 'vitest';
import { DAY, H, historyZone, START, sundayDips } from '../../../test/support/forecast-zones.js';
import { CarriedFits, DEPARTURE_FOUR_WEEKS, DEPARTURE_REGRESSION } from './departure-regression.js';
import { CLIMATOLOGY, DAILY_PROFILE, DAILY_WEEKLY } from './profile-models.js';
import { regularSeries } from './series.js';
import { ZoneState } from './zone-state.js';

describe('the departure regressions', () => {
  it('the departure regressions learn from a year what the daily base misses', () => {
    const days = 420;
    const points = sundayDips(days);
    const zone = historyZone(points, 3 * H, { startTs: START, step: H, length: days * 24 });
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
});
