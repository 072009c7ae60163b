import { ACCEPTED_EXAMPLE } from '../../core/time.js';
import { FORECAST_HORIZON, limitText, SCHEDULE_LIMITS } from './limits.js';

/**
 * The closed set of errors the API answers, whoever detects them (the query interpreter, the
 * routes, the fast path, the connection guard or Node's HTTP parser). Each message and hint has
 * exactly one spelling here.
 */

/**
 * An error the API answers with its own status and the contract's `{error, hint}` body.
 * `message` and `hint` are shown to clients: never a stack, SQL or a server path. `code` says
 * which error it is, in words that never change: for the compatibility shims, the metrics and
 * the logs, which must not match message text. It is not part of the /v1 body.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    /** The name of one of API_ERRORS; `peer` for an error in a compatibility API's own words. */
    readonly code: ApiErrorCode,
    readonly statusCode: number,
    message: string,
    readonly hint?: string,
    /** Extra response headers, e.g. retry-after on 503. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

const ALLOW = 'GET, HEAD, OPTIONS';
const CONSUMPTION_ENDPOINTS =
  '/v1/intensity/latest, /v1/intensity, /v1/mix, /v1/export, /v1/intensity/stats and ' +
  '/v1/intensity/level';
const MAX_ECHO = 200;

/** Client input echoed in a message, cut so a huge value cannot make a huge error body. */
export const echo = (text: string): string =>
  text.length > MAX_ECHO ? `${text.slice(0, MAX_ECHO)}...` : text;

const PARAM_HINTS: Readonly<Record<string, string>> = {
  zone: 'give zone once, as a code from /v1/zones, e.g. zone=DE',
  from: 'give from once, e.g. from=2026-11-21T13:00:00Z',
  to: 'give to once, e.g. to=2026-11-21T13:00:00Z',
  basis: 'give basis once: basis=lifecycle or basis=direct',
  accounting: 'give accounting once: accounting=production or accounting=consumption',
  zones: 'give zones once, as comma-separated codes from /v1/zones or all, e.g. zones=DE,FR',
  format: 'give format once: format=csv or format=ndjson',
  include: 'give include once: include=mix',
  duration_minutes: 'give duration_minutes once, e.g. duration_minutes=90',
  earliest: 'give earliest once, e.g. earliest=2026-11-21T13:00:00Z',
  deadline: 'give deadline once, e.g. deadline=2026-11-22T13:00:00Z',
  interruptible: 'give interruptible once: interruptible=true or interruptible=false',
  estimator: 'give estimator once: estimator=expected or estimator=p90',
  energy_kwh: 'give energy_kwh once, e.g. energy_kwh=12.5',
  horizon_hours: 'give horizon_hours once, e.g. horizon_hours=24',
};
const hintFor = (param: string) => PARAM_HINTS[param] ?? `give ${param} once`;

