import { describe, expect, it } from 'vitest';
import { DAY, H, START } from '../../../test/support/forecast-zones.js';
import { OPERATOR_FORECAST } from './operator-forecast.js';
import { prepareForecast } from './prepare.js';
import { IssuedSeries, regularSeries, type Grid } from './series.js';
import { ZoneState } from './zone-state.js';

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
