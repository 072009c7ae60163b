import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseInstant, resolveWindow } from '../core/time.js';
import { findZone } from '../core/zones.js';
import { type DataResponder, representationFor } from './data-responder.js';
import {
  CACHE_CONTROL,
  CORS_HEADERS,
  JSON_TYPE,
  matchesIfNoneMatch,
  RATE_LIMITED,
} from './headers.js';
import type { LimitState, RateLimiter } from './rate-limiter.js';
import type { EncodedBody } from '../serving/response-cache.js';

export interface FastPathDeps {
  readonly responder: DataResponder;
  readonly limiter: RateLimiter;
  readonly clientAddress: (request: IncomingMessage) => string;
  readonly clock: () => number;
}

/**
 * The two data endpoints, answered from memory without going through the framework: they are
 * most of the traffic and their bodies are already encoded, so routing, hooks and validation
 * would cost more than the response itself (issue 6 targets 0.8x of a bare node:http server).
 *
 * It takes only well-formed requests that memory can answer, and returns false for everything
 * else (errors, unknown or repeated parameters, an empty zone, a cache still loading): Fastify
 * then answers with the full contract, so every error and edge case has one implementation.
 */
export function createFastPath(deps: FastPathDeps) {
  const { responder, limiter, clientAddress, clock } = deps;
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || !responder.cached) return false;
    const url = request.url ?? '';
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    const latest = path === '/v1/intensity/latest';
    if (!latest && path !== '/v1/intensity') return false;
    const params = readQuery(
      mark < 0 ? '' : url.slice(mark + 1),
      latest ? LATEST_PARAMS : HISTORY_PARAMS,
    );
    if (!params) return false;
    const body = latest ? latestBody(responder, params) : historyBody(responder, params, clock);
    if (!body) return false;
    const cacheControl = latest ? CACHE_CONTROL.latest : CACHE_CONTROL.intensity;
    const state = limiter.hit(clientAddress(request));
    if (state instanceof Promise) {
      state
        .then((resolved) => send(request, response, body, cacheControl, resolved))
        .catch(() => {
          response.destroy();
        });
    } else {
      send(request, response, body, cacheControl, state);
    }
    return true;
  };
}

const LATEST_PARAMS = new Set(['zone']);
const HISTORY_PARAMS = new Set(['zone', 'from', 'to']);

/**
 * The query as a map, or undefined when it holds anything the fast path leaves to Fastify:
 * a parameter other than `allowed`, one given twice, or an encoding Fastify's parser would read
 * differently (`+`, malformed percent-escapes).
 */
function readQuery(query: string, allowed: ReadonlySet<string>): Map<string, string> | undefined {
  const params = new Map<string, string>();
  if (query === '') return params;
  for (const part of query.split('&')) {
    const equals = part.indexOf('=');
    const key = equals < 0 ? part : part.slice(0, equals);
    if (!allowed.has(key) || params.has(key) || part.includes('+')) return undefined;
    try {
      params.set(key, decodeURIComponent(equals < 0 ? '' : part.slice(equals + 1)));
    } catch {
      return undefined;
    }
  }
  return params;
}

function latestBody(responder: DataResponder, params: Map<string, string>) {
  const given = params.get('zone');
  if (given === undefined) return responder.cachedLatest(undefined);
  const zone = findZone(given);
  return zone ? responder.cachedLatest(zone.code) : undefined;
}

function historyBody(responder: DataResponder, params: Map<string, string>, clock: () => number) {
  const zone = findZone(params.get('zone') ?? '');
  if (!zone) return undefined;
  const fromText = params.get('from');
  const toText = params.get('to');
  const fromMs = fromText === undefined ? undefined : parseInstant(fromText.trim());
  const toMs = toText === undefined ? undefined : parseInstant(toText.trim());
  if (
    (fromText !== undefined && fromMs === undefined) ||
    (toText !== undefined && toMs === undefined)
  ) {
    return undefined;
  }
  const { from, to } = resolveWindow(fromMs, toMs, clock());
  if (from >= to) return undefined;
  return responder.cachedHistory(zone.code, from, to);
}

// Node's writeHead takes a flat [name, value, ...] array much faster than an object (measured:
// ~70k vs ~45k responses/s for these headers), so the fast path builds one literal per response.
const EXPOSE = CORS_HEADERS['access-control-expose-headers'];

/** CORS and RateLimit-* headers, first in every fast-path response. */
function commonHeaders(state: LimitState): string[] {
  return [
    'access-control-allow-origin',
    CORS_HEADERS['access-control-allow-origin'],
    'access-control-expose-headers',
    EXPOSE,
    'ratelimit-limit',
    String(state.limit),
    'ratelimit-remaining',
    String(state.remaining),
    'ratelimit-reset',
    String(state.resetSeconds),
  ];
}

function send(
  request: IncomingMessage,
  response: ServerResponse,
  encoded: EncodedBody,
  cacheControl: string,
  state: LimitState,
): void {
  if (!state.allowed) {
    const body = JSON.stringify({
      error: RATE_LIMITED.error,
      hint: RATE_LIMITED.hint(state.limit),
    });
    response.writeHead(429, [
      ...commonHeaders(state),
      'retry-after',
      String(state.resetSeconds),
      'content-type',
      JSON_TYPE,
      'cache-control',
      CACHE_CONTROL.error,
      'content-length',
      String(Buffer.byteLength(body)),
    ]);
    response.end(request.method === 'HEAD' ? undefined : body);
    return;
  }
  const representation = representationFor(encoded, request.headers['accept-encoding']);
  const headers = commonHeaders(state);
  headers.push(
    'content-type',
    JSON_TYPE,
    'cache-control',
    cacheControl,
    'etag',
    representation.etag,
  );
  if (representation.varies) headers.push('vary', 'accept-encoding');
  if (representation.encoding) headers.push('content-encoding', representation.encoding);
  if (matchesIfNoneMatch(request.headers['if-none-match'], representation.etag)) {
    response.writeHead(304, headers);
    response.end();
    return;
  }
  headers.push('content-length', String(representation.body.length));
  response.writeHead(200, headers);
  response.end(request.method === 'HEAD' ? undefined : representation.body);
}
