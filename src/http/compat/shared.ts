import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseInstant } from '../../core/time.js';
import type { ForecastBook } from '../../forecast/book.js';
import type { Reads } from '../../read/reads.js';
import type { PeerReads } from '../../queries/peer-reads.js';
import { rateLimitHeaders } from '../contract/headers.js';
import type { RateLimiter } from '../transport/rate-limiter.js';
import { weightOf } from '../contract/request-cost.js';
import { API_ERRORS, ApiError } from '../contract/errors.js';

/**
 * What the compatibility routes read: the same published series, mixes and forecasts as /v1,
 * through the one read layer (read/reads.ts), so they serve the values /v1 serves. One
 * instance per app.
 */
export interface CompatDeps {
  readonly reads: Reads;
  /** The answers' data, read through `reads`. */
  readonly peer: PeerReads;
  readonly forecasts: () => ForecastBook;
  readonly clock: () => number;
  readonly limiter: RateLimiter;
  readonly clientAddress: (request: FastifyRequest['raw']) => string;
}

/**
 * The per-IP rate limit of every other route, a costly route weighing its ROUTE_WEIGHTS: sets
 * the RateLimit-* headers and throws the API's 429, which each compatibility API's error handler
 * re-dresses in its own format.
 */
export function rateLimitHook(deps: CompatDeps) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const weight = weightOf(request.routeOptions.url);
    const state = await deps.limiter.hit(deps.clientAddress(request.raw), weight);
    reply.headers(rateLimitHeaders(state));
    if (!state.allowed) throw API_ERRORS.rateLimited(state.limit, state.resetSeconds);
  };
}

/** The status, headers and words of an error, whoever raised it; never a 500's internals. */
export function describeError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const status = (error as { statusCode?: number }).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return API_ERRORS.framework(status, 'bad request');
  }
  return API_ERRORS.internal();
}

/**
 * An instant query value in any form compatInstantText reads, in whole seconds (a fraction
 * rounds up): undefined when absent or blank, which each caller answers its own way (the
 * Electricity Maps routes refuse it, the Carbon Aware SDK ones read it as "not given"), and
 * `invalid(raw)` thrown when the text is not an instant.
 */
export function instantOf(
  raw: string | undefined,
  invalid: (raw: string) => Error,
): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const parsed = parseInstant(compatInstantText(raw));
  if (parsed === undefined) throw invalid(raw);
  return Math.ceil(parsed / 1000);
}

/**
 * An instant as the compatibility clients write it, rewritten to the ISO 8601 form parseInstant
 * reads: a space for the `T` (`2026-11-21 13:00:00`), an offset as `+0000`/`-0500` or after a
 * space, a trailing zone name ` UTC`/` GMT` (Go's `time.Time.String()`:
 * `2026-11-21 13:00:00 +0000 UTC`), and a `+` of an offset that arrived unescaped and reads as a
 * space. The sign of an offset is kept.
 */
function compatInstantText(raw: string): string {
  return raw
    .trim()
    .replace(/\s+(?:UTC|GMT)$/i, '')
    .replace(/^(\d{4}-\d{2}-\d{2})\s+(?=\d{2}:\d{2})/, '$1T')
    .replace(
      /\s+([+-]?)(\d{2}):?(\d{2})$/,
      (_match, sign: string, hours: string, minutes: string) =>
        `${sign === '' ? '+' : sign}${hours}:${minutes}`,
    )
    .replace(/(T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)([+-])(\d{2})(\d{2})$/, '$1$2$3:$4');
}
