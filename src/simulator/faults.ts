import { textReply, type SourceReply } from './reply.js';
import { SIMULATED_UPSTREAMS } from './upstreams.js';
import { SOURCES, type SourceId } from '../core/sources.js';

/**
 * Failures the simulator can inject per upstream, the ones ingestion must survive: gateway
 * errors, rate limiting, slowness, hanging, bodies cut off or garbled, an HTML page with 200,
 * and valid-but-empty answers.
 */

export const FAULT_KINDS = [
  'server-error',
  'rate-limited',
  'slow',
  'hang',
  'truncated',
  'malformed',
  'html-page',
  'empty',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Which requests of a source a fault hits: the actuals, the forecast feeds, or (absent) both. */
const FAULT_FEEDS = ['actuals', 'forecasts'] as const;
export type FaultFeed = (typeof FAULT_FEEDS)[number];

export interface FaultSpec {
  readonly source: SourceId;
  readonly fault: FaultKind;
  /** Only the requests of that feed (each upstream's `feedOf`); every request while absent. */
  readonly feed?: FaultFeed;
  /** Only the next `count` requests to that source; every request while absent. */
  readonly count?: number;
  /** server-error: the HTTP status, 500-599 (default 503). */
  readonly status?: number;
  /** rate-limited: the Retry-After header in seconds (default 60). */
  readonly retryAfterSeconds?: number;
  /** slow: how long the normal reply is held back (default 3000 ms). */
  readonly delayMs?: number;
}

export interface ActiveFault extends FaultSpec {
  /** Requests still to be hit; null while unlimited. */
  readonly remaining: number | null;
}

/** Checks a fault from the control endpoint; returns the problem as a message. */
export function parseFaultSpec(input: unknown): FaultSpec | string {
  if (typeof input !== 'object' || input === null) return 'body must be a JSON object';
  const spec = input as Record<string, unknown>;
  if (!SOURCES.includes(spec.source as SourceId))
    return `source must be one of ${SOURCES.join(', ')}`;
  if (!FAULT_KINDS.includes(spec.fault as FaultKind)) {
    return `fault must be one of ${FAULT_KINDS.join(', ')}`;
  }
  if (spec.feed !== undefined && !FAULT_FEEDS.includes(spec.feed as FaultFeed)) {
    return `feed must be one of ${FAULT_FEEDS.join(', ')}`;
  }
  const limits: [string, number, number][] = [
    ['count', 1, 1e9],
    ['status', 500, 599],
    ['retryAfterSeconds', 0, 86_400],
    ['delayMs', 0, 600_000],
  ];
  for (const [name, min, max] of limits) {
    const value = spec[name];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) {
      return `${name} must be a whole number from ${min} to ${max}`;
    }
  }
  return spec as unknown as FaultSpec;
}

/**
 * The active faults: one per source and feed (or per source for both feeds), used up request by
 * request when it has a count. A fault of one feed wins over one of both.
 */
export class FaultBoard {
  private readonly active = new Map<string, ActiveFault>();

  set(spec: FaultSpec): void {
    this.active.set(keyOf(spec.source, spec.feed), { ...spec, remaining: spec.count ?? null });
  }

  clear(source?: SourceId): void {
    if (source === undefined) this.active.clear();
    else for (const feed of [undefined, ...FAULT_FEEDS]) this.active.delete(keyOf(source, feed));
  }

  /** The fault that hits the request of `feed` now arriving at `source`, if any. */
  take(source: SourceId, feed: FaultFeed): ActiveFault | undefined {
    const key = [keyOf(source, feed), keyOf(source, undefined)].find((each) =>
      this.active.has(each),
    );
    const fault = key === undefined ? undefined : this.active.get(key);
    if (key === undefined || !fault) return undefined;
    if (fault.remaining !== null) {
      if (fault.remaining <= 1) this.active.delete(key);
      else this.active.set(key, { ...fault, remaining: fault.remaining - 1 });
    }
    return fault;
  }

  list(): ActiveFault[] {
    return [...this.active.values()];
  }
}

function keyOf(source: SourceId, feed: FaultFeed | undefined): string {
  return `${source} ${feed ?? '*'}`;
}

/** The reply of the faults that replace the upstream's answer outright. */
export function failureReply(fault: FaultSpec): SourceReply {
  switch (fault.fault) {
    case 'rate-limited': {
      const reply = SIMULATED_UPSTREAMS[fault.source].rateLimited();
      const retryAfter = String(fault.retryAfterSeconds ?? 60);
      return { ...reply, headers: { ...reply.headers, 'retry-after': retryAfter } };
    }
    case 'html-page':
      // What a CDN or maintenance proxy serves: a page, with 200.
      return textReply(
        200,
        'text/html; charset=utf-8',
        '<!DOCTYPE html>\n<html><head><title>Scheduled maintenance</title></head>' +
          '<body><h1>We will be back soon</h1><p>The service is undergoing maintenance.</p></body></html>\n',
      );
    default: {
      const status = fault.status ?? 503;
      return textReply(
        status,
        'text/html',
        `<html><head><title>${status} Error</title></head><body><h1>${status} Error</h1></body></html>\n`,
      );
    }
  }
}
