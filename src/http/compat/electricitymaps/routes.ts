import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { cloudRegionNear, DATA_CENTRE_RADIUS_KM } from '../../../core/cloud-regions.js';
import {
  emForecast,
  emIntensity,
  emPowerBreakdown,
  type EmIntensity,
  type EmPowerBreakdown,
} from './bodies.js';
import { EM_STEP_SECONDS, hourlyPoints } from '../../../core/hourly.js';
import type { Basis } from '../../../core/factors.js';
import type { PeerMix } from '../../../queries/peer-reads.js';
import { HOUR } from '../../../core/time.js';
import {
  electricityMapsKeyOf,
  electricityMapsZones,
  resolveZone,
} from '../../../core/zone-names.js';
import { findZone, type Zone } from '../../../core/zones.js';
import type { ZoneRegistry } from '../../../core/zone-registry.js';
import { echo, ApiError } from '../../contract/errors.js';
import { logUnhandled } from '../../transport/error-handler.js';
import { CACHE_CONTROL } from '../../contract/headers.js';
import { readParams } from '../../contract/params.js';
import { REQUEST_LIMITS } from '../../contract/request-cost.js';
import { instantOf, type CompatDeps, describeError, rateLimitHook } from '../shared.js';
import { SOURCE_INFO } from '../../../core/sources.js';

/**
 * The Electricity Maps v3 API, as the clients that let users set its base URL call it (evcc's
 * electricitymaps tariff, grid-intensity-go, the Carbon Aware SDK's Electricity Maps data
 * source): docs/compat.md lists the exact requests and the fields each reads. Outside /v1, it
 * follows that API's conventions: its paths, parameters, field names, time format, zone keys and
 * error body `{"error": "..."}`. Any `auth-token` (or `X-BLOBR-KEY`) header is accepted and
 * ignored. Requests count against the same per-IP rate limit as /v1.
 */

export const ELECTRICITY_MAPS_PREFIX = '/compat/electricitymaps/v3';

/** The paths served, as Electricity Maps names them in a zone's `access` list. */
const PATHS = [
  'carbon-intensity/latest',
  'carbon-intensity/history',
  'carbon-intensity/past-range',
  'carbon-intensity/forecast',
  'power-breakdown/latest',
  'power-breakdown/history',
] as const;

/** The longest past-range window: 100 days stays under 5000 half-hours (GB). */
const MAX_PAST_RANGE_DAYS = REQUEST_LIMITS.electricityMapsPastRangeDays;
const FORECAST_HORIZONS = [6, 24, 48, 72];
const DEFAULT_HORIZON_HOURS = 24;

const ZONE_PARAMS = ['zone', 'lat', 'lon', 'emissionFactorType'];

/** An error in this API's format: status and `{"error": message}`. */
const emError = (status: number, message: string, headers: Record<string, string> = {}) =>
  new ApiError('peer', status, message, undefined, headers);

export const ERRORS = {
  noLocation: () => emError(400, 'give zone (e.g. zone=DE or zone=DK-DK1) or both lat and lon'),
  invalid: (param: string, example: string) =>
    emError(400, `invalid ${param}: use e.g. ${param}=${example}`),
  unknownZone: (given: string) =>
    emError(
      404,
      `zone ${echo(given)} is not served here: see ${ELECTRICITY_MAPS_PREFIX}/zones for the zone keys`,
    ),
  notNearDataCentre: (lat: number, lon: number) =>
    emError(
      404,
      `no cloud region of /v1/zones/cloud lies within ${DATA_CENTRE_RADIUS_KM} km of lat=${lat}, lon=${lon}: ` +
        'lat/lon is a data-centre lookup, not a geocoder; pass zone instead (e.g. zone=DE)',
    ),
  noData: (key: string) => emError(404, `no recent data for zone ${key}`),
  noForecast: (key: string) => emError(404, `no forecast available for zone ${key}`),
  windowTooLong: () =>
    emError(400, `start to end spans at most ${MAX_PAST_RANGE_DAYS} days: split the range`),
  windowReversed: () => emError(400, 'start must be before end'),
};

