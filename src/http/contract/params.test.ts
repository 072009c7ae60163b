import { describe, expect, it } from 'vitest';
import { HOUR } from '../../core/time.js';
import { CONTRACT_REGISTRY, registryOfAll } from '../../core/zone-registry.js';
import { ZONES } from '../../core/zones.js';
import { ApiError } from './errors.js';
import * as params from './params.js';

const NOW_MS = Date.UTC(2026, 11, 2, 8);
const NOW = NOW_MS / 1000;
/** ZONES=all with two extra nodes recently complete. */
const ALL = params.offeredBy({ flows: true }, () =>
  registryOfAll(
    new Map([
      ['SK', NOW - HOUR],
      ['US-AECI', NOW - HOUR],
    ]),
    NOW,
  ),
);
const CONTRACT = params.offeredBy({ flows: true });

const refusal = (attempt: () => unknown) => {
  try {
    attempt();
  } catch (error) {
    if (error instanceof ApiError) return { status: error.statusCode, message: error.message };
    throw error;
  }
  return undefined;
};

describe('the interpreter and the zones served (extensions §16)', () => {
  it('by default takes the 45 only: an extra node is the unknown zone it always was', () => {
    expect(CONTRACT.zones).toBe(CONTRACT_REGISTRY);
    expect(
      refusal(() =>
        params.interpretLatest(params.readParams('/?zone=SK', params.LATEST_PARAMS), CONTRACT),
      ),
    ).toEqual({ status: 404, message: 'unknown or empty zone: SK' });
    expect(
      refusal(() =>
        params.interpretExport(
          params.readParams('/?zones=DE,sk', params.EXPORT_PARAMS),
          NOW_MS,
          CONTRACT,
        ),
      ),
    ).toEqual({ status: 404, message: 'unknown or empty zone: sk' });
    const all = params.interpretExport(
      params.readParams('/?zones=all', params.EXPORT_PARAMS),
      NOW_MS,
      CONTRACT,
    );
    expect(all.zones).toBe(ZONES);
  });

  it('with ZONES=all, takes an extra node wherever a zone is taken', () => {
    expect(
      params.interpretLatest(params.readParams('/?zone=%20sk%20', params.LATEST_PARAMS), ALL).zone
        ?.code,
    ).toBe('SK');
    const window = params.interpretWindow(
      params.readParams('/?zone=US-AECI', params.MIX_PARAMS),
      NOW_MS,
      ALL,
    );
    expect(window.zone).toMatchObject({ code: 'US-AECI', source: 'us-agency' });
    expect(
      params.interpretForecast(params.readParams('/?zone=SK', params.FORECAST_PARAMS), ALL).zone
        .code,
    ).toBe('SK');
    const schedule = params.interpretSchedule(
      params.readParams('/?zones=us-aeci,DE', params.SCHEDULE_PARAMS),
      NOW_MS,
      ALL,
    );
    expect(schedule.zones.map((zone) => zone.code)).toEqual(['US-AECI', 'DE']);
    // Consumption values: an extra node is solved in its graph like a zone.
    expect(
      params.interpretLatest(
        params.readParams('/?zone=SK&accounting=consumption', params.LATEST_PARAMS),
        ALL,
      ),
    ).toMatchObject({ accounting: 'consumption' });
  });

  it('with ZONES=all, `all` and every list answer the 45, then the extra nodes served', () => {
    const codes = [...ZONES.map((zone) => zone.code), 'SK', 'US-AECI'];
    const exported = params.interpretExport(
      params.readParams('/?zones=all', params.EXPORT_PARAMS),
      NOW_MS,
      ALL,
    );
    expect(exported.zones.map((zone) => zone.code)).toEqual(codes);
    const listed = params.interpretExport(
      params.readParams('/?zones=US-AECI,sk,DE', params.EXPORT_PARAMS),
      NOW_MS,
      ALL,
    );
    expect(listed.zones.map((zone) => zone.code)).toEqual(['DE', 'SK', 'US-AECI']);
    const level = params.interpretLevel(params.readParams('/?zones=all', params.LEVEL_PARAMS), ALL);
    expect(level.zones.map((zone) => zone.code)).toEqual(codes);
    const streamed = params.interpretStream(params.readParams('/', params.STREAM_PARAMS), ALL);
    expect(streamed.zones.map((zone) => zone.code)).toEqual(codes);
    // Consumption of every zone: each that has a series, GB left out as before.
    const traced = params.interpretExport(
      params.readParams('/?zones=all&accounting=consumption', params.EXPORT_PARAMS),
      NOW_MS,
      ALL,
    );
    expect(traced.zones.map((zone) => zone.code)).toEqual(codes.filter((code) => code !== 'GB'));
  });

  it('with ZONES=all, a node without a recent mix is still unknown, with the same error', () => {
    expect(
      refusal(() =>
        params.interpretLatest(params.readParams('/?zone=EE', params.LATEST_PARAMS), ALL),
      ),
    ).toEqual({
      status: 404,
      message: 'unknown or empty zone: EE',
    });
    expect(
      refusal(() =>
        params.interpretLatest(params.readParams('/?zone=TR', params.LATEST_PARAMS), ALL),
      ),
    ).toEqual({
      status: 404,
      message: 'unknown or empty zone: TR',
    });
  });
});
