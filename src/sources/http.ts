import pRetry from 'p-retry';
import type { Logger } from 'pino';
import type { SourceId } from '../core/zones.js';

/**
 * The one place where upstream HTTP calls are made, retried and sorted into a few failure kinds
 * (STYLE.md habits 6 and 7). Every message this module produces has its URL and body scrubbed of
 * credentials, which travel as query parameters (upstreams README §1.1 `securityToken`, §2.1
 * `api_key`; EIA also echoes its key in every body).
 */

/**
 * - `auth`: credentials refused (401/403); the source stops, nothing is retried.
 * - `temporary`: 429, 5xx, timeout or network error; retried, then left for the next run.
 * - `invalid`: the request was rejected (other 4xx) or the payload is unusable; nothing is stored.
 * - `no-data`: 404, or the upstream's explicit "no matching data".
 */
export type UpstreamErrorKind = 'auth' | 'temporary' | 'invalid' | 'no-data';

export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  readonly kind: UpstreamErrorKind;
  /** HTTP status, when the upstream answered. */
  readonly status: number | undefined;
  /** Start of the scrubbed response body, so a caller can recognise an upstream's error document. */
  readonly body: string | undefined;
  /** Wait asked for by a `retry-after` header, in milliseconds. */
  readonly retryAfterMs: number | undefined;

  constructor(
    kind: UpstreamErrorKind,
    message: string,
    details: { status?: number; body?: string; retryAfterMs?: number } = {},
  ) {
    super(message);
    this.kind = kind;
    this.status = details.status;
    this.body = details.body;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** Wall clock and waiting, injected so tests move time instead of sleeping. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/** A half-open interval `[fromTs, toTs)` of epoch seconds. */
export interface TimeWindow {
  readonly fromTs: number;
  readonly toTs: number;
}

/** Splits a window into consecutive pieces of at most `maxSeconds` (an upstream's span limit). */
export function splitWindow(window: TimeWindow, maxSeconds: number): TimeWindow[] {
  const pieces: TimeWindow[] = [];
  for (let fromTs = window.fromTs; fromTs < window.toTs; fromTs += maxSeconds) {
    pieces.push({ fromTs, toTs: Math.min(fromTs + maxSeconds, window.toTs) });
  }
  return pieces;
}

const SECRET_PARAMS = /\b(securityToken|api_key)(=|"\s*:\s*")[^&\s"'#]*/gi;

/** Replaces credential query parameters and the given literal secrets with `REDACTED`. */
export function scrubSecrets(text: string, secrets: readonly string[] = []): string {
  let scrubbed = text.replace(SECRET_PARAMS, '$1$2REDACTED');
  for (const secret of secrets) {
    if (secret.length > 0) scrubbed = scrubbed.split(secret).join('REDACTED');
  }
  return scrubbed;
}

export interface UpstreamHttpOptions {
  readonly source: SourceId;
  /** Credentials to scrub wherever they might appear (the URL, an echoed body). */
  readonly secrets?: readonly string[];
  /** Shown with an `auth` failure, e.g. which variable holds the key. */
  readonly authHint?: string;
  readonly fetch?: typeof fetch;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Bound of one attempt, body included. */
  readonly timeoutMs?: number;
  /** Retries after the first attempt, for temporary failures only. */
  readonly retries?: number;
  /** First backoff; doubles per retry, with jitter, up to `maxBackoffMs`. */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  /** A `retry-after` longer than this is not waited for: the run gives up on that request. */
  readonly maxRetryAfterMs?: number;
  /** At most `requests` request starts in any `perMs` (retries included); more wait their turn. */
  readonly rateLimit?: { readonly requests: number; readonly perMs: number };
  /** Source of jitter in [0, 1). */
  readonly random?: () => number;
}

export interface UpstreamResponse {
  readonly status: number;
  readonly body: string;
}

export interface UpstreamHttp {
  /**
   * GETs a URL and returns its body when the status is 2xx. Anything else rejects with an
   * UpstreamError whose message names the scrubbed URL. `signal` cancels the waits (retry,
   * rate limit), not a request in flight.
   */
  getText(
    url: string,
    options?: { headers?: Readonly<Record<string, string>>; signal?: AbortSignal },
  ): Promise<UpstreamResponse>;
  /** Scrubs this source's credentials from a text meant for logs, errors or storage. */
  scrub(text: string): string;
}

const BODY_SNIPPET_CHARS = 2000;

export function createUpstreamHttp(options: UpstreamHttpOptions): UpstreamHttp {
  const {
    source,
    secrets = [],
    authHint = 'check the configured credentials',
    fetch: fetchFn = fetch,
    clock = systemClock,
    logger,
    // Year-long A75 documents take ENTSO-E a while to assemble.
    timeoutMs = 60_000,
    retries = 4,
    backoffMs = 1_000,
    maxBackoffMs = 30_000,
    maxRetryAfterMs = 120_000,
    rateLimit,
    random = Math.random,
  } = options;
  const scrub = (text: string) => scrubSecrets(text, secrets);
  // Start times of the requests inside the current rate-limit window, oldest first.
  const recentStarts: number[] = [];

  const waitForTurn = async (signal: AbortSignal | undefined) => {
    if (!rateLimit) return;
    for (;;) {
      const now = clock.now();
      let oldest = recentStarts[0];
      while (oldest !== undefined && oldest <= now - rateLimit.perMs) {
        recentStarts.shift();
        oldest = recentStarts[0];
      }
      if (oldest === undefined || recentStarts.length < rateLimit.requests) {
        recentStarts.push(now);
        return;
      }
      await clock.sleep(oldest + rateLimit.perMs - now, signal);
    }
  };

  const attempt = async (
    url: string,
    headers: Readonly<Record<string, string>>,
    signal: AbortSignal | undefined,
  ): Promise<UpstreamResponse> => {
    await waitForTurn(signal);
    const where = `${source}: GET ${scrub(url)}`;
    // The caller's signal does not cut a request in flight: a shutdown lets it finish (bounded).
    const timeout = AbortSignal.timeout(timeoutMs);
    let response: Response;
    let body: string;
    try {
      response = await fetchFn(url, { headers, signal: timeout });
      body = await response.text();
    } catch (error) {
      if (timeout.aborted) {
        throw new UpstreamError('temporary', `${where}: no complete answer within ${timeoutMs} ms`);
      }
      throw new UpstreamError('temporary', `${where}: network error: ${scrub(describe(error))}`);
    }
    const { status } = response;
    if (status >= 200 && status < 300) return { status, body };
    const details = { status, body: scrub(body.slice(0, BODY_SNIPPET_CHARS)) };
    if (status === 401 || status === 403) {
      const message = `${where}: HTTP ${status}, credentials refused; ${authHint}`;
      throw new UpstreamError('auth', message, { status });
    }
    if (status === 429 || status === 408 || status >= 500) {
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), clock.now());
      const wait = retryAfterMs === undefined ? '' : ` (retry-after ${retryAfterMs / 1000} s)`;
      throw new UpstreamError('temporary', `${where}: HTTP ${status}${wait}`, {
        ...details,
        retryAfterMs,
      });
    }
    if (status === 404) throw new UpstreamError('no-data', `${where}: HTTP 404`, details);
    throw new UpstreamError('invalid', `${where}: HTTP ${status}, request rejected`, details);
  };

  return {
    scrub,
    getText(url, { headers = {}, signal } = {}) {
      return pRetry(() => attempt(url, headers, signal), {
        retries,
        // Waits go through the injected clock below (retry-after or backoff), not p-retry's timer.
        minTimeout: 0,
        shouldRetry: async ({ error, retriesConsumed }) => {
          if (!(error instanceof UpstreamError) || error.kind !== 'temporary') return false;
          if (signal?.aborted) return false;
          const backoff = Math.min(maxBackoffMs, backoffMs * 2 ** retriesConsumed);
          // "Equal jitter": between half and all of the backoff, so retries of parallel callers spread.
          const delayMs = error.retryAfterMs ?? Math.round(backoff / 2 + (random() * backoff) / 2);
          if (delayMs > maxRetryAfterMs) return false;
          logger?.warn(
            { source, attempt: retriesConsumed + 1, delayMs, error: error.message },
            'upstream request failed, retrying',
          );
          await clock.sleep(delayMs, signal);
          return true;
        },
      });
    },
  };
}

/** `retry-after` is either delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // undici hides the useful part (ECONNREFUSED, ENOTFOUND...) in `cause`.
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
