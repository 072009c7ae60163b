import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { EncodedBody } from './response-cache.js';
import { API_ERRORS, ApiError } from '../contract/errors.js';
import type { DataResponder } from './data-responder.js';
import { type Representation, representationHeaders, representationReady } from './negotiate.js';
import { logUnhandled, sendRawError } from './error-handler.js';
import type { ForecastBodies } from '../routes/forecast-bodies.js';
import {
  CACHE_CONTROL,
  CORS_HEADERS,
  JSON_TYPE,
  matchesIfNoneMatch,
  rateLimitHeaders,
} from '../contract/headers.js';
import {
  FORECAST_PARAMS,
  HISTORY_PARAMS,
  interpretForecast,
  interpretLatest,
  interpretWindow,
  LATEST_PARAMS,
  MIX_PARAMS,
  nextPageLink,
  type Offered,
  readParams,
} from '../contract/params.js';
import type { LimitState, RateLimiter } from './rate-limiter.js';

export interface FastPathDeps {
  readonly responder: DataResponder;
  readonly limiter: RateLimiter;
  readonly clientAddress: (request: IncomingMessage) => string;
  readonly clock: () => number;
  /** What the server offers beyond the contract (consumption values). */
  readonly offered: Offered;
  /** The forecast bodies the Fastify route serves too. */
  readonly forecasts: ForecastBodies;
  /** Where a 500 is logged with its cause. */
  readonly log?: FastifyBaseLogger;
}

/** What the fast path will send once the limiter lets the request through. */
interface Plan {
  readonly cacheControl: string;
  /** Whether memory can answer now (a zone's reading, a mix kept from an earlier request). */
  readonly available: () => boolean;
  /** From memory; undefined if memory stopped answering meanwhile. */
  readonly fromMemory: () => EncodedBody | undefined;
  /** The same body by the responder's full route (store, 404, 503). */
  readonly fromResponder: () => Promise<EncodedBody>;
}

/**
 * Plans by request target, for targets whose meaning does not depend on the time of the request
 * (every latest and forecast query, windows with both ends given): clients repeat the same URLs,
 * and interpreting one costs more than sending its cached body. Cleared when full, so a client
 * that sends endless distinct URLs costs what it did without the memo.
 */
const MAX_PLANS = 1024;

/**
 * The data endpoints and the forecast, answered from memory without going through the framework:
 * they are most of the traffic and their bodies are already encoded, so routing, hooks and
 * validation would cost more than the response itself (issue 6 targets 0.8x of a bare node:http
 * server for the data endpoints, issue 12 0.5x for the forecast).
 *
 * It reads the query with the same interpreter as the routes and takes only requests that it can
 * answer with a body; everything else (every error, a zone without reading, a cache still
 * loading) returns false and Fastify answers, so each error has one implementation. The rate
 * limiter is asked before any body is built: a refused request costs no encoding. The whole fast
 * path, forecasts included, serves only while the reading cache is current: one switch, and
 * without the cache (tests) every request goes through Fastify, so the two can be compared.
 */
export function createFastPath(deps: FastPathDeps) {
  const { responder, limiter, clientAddress, log } = deps;
  const plans = new Map<string, Plan>();
  // A plan names its zone as served when it was made: made again once the served zones change.
  let plannedFor = deps.offered.zones;
  const planFor = (url: string): Plan | undefined => {
    if (deps.offered.zones !== plannedFor) {
      plans.clear();
      plannedFor = deps.offered.zones;
    }
    const known = plans.get(url);
    if (known) return known;
    const planned = planResponse(url, deps);
    if (planned?.timeless) {
      if (plans.size >= MAX_PLANS) plans.clear();
      plans.set(url, planned.plan);
    }
    return planned?.plan;
  };
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || !responder.cached) return false;
    const plan = planFor(request.url ?? '');
    if (!plan?.available()) return false;
    const state = limiter.hit(clientAddress(request));
    if (state instanceof Promise) {
      state
        .then((resolved) => respond(request, response, plan, resolved, log))
        .catch((error: unknown) => {
          logUnhandled(log, error, request.url ?? '');
          response.destroy();
        });
    } else {
      respond(request, response, plan, state, log);
    }
    return true;
  };
}

/** A plan, and whether it holds at any time (then it is kept for the same target). */
interface Planned {
  readonly plan: Plan;
  readonly timeless: boolean;
}

const ALWAYS = () => true;

function planResponse(
  url: string,
  { responder, clock, forecasts, offered }: FastPathDeps,
): Planned | undefined {
  const mark = url.indexOf('?');
  const path = mark < 0 ? url : url.slice(0, mark);
  try {
    if (path === '/v1/intensity/latest') {
      const { zone, given, basis, accounting } = interpretLatest(
        readParams(url, LATEST_PARAMS),
        offered,
      );
      const plan: Plan = {
        cacheControl: CACHE_CONTROL.latest,
        available: zone ? () => responder.hasCachedLatest(zone.code, basis, accounting) : ALWAYS,
        fromMemory: () => responder.cachedLatest(zone?.code, basis, accounting),
        fromResponder: () => responder.latest(zone?.code, given, basis, accounting),
      };
      return { plan, timeless: true };
    }
    if (path === '/v1/intensity') {
      const params = readParams(url, HISTORY_PARAMS);
      const { zone, from, to, basis, accounting } = interpretWindow(params, clock(), offered);
      const plan: Plan = {
        cacheControl: CACHE_CONTROL.intensity,
        available: ALWAYS,
        fromMemory: () => responder.cachedHistory(zone.code, from, to, basis, accounting),
        fromResponder: () => responder.history(zone.code, from, to, basis, accounting),
      };
      return { plan, timeless: hasBothEnds(params) };
    }
    if (path === '/v1/mix') {
      // Mixes are read from the store: only a body kept from an earlier request is fast.
      const params = readParams(url, MIX_PARAMS);
      const { zone, from, to, accounting } = interpretWindow(params, clock(), offered);
      const plan: Plan = {
        cacheControl: CACHE_CONTROL.mix,
        available: () => responder.cachedMix(zone.code, from, to, accounting) !== undefined,
        fromMemory: () => responder.cachedMix(zone.code, from, to, accounting),
        fromResponder: () => responder.mix(zone, from, to, accounting),
      };
      return { plan, timeless: hasBothEnds(params) };
    }
    if (path === '/v1/intensity/forecast') {
      // Prepared in memory from the forecast book: every valid request has a body (count 0 and a
      // note for a zone without forecast), so only the query's errors go to the route.
      const query = interpretForecast(readParams(url, FORECAST_PARAMS), offered);
      const plan: Plan = {
        cacheControl: CACHE_CONTROL.forecast,
        available: ALWAYS,
        fromMemory: () => forecasts.body(query),
        fromResponder: async () => forecasts.body(query),
      };
      return { plan, timeless: true };
    }
  } catch (error) {
    if (error instanceof ApiError) return undefined;
    throw error;
  }
  return undefined;
}

