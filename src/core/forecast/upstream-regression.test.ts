import { describe, expect, it } from 'vitest';
import { LAST_ISSUE, TWELVE_WEEKS, windyZone } from '../../../test/support/forecast-zones.js';
import { CLIMATOLOGY } from './profile-models.js';
import { UPSTREAM_REGRESSION } from './upstream-regression.js';
import { ZoneState } from './zone-state.js';

describe('the upstream regression', () => {
  const { length } = TWELVE_WEEKS;

  it('the regression learns intensity from the forecast wind share and beats the climatology', () => {
    const { inputs, truth } = windyZone(100);
    const zone = new ZoneState(inputs);
    const { visibleEnd } = LAST_ISSUE;
    const regression = UPSTREAM_REGRESSION.predict(zone, LAST_ISSUE, length);
    const climatology = CLIMATOLOGY.predict(zone, LAST_ISSUE, length);
    const rmse = (forecast: Float64Array, from: number, to: number) => {
      let sum = 0;
      for (let i = from; i < to; i++) sum += (forecast[i]! - truth[visibleEnd + i]!) ** 2;
      return Math.sqrt(sum / (to - from));
    };
    // The day-ahead forecast reaches the end of the next day (24 h here); beyond it the fit on
    // the zone's own features serves, handed over without a jump.
    expect(regression.every(Number.isFinite)).toBe(true);
    expect(rmse(regression, 0, 24)).toBeLessThan(0.75 * rmse(climatology, 0, 24));
    expect(UPSTREAM_REGRESSION.inputsOf(zone)).toEqual(['history', 'wind', 'load']);
  });
});