const ERROR_FACTORIES = {
  missingParam: (param: string) =>
    new ApiError('missingParam', 400, `missing required param: ${param}`, hintFor(param)),
  /** Given more than once, or not a single value. */
  repeatedParam: (param: string) =>
    new ApiError('repeatedParam', 400, `invalid param: ${param}`, hintFor(param)),
  invalidInstant: (param: 'from' | 'to' | 'earliest' | 'deadline') =>
    new ApiError(
      'invalidInstant',
      400,
      `invalid param: ${param}`,
      `use ISO 8601 UTC, e.g. ${param}=${ACCEPTED_EXAMPLE}`,
    ),
  invalidBasis: () =>
    new ApiError(
      'invalidBasis',
      400,
      'invalid param: basis',
      'use basis=lifecycle or basis=direct, or leave it out',
    ),
  invalidAccounting: () =>
    new ApiError(
      'invalidAccounting',
      400,
      'invalid param: accounting',
      'use accounting=production or accounting=consumption, or leave it out (production)',
    ),
  /** `accounting=consumption` where no consumption series exists (extensions §15). */
  unsupportedAccounting: () =>
    new ApiError(
      'unsupportedAccounting',
      400,
      'unsupported param: accounting',
      `accounting=consumption is served by ${CONSUMPTION_ENDPOINTS}; forecasts, schedules, ` +
        'streams and webhooks are of production values: leave accounting out',
    ),
  /** `accounting=consumption` on a server that ingests no border flows (FLOWS=off, §16). */
  consumptionOff: () =>
    new ApiError(
      'consumptionOff',
      400,
      'unsupported param: accounting',
      'this server runs with FLOWS=off: it ingests no border flows, so it has no consumption ' +
        'values; leave accounting out, or ask its operator to set FLOWS=on',
    ),
  /** GB: its operator publishes shares, not quantities, so it is never traced (§15). */
  noConsumptionSeries: (zone: string) =>
    new ApiError(
      'noConsumptionSeries',
      404,
      `no consumption series for zone: ${zone}`,
      `${zone}'s operator publishes generation shares, not quantities, so its flows cannot be ` +
        'traced; leave accounting out for its production value',
    ),
  invalidWindow: () =>
    new ApiError(
      'invalidWindow',
      400,
      'invalid window: from must be before to',
      'give from earlier than to',
    ),
  /** A zone list with an empty element, or `all` beside codes. */
  invalidZones: () =>
    new ApiError(
      'invalidZones',
      400,
      'invalid param: zones',
      'use comma-separated codes from /v1/zones, or all, e.g. zones=DE,FR',
    ),
  invalidFormat: () =>
    new ApiError(
      'invalidFormat',
      400,
      'invalid param: format',
      'use format=csv or format=ndjson, or leave it out',
    ),
  invalidInclude: () =>
    new ApiError(
      'invalidInclude',
      400,
      'invalid param: include',
      'use include=mix, or leave it out',
    ),
  exportWindowTooLong: (maxDays: number) =>
    new ApiError(
      'exportWindowTooLong',
      400,
      `invalid window: an export covers at most ${maxDays} days`,
      `split it into requests of at most ${maxDays} days, e.g. one per year`,
    ),
  invalidDuration: (max: number) =>
    new ApiError(
      'invalidDuration',
      400,
      'invalid param: duration_minutes',
      `use a whole number of minutes from 1 to ${max}, e.g. duration_minutes=90`,
    ),
  invalidInterruptible: () =>
    new ApiError(
      'invalidInterruptible',
      400,
      'invalid param: interruptible',
      'use interruptible=true or interruptible=false, or leave it out',
    ),
  invalidEstimator: () =>
    new ApiError(
      'invalidEstimator',
      400,
      'invalid param: estimator',
      'use estimator=expected or estimator=p90, or leave it out',
    ),
  invalidHorizon: (max: number) =>
    new ApiError(
      'invalidHorizon',
      400,
      'invalid param: horizon_hours',
      `use a whole number of hours from 1 to ${max}, e.g. horizon_hours=24, or leave it out (${FORECAST_HORIZON.default})`,
    ),
  /** `/v1/intensity/level`: zone and zones together. */
  zoneOrZones: () =>
    new ApiError(
      'zoneOrZones',
      400,
      'invalid param: zones',
      'give zone (one code) or zones (comma-separated codes or all), not both',
    ),
  invalidLevelHorizon: (max: number, fallback: number) =>
    new ApiError(
      'invalidLevelHorizon',
      400,
      'invalid param: horizon_hours',
      `use a whole number of hours from 0 to ${max}, e.g. horizon_hours=24, or leave it out (${fallback})`,
    ),
  statsWindowTooLong: (maxDays: number) =>
    new ApiError(
      'statsWindowTooLong',
      400,
      `invalid window: at most ${maxDays} days`,
      `give from and to at most ${maxDays} days apart, or split the window`,
    ),
  invalidEnergy: () =>
    new ApiError(
      'invalidEnergy',
      400,
      'invalid param: energy_kwh',
      `use a decimal number of kWh above 0 and at most ${limitText(SCHEDULE_LIMITS.maxEnergyKwh)}, e.g. energy_kwh=12.5, or leave it out`,
    ),
  deadlineTooLate: (maxHours: number) =>
    new ApiError(
      'deadlineTooLate',
      400,
      `invalid window: deadline is more than ${maxHours} hours after now`,
      `give a deadline at most ${maxHours} hours after the request time: forecasts reach no further`,
    ),
  scheduleWindowTooLong: (maxHours: number) =>
    new ApiError(
      'scheduleWindowTooLong',
      400,
      `invalid window: a schedule covers at most ${maxHours} hours`,
      `give earliest and deadline at most ${maxHours} hours apart`,
    ),
  /** Also when no listed zone's grid has room for the job in whole intervals. */
  jobDoesNotFit: () =>
    new ApiError(
      'jobDoesNotFit',
      400,
      'invalid window: the job does not fit between earliest and deadline',
      'give a later deadline, an earlier earliest or a shorter duration_minutes; the job runs ' +
        'in whole intervals of each zone (hours, half hours for GB)',
    ),
  /** A schedule whose listed zones all have room for the job but no values to place it on. */
  noSchedule: () =>
    new ApiError(
      'noSchedule',
      404,
      'no schedule: no zone asked has values for the whole job between earliest and deadline',
      'a zone needs a forecast (or published values, for past hours) over the window; ' +
        'try other zones or another window, or retry later',
    ),
  invalidLastEventId: () =>
    new ApiError(
      'invalidLastEventId',
      400,
      'invalid header: Last-Event-ID',
      'send back the id of the last event received (a whole number), or no Last-Event-ID',
    ),
  /** A subscription body that cannot be read (extensions §13); the hint names the member. */
  invalidSubscription: (hint: string) =>
    new ApiError('invalidSubscription', 400, 'invalid subscription', hint),
  /** A callback URL refused by the target rules; the message names the rule. */
  urlRefused: (rule: string, hint: string) =>
    new ApiError('urlRefused', 400, `invalid subscription: ${rule}`, hint),
  /** Unknown id, or a wrong or missing secret: the same answer, so ids cannot be probed. */
  unknownSubscription: () =>
    new ApiError(
      'unknownSubscription',
      404,
      'unknown subscription',
      'give the id returned at creation and Authorization: Bearer <its secret>',
    ),
  tooManySubscriptions: (max: number) =>
    new ApiError(
      'tooManySubscriptions',
      429,
      'too many subscriptions',
      `at most ${max} subscriptions per IP; delete one first`,
      {
        'retry-after': '60',
      },
    ),
  tooManySubscriptionsFromNetwork: (max: number) =>
    new ApiError(
      'tooManySubscriptionsFromNetwork',
      429,
      'too many subscriptions from this network',
      `at most ${max} subscriptions per network (IPv4 /24, IPv6 /64); delete one first`,
      { 'retry-after': '60' },
    ),
  subscriptionsFull: () =>
    new ApiError(
      'subscriptionsFull',
      429,
      'too many subscriptions on this server',
      'retry later, or ask its operator',
      {
        'retry-after': '3600',
      },
    ),
  unknownZone: (given: string) =>
    new ApiError(
      'unknownZone',
      404,
      `unknown or empty zone: ${given}`,
      'see /v1/zones for the zone codes',
    ),
  /** `provider:region` that is not a region of the table (or not in one of the 45 zones). */
  unknownCloudRegion: (given: string) =>
    new ApiError(
      'unknownCloudRegion',
      404,
      `unknown cloud region: ${echo(given)}`,
      'see /v1/zones/cloud for the cloud regions located in the 45 zones, e.g. zone=aws:eu-central-1',
    ),
  notFound: (path: string) =>
    new ApiError('notFound', 404, `not found: ${echo(path)}`, 'see /v1 for the endpoints'),
  /** DASHBOARD=on, but the page was never built (a checkout run without `npm run build`). */
  dashboardNotBuilt: () =>
    new ApiError(
      'dashboardNotBuilt',
      404,
      'not found: /',
      'the dashboard is not built on this server (run npm run build); the API is at /v1',
    ),
  /** A served path with another method; `allow`: that path's methods (/v1's by default). */
  methodNotAllowed: (method: string, allow = ALLOW) =>
    new ApiError(
      'methodNotAllowed',
      405,
      `method not allowed: ${echo(method)}`,
      `use one of ${allow}`,
      { allow },
    ),
  rateLimited: (limit: number, resetSeconds: number) =>
    new ApiError(
      'rateLimited',
      429,
      'rate limit exceeded',
      `at most ${limit} requests per minute per IP; wait the seconds in retry-after`,
      { 'retry-after': String(resetSeconds) },
    ),
  tooManyExports: (max: number) =>
    new ApiError(
      'tooManyExports',
      429,
      'too many exports under way',
      `at most ${max} exports at a time per IP; retry when one has finished`,
      { 'retry-after': '5' },
    ),
  tooManyStreams: (max: number) =>
    new ApiError(
      'tooManyStreams',
      429,
      'too many open streams',
      `at most ${max} open streams per IP; close one, or ask for several zones on one stream`,
      { 'retry-after': '5' },
    ),
  tooManyStreamsFromNetwork: (max: number) =>
    new ApiError(
      'tooManyStreamsFromNetwork',
      429,
      'too many open streams from this network',
      `at most ${max} open streams per network (IPv4 /24, IPv6 /64); close one`,
      { 'retry-after': '5' },
    ),
  metricsUnauthorized: () =>
    new ApiError(
      'metricsUnauthorized',
      401,
      'metrics need a token',
      'send Authorization: Bearer <METRICS_TOKEN>, or scrape the METRICS_ADDR listener',
      { 'www-authenticate': 'Bearer' },
    ),
  /**
   * The server-wide caps on open streams and exports, which protect every client; a place comes
   * back within `retryAfterSeconds` at the latest when its holder stopped reading.
   */
  serverBusy: (what: 'streams' | 'exports', retryAfterSeconds = 30) =>
    new ApiError(
      'serverBusy',
      503,
      `too many ${what} on this server`,
      'retry after the seconds in retry-after, or on another instance',
      { 'retry-after': String(retryAfterSeconds) },
    ),
  storeUnavailable: () =>
    new ApiError(
      'storeUnavailable',
      503,
      'data store unavailable',
      'retry after the seconds in retry-after',
      {
        'retry-after': '5',
      },
    ),
  malformedUrl: () =>
    new ApiError(
      'malformedUrl',
      400,
      'bad request: malformed URL',
      'percent-encode the URL correctly',
    ),
  badRequest: () =>
    new ApiError('badRequest', 400, 'bad request', 'send a valid HTTP/1.1 GET request'),
  missingHost: () =>
    new ApiError(
      'missingHost',
      400,
      'bad request: missing Host header',
      'HTTP/1.1 requests must send Host',
    ),
  requestTooLarge: () =>
    new ApiError('requestTooLarge', 431, 'request too large', 'shorten the URL and headers'),
  requestTimeout: () =>
    new ApiError(
      'requestTimeout',
      408,
      'request timeout',
      'send the whole request line and headers promptly',
    ),
  expectationFailed: () =>
    new ApiError(
      'expectationFailed',
      417,
      'expectation failed',
      'send no Expect header, or Expect: 100-continue',
    ),
  tooManyPipelined: (max: number) =>
    new ApiError(
      'tooManyPipelined',
      429,
      'too many pipelined requests',
      `wait for the answers before sending more than ${max} requests on one connection`,
      { 'retry-after': '1' },
    ),
  /** A status Fastify itself produced (e.g. 415, 413); the message is the status text. */
  framework: (status: number, statusText: string) =>
    new ApiError(
      'framework',
      status,
      statusText.toLowerCase(),
      'see /v1 for the endpoints and their parameters',
    ),
  internal: () =>
    new ApiError('internal', 500, 'internal error', 'retry later; the error has been logged'),
} as const;

/** Every error the API answers, by a name that never changes: a closed set. */
export type ApiErrorCode = keyof typeof ERROR_FACTORIES | 'peer';

/** The errors of the API, each carrying its name as `code`, set where it is made. */
export const API_ERRORS: typeof ERROR_FACTORIES = Object.freeze(ERROR_FACTORIES);

/** The contract's `{error, hint}` body of an ApiError. */
export function errorBody(error: ApiError): { error: string; hint?: string } {
  return error.hint === undefined
    ? { error: error.message }
    : { error: error.message, hint: error.hint };
}