/** A window whose ends are both given means the same hours whenever it is asked. */
const hasBothEnds = (params: ReadonlyMap<string, string>) => params.has('from') && params.has('to');

function respond(
  request: IncomingMessage,
  response: ServerResponse,
  plan: Plan,
  state: LimitState,
  log?: FastifyBaseLogger,
): void {
  if (!state.allowed) {
    const error = API_ERRORS.rateLimited(state.limit, state.resetSeconds);
    sendLimited(response, state, error, request.method === 'HEAD');
    return;
  }
  const encoded = plan.fromMemory();
  if (encoded) {
    sendRepresentation(request, response, encoded, plan.cacheControl, state, log);
    return;
  }
  // Memory stopped answering while an asynchronous limiter decided: the full route, once.
  plan.fromResponder().then(
    (body) => sendRepresentation(request, response, body, plan.cacheControl, state, log),
    (error: unknown) => {
      logUnhandled(log, error, request.url ?? '');
      const sent = error instanceof ApiError ? error : API_ERRORS.internal();
      sendLimited(response, state, sent, request.method === 'HEAD');
    },
  );
}

function sendRepresentation(
  request: IncomingMessage,
  response: ServerResponse,
  encoded: EncodedBody,
  cacheControl: string,
  state: LimitState,
  log?: FastifyBaseLogger,
): void {
  const representation = representationReady(encoded, request.headers['accept-encoding']);
  if (!(representation instanceof Promise)) {
    send(request, response, encoded, representation, cacheControl, state);
    return;
  }
  // A large body's first compressed request waits for its variant, made off the event loop.
  representation.then(
    (ready) => send(request, response, encoded, ready, cacheControl, state),
    (error: unknown) => {
      logUnhandled(log, error, request.url ?? '');
      response.destroy();
    },
  );
}

// Node's writeHead takes a flat [name, value, ...] array much faster than an object (measured:
// ~70k vs ~45k responses/s for these headers), so the fast path builds one array per response:
// the CORS and RateLimit-* headers first, then the representation's, made once per
// representation and route (a cached body is sent many times).
const EXPOSE = CORS_HEADERS['access-control-expose-headers'];
const ALLOW_ORIGIN = CORS_HEADERS['access-control-allow-origin'];

/** An error after the limiter counted the request: its RateLimit-* headers stay. */
function sendLimited(response: ServerResponse, state: LimitState, error: ApiError, head: boolean) {
  sendRawError(response, error, { head, headers: rateLimitHeaders(state) });
}

/** Content-Type, Cache-Control and the representation's headers, by representation and route. */
const LINK_AT = 4;
const TAILS = new WeakMap<Representation, Map<string, readonly string[]>>();

function tailOf(representation: Representation, cacheControl: string): readonly string[] {
  let byRoute = TAILS.get(representation);
  if (!byRoute) TAILS.set(representation, (byRoute = new Map()));
  let tail = byRoute.get(cacheControl);
  if (!tail) {
    tail = [
      'content-type',
      JSON_TYPE,
      'cache-control',
      cacheControl,
      ...representationHeaders(representation).flat(),
    ];
    byRoute.set(cacheControl, tail);
  }
  return tail;
}

function send(
  request: IncomingMessage,
  response: ServerResponse,
  encoded: EncodedBody,
  representation: Representation,
  cacheControl: string,
  state: LimitState,
): void {
  const link =
    encoded.nextFrom === undefined ? undefined : nextPageLink(request.url ?? '', encoded.nextFrom);
  const headers = [
    'access-control-allow-origin',
    ALLOW_ORIGIN,
    'access-control-expose-headers',
    link === undefined ? EXPOSE : `${EXPOSE}, Link`,
    'ratelimit-limit',
    String(state.limit),
    'ratelimit-remaining',
    String(state.remaining),
    'ratelimit-reset',
    String(state.resetSeconds),
  ];
  const tail = tailOf(representation, cacheControl);
  for (let at = 0; at < tail.length; at++) {
    // The Link of a truncated page goes between Cache-Control and the representation's headers.
    if (at === LINK_AT && link !== undefined) headers.push('link', link);
    headers.push(tail[at]!);
  }
  if (matchesIfNoneMatch(request.headers['if-none-match'], representation.etag)) {
    response.writeHead(304, headers);
    response.end();
    return;
  }
  headers.push('content-length', String(representation.body.length));
  response.writeHead(200, headers);
  response.end(request.method === 'HEAD' ? undefined : representation.body);
}
