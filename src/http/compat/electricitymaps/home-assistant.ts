import type { FastifyInstance } from 'fastify';
import { emIntensity, emPowerBreakdown } from './bodies.js';
import { EM_STEP_SECONDS } from '../../../core/hourly.js';
import type { Basis } from '../../../core/factors.js';
import type { Reading } from '../../../core/reading.js';
import type { PeerMix } from '../../../queries/peer-reads.js';
import { electricityMapsKeyOf, resolveZone } from '../../../core/zone-names.js';
import type { ZoneRegistry } from '../../../core/zone-registry.js';
import type { Zone } from '../../../core/zones.js';
import { CACHE_CONTROL } from '../../contract/headers.js';
import { readParams } from '../../contract/params.js';
import {
  basisOf,
  coordinate,
  ELECTRICITY_MAPS_PREFIX,
  ERRORS as EM_ERRORS,
  sendEmError,
} from './routes.js';
import { type CompatDeps, describeError, rateLimitHook } from '../shared.js';
import { zoneAtHome } from './home-location.js';
import { SOURCE_INFO } from '../../../core/sources.js';
import { UNIT } from '../../../core/units.js';

/**
 * `GET /compat/electricitymaps/v3/home-assistant`: the endpoint Home Assistant's Electricity
 * Maps integration (`co2signal`) reads through aioelectricitymaps'
 * `carbon_intensity_for_home_assistant`, with `zone` (the country code a user typed) or `lat`
 * and `lon` (the home's location), and an `auth-token` header that is accepted and ignored, as
 * on every route of the shim. docs/compat.md cites both sources and the shape they read.
 *
 * A location without data, a zone we do not serve included, is the peer's 200 with
 * `status: "no-data"` (aioelectricitymaps raises its NoDataError on it, and Home Assistant tells
 * the user "no data for the selected location"); a malformed request is the shim's
 * `{"error": ...}` 400.
 */

const PARAMS = ['zone', 'lat', 'lon', 'emissionFactorType'];
const UNITS = { carbonIntensity: UNIT } as const;

interface HomeAssistantBody {
  readonly status: 'ok' | 'no-data';
  readonly countryCode: string;
  readonly data:
    | {
        readonly datetime: string;
        readonly carbonIntensity: number;
        readonly fossilFuelPercentage: number | null;
      }
    | Record<string, never>;
  readonly units: typeof UNITS;
}

/**
 * The newest hour of a zone as Home Assistant reads it: the intensity as the shim's
 * carbon-intensity/latest gives it, and the fossil share as 100 minus its power breakdown's
 * fossil-free percentage of the same hour (null when that hour has no mix).
 */
function homeAssistantBody(
  key: string,
  reading: Reading,
  basis: Basis,
  mix: (PeerMix & { unit: 'MWh' | '%' }) | undefined,
): HomeAssistantBody {
  const intensity = emIntensity(key, reading, EM_STEP_SECONDS, basis);
  const fossilFree = mix
    ? emPowerBreakdown(key, reading.ts, mix.mix, mix.unit, EM_STEP_SECONDS, mix.traced)
        .fossilFreePercentage
    : null;
  return {
    status: 'ok',
    countryCode: key,
    data: {
      datetime: intensity.datetime,
      carbonIntensity: intensity.carbonIntensity,
      fossilFuelPercentage: fossilFree === null ? null : 100 - fossilFree,
    },
    units: UNITS,
  };
}

const noData = (countryCode: string): HomeAssistantBody => ({
  status: 'no-data',
  countryCode,
  data: {},
  units: UNITS,
});

/** The zone asked for, and the code to answer with when it has no data. */
async function locate(
  params: ReadonlyMap<string, string>,
  served: ZoneRegistry,
): Promise<{ zone?: Zone; asked: string }> {
  const given = params.get('zone')?.trim();
  if (given !== undefined && given !== '') {
    const zone = resolveZone(given, 'em', served);
    return zone ? { zone, asked: electricityMapsKeyOf(zone) } : { asked: given };
  }
  const lat = coordinate(params.get('lat'), 'lat', 90);
  const lon = coordinate(params.get('lon'), 'lon', 180);
  if (lat === undefined || lon === undefined) throw EM_ERRORS.noLocation();
  const zone = await zoneAtHome(lat, lon, served);
  return zone ? { zone, asked: electricityMapsKeyOf(zone) } : { asked: '' };
}

export function registerHomeAssistant(app: FastifyInstance, deps: CompatDeps): void {
  void app.register(
    async (scope) => {
      scope.setErrorHandler((error, _request, reply) => sendEmError(reply, describeError(error)));
      scope.get(
        '/home-assistant',
        {
          schema: { hide: true },
          config: { cacheControl: CACHE_CONTROL.latest, etag: true },
          onRequest: rateLimitHook(deps),
        },
        async (request): Promise<HomeAssistantBody> => {
          const params = readParams(request.url, PARAMS);
          const { zone, asked } = await locate(params, deps.reads.zones);
          const basis = basisOf(params);
          if (!zone) return noData(asked);
          const reading = await deps.peer.newestHourlyReading(zone, basis);
          if (!reading) return noData(asked);
          const mixes = await deps.peer.hourlyMixesIn(
            zone,
            reading.ts,
            reading.ts + EM_STEP_SECONDS,
          );
          const mix = mixes[0] && { unit: SOURCE_INFO[zone.source].mixUnit, ...mixes[0] };
          return homeAssistantBody(asked, reading, basis, mix);
        },
      );
    },
    { prefix: ELECTRICITY_MAPS_PREFIX },
  );
}
