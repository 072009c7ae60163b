/**
 * When a failed delivery is tried again (extensions §13): exponential backoff with jitter, for
 * 24 hours after the event was first due, then dropped.
 */

export const RETRY_FOR_MS = 24 * 3600 * 1000;

/** How one delivery attempt ended: a 2xx, a failure retried later, or a failure given up. */
export type DeliveryOutcome = 'delivered' | 'failed' | 'dropped';

export interface BackoffPolicy {
  /** The delay after the first failure, before jitter. */
  readonly baseMs: number;
  /** The longest delay between two attempts, before jitter. */
  readonly capMs: number;
}

/** 30 s, 1 min, 2 min ... up to one hour between attempts: about 30 attempts in 24 h. */
export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 30_000, capMs: 3600_000 };

/**
 * The delay before attempt `failures + 1` after `failures` failures (1 or more), with `random`
 * in [0, 1): between half and all of `base * 2^(failures - 1)`, capped ("equal jitter").
 */
export function retryDelayMs(failures: number, random: number, policy = DEFAULT_BACKOFF): number {
  const exponential = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(failures - 1, 40));
  return Math.round(exponential * (0.5 + random / 2));
}

/**
 * The time of the next attempt, or null when the event has been retried for 24 hours since
 * `firstDueMs` and is dropped.
 */
export function nextAttemptAt(
  firstDueMs: number,
  failedAtMs: number,
  failures: number,
  random: number,
  policy = DEFAULT_BACKOFF,
): number | null {
  const next = failedAtMs + retryDelayMs(failures, random, policy);
  return next - firstDueMs > RETRY_FOR_MS ? null : next;
}
