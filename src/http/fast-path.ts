import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { EncodedBody } from './response-cache.js';
import { API_ERRORS, ApiError } from './api-errors.js';
import type { DataResponder } from './data-responder.js';
import { type Representation, representationHeaders, representationReady } from './negotiate.js';
import { logUnhandled, sendRawError } from './errors.js';
import type { ForecastBodies } from './forecast-bodies.js';
import {
  CACHE_CONTROL,
  CORS_HEADERS,
  JSON_TYPE,
  matchesIfNoneMatch,
  rateLimitHeaders,
} from './headers.js';
import {
  FORECAST_PARAMS,
  HISTORY_PARAMS,
  interpretForecast,
  interpretLatest,
  interpretWindow,
  LATEST_PARAMS,
  MIX_PARAMS,
  nextPageLink,
  readParams,
} from './query.js';
import type { LimitState, RateLimiter } from './rate-limiter.js';

export interface FastPathDeps {
  readonly responder: DataResponder;
  readonly limiter: RateLimiter;
  readonly clientAddress: (request: IncomingMessage) => string;
  readonly clock: () => number;
  /** The forecast bodies the Fastify route serves too. */
  readonly forecasts: ForecastBodies;
  /** Where a 500 is logged with its cause. */
  readonly log?: FastifyBaseLogger;
}

/** What the fast path will send once the limiter lets the request through. */
interface Plan {
  readonly cacheControl: string;
  /** From memory; undefined if memory stopped answering meanwhile. */
  readonly fromMemory: () => EncodedBody | undefined;
  /** The same body by the responder's full route (store, 404, 503). */
  readonly fromResponder: () => Promise<EncodedBody>;
}

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
  const { responder, limiter, clientAddress } = deps;
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || !responder.cached) return false;
    const plan = planResponse(request.url ?? '', deps);
    if (!plan) return false;
    const state = limiter.hit(clientAddress(request));
    if (state instanceof Promise) {
      state
        .then((resolved) => respond(request, response, plan, resolved, deps.log))
        .catch((error: unknown) => {
          logUnhandled(deps.log, error, request.url ?? '');
          response.destroy();
        });
    } else {
      void respond(request, response, plan, state, deps.log);
    }
    return true;
  };
}

function planResponse(
  url: string,
  { responder, clock, forecasts }: FastPathDeps,
): Plan | undefined {
  const mark = url.indexOf('?');
  const path = mark < 0 ? url : url.slice(0, mark);
  try {
    if (path === '/v1/intensity/latest') {
      const { zone, given, basis } = interpretLatest(readParams(url, LATEST_PARAMS));
      if (zone && !responder.hasCachedLatest(zone.code, basis)) return undefined;
      return {
        cacheControl: CACHE_CONTROL.latest,
        fromMemory: () => responder.cachedLatest(zone?.code, basis),
        fromResponder: () => responder.latest(zone?.code, given, basis),
      };
    }
    if (path === '/v1/intensity') {
      const { zone, from, to, basis } = interpretWindow(readParams(url, HISTORY_PARAMS), clock());
      return {
        cacheControl: CACHE_CONTROL.intensity,
        fromMemory: () => responder.cachedHistory(zone.code, from, to, basis),
        fromResponder: () => responder.history(zone.code, from, to, basis),
      };
    }
    if (path === '/v1/mix') {
      // Mixes are read from the store: only a body kept from an earlier request is fast.
      const { zone, from, to } = interpretWindow(readParams(url, MIX_PARAMS), clock());
      if (!responder.cachedMix(zone.code, from, to)) return undefined;
      return {
        cacheControl: CACHE_CONTROL.mix,
        fromMemory: () => responder.cachedMix(zone.code, from, to),
        fromResponder: () => responder.mix(zone, from, to),
      };
    }
    if (path === '/v1/intensity/forecast') {
      // Prepared in memory from the forecast book: every valid request has a body (count 0 and a
      // note for a zone without forecast), so only the query's errors go to the route.
      const query = interpretForecast(readParams(url, FORECAST_PARAMS));
      const body = async () => forecasts.body(query);
      return {
        cacheControl: CACHE_CONTROL.forecast,
        fromMemory: () => forecasts.body(query),
        fromResponder: body,
      };
    }
  } catch (error) {
    if (error instanceof ApiError) return undefined;
    throw error;
  }
  return undefined;
}

async function respond(
  request: IncomingMessage,
  response: ServerResponse,
  plan: Plan,
  state: LimitState,
  log?: FastifyBaseLogger,
): Promise<void> {
  const head = request.method === 'HEAD';
  if (!state.allowed) {
    sendLimited(response, state, API_ERRORS.rateLimited(state.limit, state.resetSeconds), head);
    return;
  }
  let encoded = plan.fromMemory();
  if (!encoded) {
    // Memory stopped answering while an asynchronous limiter decided: the full route, once.
    try {
      encoded = await plan.fromResponder();
    } catch (error) {
      logUnhandled(log, error, request.url ?? '');
      sendLimited(response, state, error instanceof ApiError ? error : API_ERRORS.internal(), head);
      return;
    }
  }
  let representation = representationReady(encoded, request.headers['accept-encoding']);
  // A large body's first compressed request waits for its variant, made off the event loop.
  if (representation instanceof Promise) representation = await representation;
  send(request, response, encoded, representation, plan.cacheControl, state);
}

// Node's writeHead takes a flat [name, value, ...] array much faster than an object (measured:
// ~70k vs ~45k responses/s for these headers), so the fast path builds one literal per response.
const EXPOSE = CORS_HEADERS['access-control-expose-headers'];

/** CORS and RateLimit-* headers, first in every fast-path response. */
function commonHeaders(state: LimitState, expose: string = EXPOSE): string[] {
  return [
    'access-control-allow-origin',
    CORS_HEADERS['access-control-allow-origin'],
    'access-control-expose-headers',
    expose,
    'ratelimit-limit',
    String(state.limit),
    'ratelimit-remaining',
    String(state.remaining),
    'ratelimit-reset',
    String(state.resetSeconds),
  ];
}

/** An error after the limiter counted the request: its RateLimit-* headers stay. */
function sendLimited(response: ServerResponse, state: LimitState, error: ApiError, head: boolean) {
  sendRawError(response, error, { head, headers: rateLimitHeaders(state) });
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
  const headers = commonHeaders(state, link === undefined ? EXPOSE : `${EXPOSE}, Link`);
  headers.push('content-type', JSON_TYPE, 'cache-control', cacheControl);
  if (link !== undefined) headers.push('link', link);
  headers.push(...representationHeaders(representation).flat());
  if (matchesIfNoneMatch(request.headers['if-none-match'], representation.etag)) {
    response.writeHead(304, headers);
    response.end();
    return;
  }
  headers.push('content-length', String(representation.body.length));
  response.writeHead(200, headers);
  response.end(request.method === 'HEAD' ? undefined : representation.body);
}
