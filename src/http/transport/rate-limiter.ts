import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';

/** What one request learns from the limiter; it becomes the RateLimit-* headers. */
export interface LimitState {
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until the window resets, at least 1. */
  readonly resetSeconds: number;
  readonly allowed: boolean;
}

export interface RateLimiter {
  /**
   * Counts one request of `key`, weighing `weight` (a costly route more than 1), and says
   * whether it may pass. Never rejects.
   */
  hit(key: string, weight?: number): LimitState | Promise<LimitState>;
}

const WINDOW_MS = 60_000;
/** Keys whose window has ended are swept once this many are held. */
const SWEEP_AT = 10_000;

export function stateOf(limit: number, count: number, resetMs: number): LimitState {
  return {
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(1, Math.ceil(resetMs / 1000)),
    allowed: count <= limit,
  };
}

/**
 * Counts in this process: a one-minute window per client that starts with its first request.
 * Loose by design (decisions.md allows it): a client can get up to twice the limit across a
 * window boundary.
 */
export class LocalRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { endsAt: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {}

  hit(key: string, weight = 1): LimitState {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      if (this.windows.size >= SWEEP_AT) this.sweep(now);
      window = { endsAt: now + WINDOW_MS, count: 0 };
      this.windows.set(key, window);
    }
    window.count += weight;
    return stateOf(this.limit, window.count, window.endsAt - now);
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
  }
}

/**
 * The client address a limit counts against: the socket's peer, or, behind proxies the operator
 * trusts (TRUST_PROXY), the nearest address in X-Forwarded-For that is not a trusted proxy.
 * IPv4-mapped IPv6 addresses count as their IPv4 address.
 */
export function clientAddress(trustProxy: readonly string[]): (request: IncomingMessage) => string {
  const trust = trustProxy.length > 0 ? proxyAddr.compile([...trustProxy]) : undefined;
  return (request) => {
    const address = trust ? proxyAddr(request, trust) : (request.socket.remoteAddress ?? 'unknown');
    return address.startsWith('::ffff:') ? address.slice(7) : address;
  };
}
