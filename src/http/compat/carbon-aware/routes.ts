import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  averageIntensity,
  bestOf,
  type CarbonIntensityDto,
  dotnetTime,
  emissionsData,
  type EmissionsData,
  emissionsForecast,
  type EmissionsForecastDto,
} from './bodies.js';
import { CLOUD_REGIONS } from '../../../core/cloud-regions.js';
import type { Basis } from '../../../core/factors.js';
import type { Reading } from '../../../core/reading.js';
import { HOUR } from '../../../core/time.js';
import { resolveZone } from '../../../core/zone-names.js';
import type { ZoneRegistry } from '../../../core/zone-registry.js';
import type { Zone } from '../../../core/zones.js';
import { echo, ApiError } from '../../contract/errors.js';
import { logUnhandled } from '../../transport/error-handler.js';
import { CACHE_CONTROL } from '../../contract/headers.js';
import { LoopTurns } from '../../../stream/pacing.js';
import { readParams, readRepeatedParam } from '../../contract/params.js';
import { distinct, REQUEST_LIMITS } from '../../contract/request-cost.js';
import { instantOf, type CompatDeps, describeError, rateLimitHook } from '../shared.js';
import { stepOf } from '../../../queries/peer-reads.js';

/**
 * The Green Software Foundation Carbon Aware SDK WebAPI (`/emissions/...`, `/locations`), as
 * its clients call it (the Kubernetes carbon-intensity exporter, Camunda's carbon reductor):
 * docs/compat.md lists the requests and the models. Locations are our zone codes, Electricity
 * Maps keys, cloud regions as `provider:region` and, as the SDK names them, bare cloud region
 * names (`westeurope`). Values are lifecycle intensities (the SDK has no basis parameter), in
 * gCO2eq/kWh. An empty observed result is 204 (forecasts/current never: one entry per location
 * or, for a location without a forecast, a 404), errors are ASP.NET problem details
 * `{type, title, status, detail, errors}`. Counts against the same per-IP rate limit as /v1.
 */

const CARBON_AWARE_PREFIX = '/compat/carbon-aware';

/** The basis every answer of this API is on: comparable across all 45 zones. */
const BASIS: Basis = 'lifecycle';

/** The longest observed window one request may read. */
const MAX_WINDOW_DAYS = REQUEST_LIMITS.carbonAwareWindowDays;
const { carbonAwareLocations: MAX_LOCATIONS, carbonAwareLocationHours: MAX_LOCATION_HOURS } =
  REQUEST_LIMITS;

const VALIDATION_TYPE = 'https://tools.ietf.org/html/rfc7231#section-6.5.1';

/** A problem-details error: `errors` names the parameter, as ASP.NET model validation does. */
class ProblemError extends ApiError {
  constructor(
    status: number,
    readonly title: string,
    detail: string,
    readonly errors: Record<string, string[]> = {},
    /** ASP.NET model validation's failure (the SDK's own title and type): said, not guessed. */
    readonly validation = false,
  ) {
    super('peer', status, detail);
  }
}

const VALIDATION_TITLE = 'One or more validation errors occurred.';

/** ASP.NET model validation's 400, in its own title. */
const validationProblem = (detail: string, errors: Record<string, string[]>): ProblemError =>
  new ProblemError(400, VALIDATION_TITLE, detail, errors, true);

