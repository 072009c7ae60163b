import { describe, expect, it } from 'vitest';
import { HOUR } from '../../core/time.js';
import { CONTRACT_REGISTRY, registryOfAll } from '../../core/zone-registry.js';
import { ZONES } from '../../core/zones.js';
import { ApiError } from './errors.js';
import {
  EXPORT_PARAMS,
  FORECAST_PARAMS,
  interpretExport,
  interpretForecast,
  interpretLatest,
  interpretLevel,
  interpretSchedule,
  interpretStream,
  interpretWindow,
  LATEST_PARAMS,
  LEVEL_PARAMS,
  MIX_PARAMS,
  offeredBy,
  readParams,
  SCHEDULE_PARAMS,
  STREAM_PARAMS,
} from './params.js';

const NOW_MS = Date.UTC(2026, 11, 2, 8);
const NOW = NOW_MS / 1000;
/** ZONES=all with two extra nodes recently complete. */
const ALL = offeredBy({ flows: true }, () =>
  registryOfAll(
    new Map([
      ['SK', NOW - HOUR],
      ['US-AECI', NOW - HOUR],
    ]),
    NOW,
  ),
);
const CONTRACT = offeredBy({ flows: true });

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
      refusal(() => interpretLatest(readParams('/?zone=SK', LATEST_PARAMS), CONTRACT)),
    ).toEqual({ status: 404, message: 'unknown or empty zone: SK' });
    expect(
      refusal(() => interpretExport(readParams('/?zones=DE,sk', EXPORT_PARAMS), NOW_MS, CONTRACT)),
    ).toEqual({ status: 404, message: 'unknown or empty zone: sk' });
    const all = interpretExport(readParams('/?zones=all', EXPORT_PARAMS), NOW_MS, CONTRACT);
    expect(all.zones).toBe(ZONES);
  });

  it('with ZONES=all, takes an extra node wherever a zone is taken', () => {
    expect(interpretLatest(readParams('/?zone=%20sk%20', LATEST_PARAMS), ALL).zone?.code).toBe(
      'SK',
    );
    const window = interpretWindow(readParams('/?zone=US-AECI', MIX_PARAMS), NOW_MS, ALL);
    expect(window.zone).toMatchObject({ code: 'US-AECI', source: 'us-agency' });
    expect(interpretForecast(readParams('/?zone=SK', FORECAST_PARAMS), ALL).zone.code).toBe('SK');
    const schedule = interpretSchedule(
      readParams('/?zones=us-aeci,DE', SCHEDULE_PARAMS),
      NOW_MS,
      ALL,
    );
    expect(schedule.zones.map((zone) => zone.code)).toEqual(['US-AECI', 'DE']);
    // Consumption values: an extra node is solved in its graph like a zone.
    expect(
      interpretLatest(readParams('/?zone=SK&accounting=consumption', LATEST_PARAMS), ALL),
    ).toMatchObject({ accounting: 'consumption' });
  });

  it('with ZONES=all, `all` and every list answer the 45, then the extra nodes served', () => {
    const codes = [...ZONES.map((zone) => zone.code), 'SK', 'US-AECI'];
    const exported = interpretExport(readParams('/?zones=all', EXPORT_PARAMS), NOW_MS, ALL);
    expect(exported.zones.map((zone) => zone.code)).toEqual(codes);
    const listed = interpretExport(readParams('/?zones=US-AECI,sk,DE', EXPORT_PARAMS), NOW_MS, ALL);
    expect(listed.zones.map((zone) => zone.code)).toEqual(['DE', 'SK', 'US-AECI']);
    const level = interpretLevel(readParams('/?zones=all', LEVEL_PARAMS), ALL);
    expect(level.zones.map((zone) => zone.code)).toEqual(codes);
    const streamed = interpretStream(readParams('/', STREAM_PARAMS), ALL);
    expect(streamed.zones.map((zone) => zone.code)).toEqual(codes);
    // Consumption of every zone: each that has a series, GB left out as before.
    const traced = interpretExport(
      readParams('/?zones=all&accounting=consumption', EXPORT_PARAMS),
      NOW_MS,
      ALL,
    );
    expect(traced.zones.map((zone) => zone.code)).toEqual(codes.filter((code) => code !== 'GB'));
  });

  it('with ZONES=all, a node without a recent mix is still unknown, with the same error', () => {
    expect(refusal(() => interpretLatest(readParams('/?zone=EE', LATEST_PARAMS), ALL))).toEqual({
      status: 404,
      message: 'unknown or empty zone: EE',
    });
    expect(refusal(() => interpretLatest(readParams('/?zone=TR', LATEST_PARAMS), ALL))).toEqual({
      status: 404,
      message: 'unknown or empty zone: TR',
    });
  });
});
