import pRetry from 'p-retry';
import type { Logger } from 'pino';
import { SIMULATED_HEADER } from '../core/synthetic.js';
import type { FailureKind } from '../core/reading.js';
import type { SourceId } from '../core/sources.js';
import type { Clock } from '../core/time.js';

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
  /**
   * The failure in the words a public report may use (no URL, no upstream text). `kind` says what
   * to do about it; this says what happened, for the status note.
   */
  readonly failure: FailureKind;
  /** HTTP status, when the upstream answered. */
  readonly status: number | undefined;
  /** Start of the scrubbed response body, so a caller can recognise an upstream's error document. */
  readonly body: string | undefined;
  /** Wait asked for by a `retry-after` header, in milliseconds. */
  readonly retryAfterMs: number | undefined;

  constructor(
    kind: UpstreamErrorKind,
    message: string,
    details: { status?: number; body?: string; retryAfterMs?: number; failure?: FailureKind } = {},
  ) {
    super(message);
    this.kind = kind;
    this.failure = details.failure ?? failureOf(kind, details.status);
    this.status = details.status;
    this.body = details.body;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/**
 * The public word for a failure, from its kind and HTTP status. A temporary failure without a
 * status is a network error (a timeout says so itself); an invalid one without a status is a
 * payload we could not use, with one it is a request the upstream turned down.
 */
function failureOf(kind: UpstreamErrorKind, status: number | undefined): FailureKind {
  switch (kind) {
    case 'auth':
      return 'auth';
    case 'no-data':
      return 'no-data';
    case 'invalid':
      return status === undefined ? 'invalid-payload' : 'rejected';
    case 'temporary':
      if (status === 429) return 'rate-limited';
      if (status === 408) return 'timeout';
      return status === undefined ? 'unreachable' : 'server-error';
  }
}

/** The real clock, on Node's timers. */
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

/**
 * Replaces every occurrence of the given secrets with `REDACTED`, in whatever form each took on
 * its way through a URL or a body: each character as is or percent-encoded (either hex case,
 * `+` for a space), so our encodeURIComponent, the URL parser's re-encoding of `'` and a proxy's
 * echo all match, in any mix; and JSON-escaped (`\"`, `\uXXXX`), since EIA echoes its key.
 *
 * By value, not by a `name=value` pattern: a pattern has to guess where a value ends, and a key
 * holding `'` left its tail after `REDACTED` (issue 10, finding 8).
 */
export function scrubSecrets(text: string, secrets: readonly string[] = []): string {
  let scrubbed = text;
  // Longest first, so that no secret is left half-replaced by a shorter one inside it.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret.length > 0) scrubbed = scrubbed.replace(secretPattern(secret), 'REDACTED');
  }
  return scrubbed;
}

/** Letters and digits travel as they are; every other character has been seen encoded (`~`). */
const PLAIN = /^[A-Za-z0-9]$/;

function secretPattern(secret: string): RegExp {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  // A hex digit in either case: `%2f` and `%2F` are the same byte.
  const anyCase = (hex: string) =>
    [...hex]
      .map((digit) =>
        /[a-f]/i.test(digit) ? `[${digit.toLowerCase()}${digit.toUpperCase()}]` : digit,
      )
      .join('');
  const characters = [...secret].map((char) => {
    if (PLAIN.test(char)) return char;
    const bytes = [...new TextEncoder().encode(char)];
    const forms = [
      escape(char),
      bytes.map((byte) => `%${anyCase(byte.toString(16).padStart(2, '0'))}`).join(''),
      `\\\\${escape(char)}`,
    ];
    const code = char.codePointAt(0) ?? 0;
    if (code <= 0xffff) forms.push(`\\\\u${anyCase(code.toString(16).padStart(4, '0'))}`);
    if (char === ' ') forms.push('\\+');
    return `(?:${forms.join('|')})`;
  });
  return new RegExp(characters.join(''), 'g');
}

/**
 * What bounds one logical request beside its own per-attempt timeout: `signal` cancels the waits
 * (retry, rate limit), not an attempt in flight; `deadline` (epoch ms on the client's clock) is
 * the end of the run it belongs to: no attempt or wait reaches past it.
 */
