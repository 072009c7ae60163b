import { describe, expect, it } from 'vitest';
import { DAY, START, TWELVE_WEEKS, windyZone } from '../../../test/support/forecast-zones.js';
import { backtestZone, issueTimes } from './backtest.js';
import {
  type FallBackReason,
  resumable,
  stateToKeep,
  type ZoneBacktestState,
} from './backtest-state.js';
import type { ForecastModel } from './forecast-model.js';
import { CANDIDATE_MODELS } from './models.js';
import { IssuedSeries } from './series.js';
import { WalkForward } from './walk-forward.js';
import type { ZoneInputs } from './zone-state.js';
import { ZoneState } from './zone-state.js';

/**
 * The paths where two values differ: in anything but a number's last bits (1e-9 relative, or
 * 1e-12 for sums that cancel to nothing).
 */
function sameToRounding(a: unknown, b: unknown, path = ''): string[] {
  if (typeof a === 'number' && typeof b === 'number') {
    const close =
      Object.is(a, b) ||
      Math.abs(a - b) <= Math.max(1e-12, 1e-9 * Math.max(Math.abs(a), Math.abs(b)));
    return close ? [] : [`${path}: ${a} != ${b}`];
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    if (a instanceof Map && b instanceof Map) {
      return [...new Set([...a.keys(), ...b.keys()])].flatMap((key) =>
        sameToRounding(a.get(key), b.get(key), `${path}/${String(key)}`),
      );
    }
    return [...keys].flatMap((key) =>
      sameToRounding(
        (a as Record<string, unknown>)[key],
        (b as Record<string, unknown>)[key],
        `${path}/${key}`,
      ),
    );
  }
  return Object.is(a, b) ? [] : [`${path}: ${String(a)} != ${String(b)}`];
}

describe("the backtest's daily rerun", () => {
  const { weeks, length } = TWELVE_WEEKS;
  const lastIssue = START + (weeks * 7 - 3) * DAY;
  const firstIssue = lastIssue - 24 * DAY;
  const { inputs } = windyZone(150);
  /** The inputs a day earlier: the newest day of values not yet published. */
  const dayEarlier: ZoneInputs = {
    ...inputs,
    actual: {
      ...inputs.actual,
      values: inputs.actual.values.map((value, slot) => (slot >= length - 96 ? Number.NaN : value)),
    },
  };
  /** The candidates, the first counting the issues it forecasts. */
  const counted = () => {
    const count = { issues: 0 };
    const [first, ...rest] = CANDIDATE_MODELS;
    const counting: ForecastModel = {
      ...first!,
      predict: (...args) => {
        count.issues++;
        return first!.predict(...args);
      },
    };
    return { count, candidates: [counting, ...rest] };
  };
  const run = (zoneInputs: ZoneInputs, toTs: number, previous?: ZoneBacktestState) => {
    const { count, candidates } = counted();
    let kept: ZoneBacktestState | undefined;
    const fellBack: (FallBackReason | null)[] = [];
    const result = backtestZone('DE', 'lifecycle', new ZoneState(zoneInputs), {
      issueTimes: issueTimes(firstIssue, toTs),
      candidates,
      // Through a structured clone, as the store's bytes give it back.
      ...(previous && { previous: structuredClone(previous) }),
      keep: (state) => (kept = state),
      onResumption: (reason) => fellBack.push(reason),
    });
    return { result, kept: kept!, forecast: count.issues, fellBack };
  };

  it(
    'forecasts only the new issues, to the same result as a run over every issue',
    { timeout: 600_000 },
    () => {
      const yesterday = run(dayEarlier, lastIssue - DAY);
      const resumed = run(inputs, lastIssue, yesterday.kept);
      const fresh = run(inputs, lastIssue);
      expect(fresh.forecast).toBe(fresh.result.issues);
      expect(resumed.forecast).toBe(4);
      expect([yesterday.fellBack, resumed.fellBack]).toEqual([['no state'], [null]]);
      // The new issues' week has its first departure fits made from scratch here, where a run
      // over every issue updates the week before's sums: the same numbers but for rounding.
      expect(sameToRounding(resumed.result, fresh.result)).toEqual([]);
      // And the state it keeps is the one a run over every issue keeps (the fits' coefficients
      // that no forecast tells apart aside: those the forecasts compared above are made with).
      expect(
        sameToRounding(
          { ...resumed.kept, departureFits: [] },
          { ...fresh.kept, departureFits: [] },
        ),
      ).toEqual([]);
    },
  );

  it(
    'runs from the first issue when a value the state was made from changed',
    { timeout: 600_000 },
    () => {
      const yesterday = run(dayEarlier, lastIssue - DAY);
      const values = Float64Array.from(inputs.actual.values);
      values[length - 30 * 24] = values[length - 30 * 24]! + 1;
      const revised: ZoneInputs = { ...inputs, actual: { ...inputs.actual, values } };
      const resumed = run(revised, lastIssue, yesterday.kept);
      const fresh = run(revised, lastIssue);
      expect(resumed.forecast).toBe(fresh.result.issues);
      expect(resumed.fellBack).toEqual(['values']);
      expect(JSON.stringify(resumed.result)).toBe(JSON.stringify(fresh.result));
      // Nor from a state of other models, nor of another first issue.
      const otherModels = run(inputs, lastIssue, { ...yesterday.kept, models: ['climatology@2'] });
      expect(otherModels.forecast).toBe(fresh.result.issues);
      expect(otherModels.fellBack).toEqual(['models']);
      const laterFirst = run(inputs, lastIssue, {
        ...yesterday.kept,
        firstIssueTs: firstIssue + DAY,
      });
      expect(laterFirst.fellBack).toEqual(['first issue']);
    },
  );

  it('runs from the first issue when an upstream series appeared, even one no issue saw', () => {
    const bare: ZoneInputs = { ...inputs, upstream: {} };
    const asked = {
      zone: 'DE',
      basis: 'lifecycle' as const,
      models: ['climatology@2'],
      issueTimes: issueTimes(firstIssue, lastIssue),
    };
    const made = new ZoneState(bare);
    const kept = stateToKeep(made, asked, new WalkForward(made, [], true).snapshot(), []);
    const resumedOn = (zoneInputs: ZoneInputs) => {
      const outcome = resumable(structuredClone(kept), new ZoneState(zoneInputs), asked);
      return 'fellBack' in outcome ? outcome.fellBack : null;
    };
    expect(resumedOn(bare)).toBeNull();
    // A load forecast issued after the last issue: no issue reads a value of it, but the models
    // read that the series is there (the shares' denominator is the load forecast rather than
    // the generation's; a regression gains a feature), so the stored issues may not stand.
    const late = IssuedSeries.build(
      [{ ts: lastIssue + DAY, issuedAt: lastIssue + DAY / 2, value: 1000 }],
      { startTs: inputs.actual.startTs, step: inputs.actual.step, length },
    );
    expect(resumedOn({ ...bare, upstream: { load: late } })).toBe('values');
  });
});