/** A coordinate as clients write it: `52.3667`, or `52,3667` from a culture with a decimal comma. */
export function coordinate(
  text: string | undefined,
  param: 'lat' | 'lon',
  limit: number,
): number | undefined {
  if (text === undefined) return undefined;
  const normalized = text.trim().replace(',', '.');
  const value = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/.test(normalized) ? Number(normalized) : NaN;
  if (!(Math.abs(value) <= limit)) throw ERRORS.invalid(param, param === 'lat' ? '52.37' : '4.90');
  return value;
}

/**
 * The zone of a request among those served: `zone` (keys, our codes, `provider:region`), else
 * `lat` and `lon`.
 */
function zoneOf(params: ReadonlyMap<string, string>, served: ZoneRegistry): Zone {
  const given = params.get('zone')?.trim();
  if (given !== undefined && given !== '') {
    const zone = resolveZone(given, 'em', served);
    if (!zone) throw ERRORS.unknownZone(given);
    return zone;
  }
  const lat = coordinate(params.get('lat'), 'lat', 90);
  const lon = coordinate(params.get('lon'), 'lon', 180);
  if (lat === undefined || lon === undefined) throw ERRORS.noLocation();
  const region = cloudRegionNear(lat, lon);
  if (!region) throw ERRORS.notNearDataCentre(lat, lon);
  return findZone(region.zone)!;
}

/** `emissionFactorType`: lifecycle (Electricity Maps' default) or direct. */
export function basisOf(params: ReadonlyMap<string, string>): Basis {
  const given = params.get('emissionFactorType') ?? 'lifecycle';
  if (given !== 'lifecycle' && given !== 'direct') {
    throw ERRORS.invalid('emissionFactorType', 'lifecycle or emissionFactorType=direct');
  }
  return given;
}

/**
 * `start` or `end`, which are required: absent, blank and unreadable get the same error, with
 * an example of the form rather than the value given (instantOf reads the forms).
 */
function requiredInstant(params: ReadonlyMap<string, string>, param: 'start' | 'end'): number {
  const invalid = () => ERRORS.invalid(param, '2026-11-21T13:00:00Z');
  const seconds = instantOf(params.get(param), invalid);
  if (seconds === undefined) throw invalid();
  return seconds;
}

/** The zone and basis a request names (both checked), with `extra` parameters allowed beside. */
function zoneRequest(request: FastifyRequest, served: ZoneRegistry, extra: readonly string[] = []) {
  const params = readParams(request.url, [...ZONE_PARAMS, ...extra]);
  return { params, zone: zoneOf(params, served), basis: basisOf(params) };
}

/** A zone's stored hourly mix as a power breakdown. */
function breakdownOf(zone: Zone, key: string, point: PeerMix): EmPowerBreakdown {
  return emPowerBreakdown(
    key,
    point.ts,
    point.mix,
    SOURCE_INFO[zone.source].mixUnit,
    EM_STEP_SECONDS,
    point.traced,
  );
}