export interface RequestLimits {
  readonly signal?: AbortSignal | undefined;
  readonly deadline?: number | undefined;
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
  /**
   * Answers signed as simulated (SIMULATED_HEADER, the upstream simulator's) are refused with
   * this message, naming what to set, instead of being ingested as real data. Absent: accepted
   * (the demo).
   */
  readonly refuseSimulated?: string;
}

interface UpstreamResponse {
  readonly status: number;
  readonly body: string;
}

export interface UpstreamHttp {
  /**
   * GETs a URL and returns its body when the status is 2xx. Anything else rejects with an
   * UpstreamError whose message names the scrubbed URL. See RequestLimits for `signal` and
   * `deadline`.
   */
  getText(
    url: string,
    options?: RequestLimits & { headers?: Readonly<Record<string, string>> },
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
    refuseSimulated,
  } = options;
  const scrub = (text: string) => scrubSecrets(text, secrets);
  // Start times of the requests inside the current rate-limit window, oldest first.
  const recentStarts: number[] = [];

  const pastDeadline = (where: string) =>
    new UpstreamError('temporary', `${where}: run deadline reached`, { failure: 'deadline' });

  const waitForTurn = async (where: string, { signal, deadline }: RequestLimits) => {
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
      const wait = oldest + rateLimit.perMs - now;
      if (deadline !== undefined && now + wait >= deadline) throw pastDeadline(where);
      await clock.sleep(wait, signal);
    }
  };

  const attempt = async (
    url: string,
    headers: Readonly<Record<string, string>>,
    limits: RequestLimits,
  ): Promise<UpstreamResponse> => {
    const where = `${source}: GET ${scrub(url)}`;
    await waitForTurn(where, limits);
    // An attempt stops at the run's deadline too, so a hanging upstream cannot carry a run past it.
    const left = limits.deadline === undefined ? Infinity : limits.deadline - clock.now();
    if (left <= 0) throw pastDeadline(where);
    const boundMs = Math.min(timeoutMs, left);
    // The caller's signal does not cut a request in flight: a shutdown lets it finish (bounded).
    const timeout = clock.timeout?.(boundMs) ?? AbortSignal.timeout(boundMs);
    let response: Response;
    let body: string;
    try {
      response = await fetchFn(url, { headers, signal: timeout });
      body = await response.text();
    } catch (error) {
      if (timeout.aborted) {
        if (boundMs < timeoutMs) throw pastDeadline(where);
        throw new UpstreamError(
          'temporary',
          `${where}: no complete answer within ${timeoutMs} ms`,
          { failure: 'timeout' },
        );
      }
      throw new UpstreamError('temporary', `${where}: network error: ${scrub(describe(error))}`);
    }
    const { status } = response;
    if (refuseSimulated !== undefined && response.headers.has(SIMULATED_HEADER)) {
      // Never retried: the same upstream signs every answer.
      throw new UpstreamError('invalid', `${source}: ${refuseSimulated}`);
    }
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
    getText(url, { headers = {}, signal, deadline } = {}) {
      return pRetry(() => attempt(url, headers, { signal, deadline }), {
        retries,
        // Waits go through the injected clock below (retry-after or backoff), not p-retry's timer.
        minTimeout: 0,
        shouldRetry: async ({ error, retriesConsumed }) => {
          if (!(error instanceof UpstreamError) || error.kind !== 'temporary') return false;
          if (signal?.aborted || error.failure === 'deadline') return false;
          const backoff = Math.min(maxBackoffMs, backoffMs * 2 ** retriesConsumed);
          // "Equal jitter": between half and all of the backoff, so retries of parallel callers spread.
          const delayMs = error.retryAfterMs ?? Math.round(backoff / 2 + (random() * backoff) / 2);
          if (delayMs > maxRetryAfterMs) return false;
          // No point waiting for a try the run's deadline would not let start.
          if (deadline !== undefined && clock.now() + delayMs >= deadline) return false;
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
