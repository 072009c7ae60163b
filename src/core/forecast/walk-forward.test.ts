import { describe, expect, it } from 'vitest';
import { DAY, START, TWELVE_WEEKS, windyZone } from '../../../test/support/forecast-zones.js';
import { PERSISTENCE } from './baselines.js';
import { backtestZone, issueTimes } from './backtest.js';
import { CLIMATOLOGY, DAILY_PROFILE } from './profile-models.js';
import { type IssueForecasts, SERVED, WalkForward } from './walk-forward.js';
import { ZoneState } from './zone-state.js';

describe('the walk-forward', () => {
  it('resumed from its stored state gives the very numbers of one run over every issue', () => {
    const lastIssue = START + (TWELVE_WEEKS.weeks * 7 - 3) * DAY;
    const state = new ZoneState(windyZone(150).inputs);
    const candidates = [CLIMATOLOGY, DAILY_PROFILE, PERSISTENCE];
    let issues: readonly IssueForecasts[] = [];
    backtestZone('DE', 'lifecycle', state, {
      issueTimes: issueTimes(lastIssue - 60 * DAY, lastIssue),
      candidates,
      onIssues: (all) => (issues = all),
    });
    // Each walk sets its own served forecast on the issues it adds.
    const fresh = (issue: IssueForecasts): IssueForecasts => ({
      ...issue,
      values: new Map([...issue.values].filter(([id]) => id !== SERVED)),
    });
    const ids = candidates.map(({ id }) => id);
    const whole = new WalkForward(state, ids, true);
    for (const issue of issues) whole.add(fresh(issue));
    // Cut where the day shapes, the band's pools and the weights' errors all hold some.
    const cut = issues.length - 12;
    const before = new WalkForward(state, ids, true);
    for (const issue of issues.slice(0, cut)) before.add(fresh(issue));
    // Through a structured clone, as the store's bytes give it back.
    const resumed = new WalkForward(state, ids, true, structuredClone(before.snapshot()));
    for (const issue of issues.slice(cut)) resumed.add(fresh(issue));
    const result = resumed.finish();
    expect(result.nextDayShape).not.toBeNull();
    expect(result.band.q10.some((edge) => !Number.isNaN(edge))).toBe(true);
    expect(result).toEqual(whole.finish());
  });
});
