import type { LimitState } from '../transport/rate-limiter.js';

/**
 * Headers that the Fastify routes and the fast path must send identically. Kept in one place so
 * the two cannot drift; the black-box suite compares the two paths byte for byte.
 */

export const JSON_TYPE = 'application/json; charset=utf-8';

/** Open CORS (api-spec §5): scripts in any origin may read the bodies and these headers. */
export const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers':
    'ETag, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset',
} as const;

export const CACHE_CONTROL = {
  index: 'public, max-age=3600',
  health: 'no-store',
  status: 'max-age=120',
  zones: 'max-age=3600',
  latest: 'public, max-age=300',
  intensity: 'max-age=600',
  mix: 'max-age=600',
  factors: 'public, max-age=86400',
  // As the /v1/intensity pages an export equals: a repeated download within 10 minutes may come
  // from the client's cache (values change at most hourly). No ETag: it would need the whole
  // body before the first byte is sent.
  export: 'max-age=600',
  // Events are of the moment, and a proxy must never replay a stream.
  stream: 'no-store',
  // A schedule depends on the request time (earliest defaults to now): never reused.
  schedule: 'no-store',
  // Forecasts are recomputed when data arrives (about hourly), not per request.
  forecast: 'public, max-age=300',
  skill: 'public, max-age=300',
  level: 'public, max-age=300',
  stats: 'max-age=600',
  // Subscriptions are private to their holder, and change with every delivery.
  subscriptions: 'no-store',
  openapi: 'public, max-age=3600',
  error: 'no-store',
} as const;

export function rateLimitHeaders(state: LimitState): Record<string, string> {
  return {
    'ratelimit-limit': String(state.limit),
    'ratelimit-remaining': String(state.remaining),
    'ratelimit-reset': String(state.resetSeconds),
  };
}

/** RFC 9110 weak comparison of If-None-Match against a tag. */
export function matchesIfNoneMatch(header: string | undefined, tag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === tag);
}