const ERRORS = {
  required: (param: string) =>
    validationProblem(`The ${param} field is required.`, {
      [param]: [`The ${param} field is required.`],
    }),
  invalid: (param: string, given: string) =>
    validationProblem(`The value '${echo(given)}' is not valid for ${param}.`, {
      [param]: [`The value '${echo(given)}' is not valid for ${param}.`],
    }),
  unknownLocation: (given: string) =>
    new ProblemError(
      400,
      'ArgumentException',
      `Unknown location: '${echo(given)}'. Use a zone code or Electricity Maps key (e.g. DE, DK-DK1), ` +
        'or a cloud region (e.g. westeurope, aws:eu-central-1); see /compat/carbon-aware/locations.',
      { location: [`Unknown location: '${echo(given)}'`] },
    ),
  noForecast: (name: string) =>
    new ProblemError(
      404,
      `No forecast for location '${echo(name)}'`,
      `No forecast is available for location '${echo(name)}': forecasts/current answers one ` +
        'entry per location, so a location without a forecast fails the request. Ask without it, ' +
        'or read its observed values from emissions/bylocation.',
      { location: [`No forecast for location '${echo(name)}'`] },
    ),
  toTimeWithoutTime: () =>
    validationProblem(
      'toTime needs time: give time (the start) with toTime, or neither for the newest value.',
      { time: ['The time field is required when toTime is given.'] },
    ),
  reversed: (from: string, to: string) =>
    new ProblemError(400, 'ArgumentException', `${from} must be before ${to}.`),
  tooLong: () =>
    new ProblemError(400, 'ArgumentException', `A request covers at most ${MAX_WINDOW_DAYS} days.`),
  tooManyLocations: (given: number) =>
    new ProblemError(
      400,
      'One or more validation errors occurred.',
      `At most ${MAX_LOCATIONS} distinct locations per request; ${given} were given. ` +
        'Split the request.',
      { location: [`At most ${MAX_LOCATIONS} distinct locations per request.`] },
    ),
  tooMuchData: (locations: number) =>
    new ProblemError(
      400,
      'ArgumentException',
      `A request reads at most ${MAX_LOCATION_HOURS} location-hours (window hours times ` +
        `distinct locations); ${locations} locations cover at most ` +
        `${Math.floor(MAX_LOCATION_HOURS / locations)} hours. Shorten the window or split the request.`,
    ),
};

interface Located {
  /** As the client wrote it: echoed in `location`. */
  readonly name: string;
  readonly zone: Zone;
}

/**
 * `location`, repeated or comma-separated; at least one, each known. A name given again is
 * merged with its first place; at most MAX_LOCATIONS distinct names.
 */
function locationsOf(url: string, served: ZoneRegistry): Located[] {
  const names = distinct(
    readRepeatedParam(url, 'location')
      .flatMap((value) => value.split(','))
      .map((name) => name.trim())
      .filter((name) => name !== ''),
  );
  if (names.length === 0) throw ERRORS.required('location');
  if (names.length > MAX_LOCATIONS) throw ERRORS.tooManyLocations(names.length);
  return names.map((name) => {
    const zone = resolveZone(name, 'ca', served);
    if (!zone) throw ERRORS.unknownLocation(name);
    return { name, zone };
  });
}

/**
 * A .NET DateTimeOffset query value, or a Go time as the Kubernetes exporter writes it; every
 * instant parameter here is optional, so absent or blank is undefined (instantOf).
 */
function optionalInstant(params: ReadonlyMap<string, string>, param: string): number | undefined {
  return instantOf(params.get(param), (raw) => ERRORS.invalid(param, raw));
}

function integerOf(params: ReadonlyMap<string, string>, param: string): number | undefined {
  const raw = params.get(param);
  if (raw === undefined || raw.trim() === '') return undefined;
  if (!/^\d{1,6}$/.test(raw.trim())) throw ERRORS.invalid(param, raw);
  return Number(raw.trim());
}