export function registerElectricityMaps(app: FastifyInstance, deps: CompatDeps): void {
  void app.register(
    async (scope) => {
      const limit = rateLimitHook(deps);
      const now = () => Math.floor(deps.clock() / 1000);
      /** A GET route of this API: left out of the OpenAPI document, cached, rate-limited. */
      const route = (
        path: string,
        cacheControl: string,
        handler: (request: FastifyRequest) => Promise<unknown>,
      ) =>
        scope.get(
          path,
          { schema: { hide: true }, config: { cacheControl, etag: true }, onRequest: limit },
          handler,
        );

      scope.setErrorHandler((error, request, reply) => {
        const described = describeError(error);
        if (described.statusCode >= 500) logUnhandled(request.log, error, request.url);
        return sendEmError(reply, described);
      });
      scope.setNotFoundHandler((request, reply) =>
        sendEmError(reply, emError(404, `not found: ${echo(request.url.split('?')[0] ?? '')}`)),
      );

      route('/zones', CACHE_CONTROL.zones, async () =>
        Object.fromEntries(
          electricityMapsZones(deps.reads.zones).map(({ zone, key }) => [
            key,
            { zoneName: zone.name, access: [...PATHS] },
          ]),
        ),
      );

      route(
        '/carbon-intensity/latest',
        CACHE_CONTROL.latest,
        async (request): Promise<EmIntensity> => {
          const { zone, basis } = zoneRequest(request, deps.reads.zones);
          const reading = await deps.peer.newestHourlyReading(zone, basis);
          const key = electricityMapsKeyOf(zone);
          if (!reading) throw ERRORS.noData(key);
          return emIntensity(key, reading, EM_STEP_SECONDS, basis);
        },
      );

      route('/carbon-intensity/history', CACHE_CONTROL.intensity, async (request) => {
        const { zone, basis } = zoneRequest(request, deps.reads.zones);
        const to = now();
        const readings = await deps.peer.recentHourlyReadings(zone, basis, to);
        const key = electricityMapsKeyOf(zone);
        if (readings.length === 0) throw ERRORS.noData(key);
        return {
          zone: key,
          history: readings.map((reading) => emIntensity(key, reading, EM_STEP_SECONDS, basis)),
        };
      });

      route('/carbon-intensity/past-range', CACHE_CONTROL.intensity, async (request) => {
        const { params, zone, basis } = zoneRequest(request, deps.reads.zones, ['start', 'end']);
        const start = requiredInstant(params, 'start');
        const end = requiredInstant(params, 'end');
        if (start >= end) throw ERRORS.windowReversed();
        if (end - start > MAX_PAST_RANGE_DAYS * 24 * HOUR) throw ERRORS.windowTooLong();
        const readings = await deps.peer.hourlyReadingsIn(zone, start, end, basis);
        const key = electricityMapsKeyOf(zone);
        return {
          zone: key,
          data: readings.map((reading) => emIntensity(key, reading, EM_STEP_SECONDS, basis)),
        };
      });

      route('/carbon-intensity/forecast', CACHE_CONTROL.latest, async (request) => {
        const { params, zone, basis } = zoneRequest(request, deps.reads.zones, ['horizonHours']);
        const horizonText = params.get('horizonHours');
        const horizon = horizonText === undefined ? DEFAULT_HORIZON_HOURS : Number(horizonText);
        if (!FORECAST_HORIZONS.includes(horizon))
          throw ERRORS.invalid('horizonHours', '24 (6, 24, 48 or 72)');
        const key = electricityMapsKeyOf(zone);
        const forecast = deps.forecasts().forecast(zone.code, basis);
        if (!forecast) throw ERRORS.noForecast(key);
        // From the interval in progress to the horizon, as Electricity Maps forecasts.
        // Hourly: a half-hourly forecast as the means of its whole hours.
        const from = now() - (now() % EM_STEP_SECONDS);
        const until = from + horizon * HOUR;
        const all = Array.from(forecast.values, (value, index) => ({
          ts: forecast.startTs + index * forecast.stepSeconds,
          value,
        }));
        const points = hourlyPoints(all, forecast.stepSeconds).filter(
          (point) => point.ts >= from && point.ts < until,
        );
        if (points.length === 0) throw ERRORS.noForecast(key);
        return emForecast(key, points, forecast.generatedAt);
      });

      route(
        '/power-breakdown/latest',
        CACHE_CONTROL.latest,
        async (request): Promise<EmPowerBreakdown> => {
          const { zone } = zoneRequest(request, deps.reads.zones);
          const to = now();
          const mixes = await deps.peer.hourlyMixesIn(zone, to - 7 * 24 * HOUR, to);
          const newest = mixes.at(-1);
          const key = electricityMapsKeyOf(zone);
          if (!newest) throw ERRORS.noData(key);
          return breakdownOf(zone, key, newest);
        },
      );

      route('/power-breakdown/history', CACHE_CONTROL.mix, async (request) => {
        const { zone } = zoneRequest(request, deps.reads.zones);
        const to = now();
        const mixes = await deps.peer.recentHourlyMixes(zone, to);
        const key = electricityMapsKeyOf(zone);
        if (mixes.length === 0) throw ERRORS.noData(key);
        return {
          zone: key,
          history: mixes.map((point) => breakdownOf(zone, key, point)),
        };
      });
    },
    { prefix: ELECTRICITY_MAPS_PREFIX },
  );
}

/** `{"error": "..."}` with the error's status and headers, never cached. */
export function sendEmError(reply: FastifyReply, error: ApiError): FastifyReply {
  reply.header('cache-control', CACHE_CONTROL.error);
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  const message = error.hint === undefined ? error.message : `${error.message}: ${error.hint}`;
  return reply.code(error.statusCode).send({ error: message });
}