export function registerCarbonAware(app: FastifyInstance, deps: CompatDeps): void {
  void app.register(
    async (scope) => {
      const limit = rateLimitHook(deps);
      const now = () => Math.floor(deps.clock() / 1000);
      const hidden = { hide: true };
      const options = (cacheControl: string) => ({
        schema: hidden,
        config: { cacheControl, etag: true },
        onRequest: limit,
      });

      scope.setErrorHandler((error, request, reply) => {
        if (describeError(error).statusCode >= 500) logUnhandled(request.log, error, request.url);
        return sendProblem(reply, error);
      });
      scope.setNotFoundHandler((request, reply) =>
        sendProblem(
          reply,
          new ProblemError(404, 'Not Found', `not found: ${echo(request.url.split('?')[0] ?? '')}`),
        ),
      );

      /**
       * Observed data of every location, as the SDK scopes it: `time ?? now` to `toTime ?? time`.
       * With both, the intervals in `[time, toTime)`; with `time` only, the interval covering it;
       * with neither (the SDK's point covering now, which our lagging data does not have yet),
       * the newest published interval of each location. `toTime` alone is a validation error.
       */
      const observed = async (url: string): Promise<EmissionsData[]> => {
        const params = readParams(url, ['time', 'toTime', 'durationMinutes']);
        const locations = locationsOf(url, deps.reads.zones);
        const time = optionalInstant(params, 'time');
        const toTime = optionalInstant(params, 'toTime');
        integerOf(params, 'durationMinutes');
        if (toTime !== undefined && time === undefined) throw ERRORS.toTimeWithoutTime();
        if (time !== undefined && toTime !== undefined) {
          if (time >= toTime) throw ERRORS.reversed('time', 'toTime');
          if (toTime - time > MAX_WINDOW_DAYS * 24 * HOUR) throw ERRORS.tooLong();
          if ((toTime - time) * locations.length > MAX_LOCATION_HOURS * HOUR) {
            throw ERRORS.tooMuchData(locations.length);
          }
        }
        const all: EmissionsData[] = [];
        // Up to tens of thousands of points from memory, which answers at once: a turn of the
        // loop between locations now and then, so that no request holds it for all of them.
        const turns = new LoopTurns();
        for (const { name, zone } of locations) {
          await turns.yieldIfDue();
          const step = stepOf(zone);
          let readings: Reading[];
          if (time === undefined) {
            const newest = await deps.peer.newestReading(zone, BASIS);
            readings = newest ? [newest] : [];
          } else if (toTime === undefined) {
            const start = time - (time % step);
            readings = await deps.peer.readingsIn(zone, start, start + 1, BASIS);
          } else {
            readings = await deps.peer.readingsIn(zone, time, toTime, BASIS);
          }
          for (const reading of readings) all.push(emissionsData(name, reading, step));
        }
        return all;
      };
      const sendList = <T>(reply: FastifyReply, list: T[]) =>
        list.length === 0 ? reply.code(204).send() : list;

      scope.get(
        '/emissions/bylocations',
        options(CACHE_CONTROL.intensity),
        async (request, reply) => sendList(reply, await observed(request.url)),
      );
      scope.get('/emissions/bylocation', options(CACHE_CONTROL.intensity), async (request, reply) =>
        sendList(reply, await observed(request.url)),
      );
      scope.get(
        '/emissions/bylocations/best',
        options(CACHE_CONTROL.intensity),
        async (request, reply) => sendList(reply, bestOf(await observed(request.url))),
      );

      scope.get('/emissions/forecasts/current', options(CACHE_CONTROL.latest), async (request) => {
        const params = readParams(request.url, ['dataStartAt', 'dataEndAt', 'windowSize']);
        const locations = locationsOf(request.url, deps.reads.zones);
        const dataStartAt = optionalInstant(params, 'dataStartAt');
        const dataEndAt = optionalInstant(params, 'dataEndAt');
        const windowSize = integerOf(params, 'windowSize');
        if (dataStartAt !== undefined && dataEndAt !== undefined && dataStartAt >= dataEndAt) {
          throw ERRORS.reversed('dataStartAt', 'dataEndAt');
        }
        const requestedAt = now();
        const results: EmissionsForecastDto[] = [];
        for (const { name, zone } of locations) {
          const forecast = deps.forecasts().forecast(zone.code, BASIS);
          // The SDK answers one entry per location, always (clients read element [0]).
          if (!forecast) throw ERRORS.noForecast(name);
          const step = forecast.stepSeconds;
          // Default scope: from the interval in progress to the end of the forecast.
          results.push(
            emissionsForecast({
              location: name,
              startTs: forecast.startTs,
              stepSeconds: step,
              values: forecast.values,
              generatedAt: forecast.generatedAt,
              requestedAt,
              dataStartAt: dataStartAt ?? requestedAt - (requestedAt % step),
              dataEndAt: dataEndAt ?? forecast.startTs + forecast.values.length * step,
              windowSize,
            }),
          );
        }
        return results;
      });

      scope.get(
        '/emissions/average-carbon-intensity',
        options(CACHE_CONTROL.intensity),
        async (request, reply) => {
          const params = readParams(request.url, ['location', 'startTime', 'endTime']);
          const given = params.get('location')?.trim();
          if (given === undefined || given === '') throw ERRORS.required('location');
          const start = optionalInstant(params, 'startTime');
          if (start === undefined) throw ERRORS.required('startTime');
          const end = optionalInstant(params, 'endTime');
          if (end === undefined) throw ERRORS.required('endTime');
          const zone = resolveZone(given, 'ca', deps.reads.zones);
          if (!zone) throw ERRORS.unknownLocation(given);
          if (start >= end) throw ERRORS.reversed('startTime', 'endTime');
          if (end - start > MAX_WINDOW_DAYS * 24 * HOUR) throw ERRORS.tooLong();
          const step = stepOf(zone);
          // The interval in progress at `start` counts for the part of it inside the window.
          const readings = await deps.peer.readingsIn(zone, start - (start % step), end, BASIS);
          const average = averageIntensity(readings, step, start, end);
          if (average === undefined) return reply.code(204).send();
          const body: CarbonIntensityDto = {
            location: given,
            startTime: dotnetTime(start),
            endTime: dotnetTime(end),
            carbonIntensity: average,
          };
          return body;
        },
      );

      scope.get('/locations', options(CACHE_CONTROL.zones), async () =>
        locationsBody(deps.reads.zones),
      );
    },
    { prefix: CARBON_AWARE_PREFIX },
  );
}

type LocationsBody = Record<
  string,
  { latitude: number | null; longitude: number | null; name: string }
>;

/** The cloud regions of `/locations`, by name: the same whatever zones are served. */
const CLOUD_LOCATIONS: LocationsBody = (() => {
  const names = new Map<string, number>();
  for (const region of CLOUD_REGIONS) names.set(region.region, (names.get(region.region) ?? 0) + 1);
  const entries: [string, LocationsBody[string]][] = [];
  for (const region of CLOUD_REGIONS) {
    const name =
      names.get(region.region) === 1 ? region.region : `${region.provider}:${region.region}`;
    entries.push([name, { latitude: region.lat, longitude: region.lon, name }]);
  }
  return Object.fromEntries(entries);
})();

/** The `/locations` body of the zones served, made once per registry. */
const locationsBodies = new WeakMap<ZoneRegistry, LocationsBody>();

/**
 * `/locations`: the SDK's dictionary of named locations. Cloud regions by their bare name (or
 * `provider:region` where two providers share it) with their point, and the codes of the zones
 * served (with `ZONES=all`, the flow graphs' nodes too) without coordinates.
 */
function locationsBody(served: ZoneRegistry): LocationsBody {
  let body = locationsBodies.get(served);
  if (!body) {
    body = { ...CLOUD_LOCATIONS };
    for (const zone of served.zones) {
      body[zone.code] = { latitude: null, longitude: null, name: zone.code };
    }
    locationsBodies.set(served, body);
  }
  return body;
}

/** An ASP.NET problem-details body with the error's status and headers, never cached. */
function sendProblem(reply: FastifyReply, raised: unknown): FastifyReply {
  const error = describeError(raised);
  reply.header('cache-control', CACHE_CONTROL.error);
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  const problem =
    raised instanceof ProblemError
      ? raised
      : new ProblemError(error.statusCode, titleOf(error.statusCode), detailOf(error));
  return reply.code(problem.statusCode).send({
    ...(problem.validation && { type: VALIDATION_TYPE }),
    title: problem.title,
    status: problem.statusCode,
    detail: problem.message,
    errors: problem.errors,
  });
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};
const titleOf = (status: number) => TITLES[status] ?? 'Error';
const detailOf = (error: ApiError) =>
  error.hint === undefined ? error.message : `${error.message}: ${error.hint}`;
