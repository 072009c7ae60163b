import { TLSSocket } from 'node:tls';
import type { Redis, RedisOptions } from 'ioredis';
import { LocalRateLimiter, type LimitState, type RateLimiter, stateOf } from './rate-limiter.js';

/**
 * The rate limit counted in Redis, so that every instance of a deployment shares one count per
 * client, built so that a Redis that hangs (a partition: packets dropped, nothing refused) costs
 * requests nothing:
 * - a hit waits for Redis a few of its usual round trips (`rttFactor` times the smoothed round
 *   trip, at least `minBudgetMs`, at most `budgetMs`): with Redis on the same network that is
 *   tens of ms, so the hits under way when a partition starts wait that long and no more. The
 *   first hit that waits it out sends this instance to counting locally, and every hit still
 *   waiting is answered locally at once. An answer that arrived while the loop was held is read
 *   before the wait is judged over, so a held loop is not taken for a partition;
 * - the connection that stalled is reset then (RST) and never used again: what it still held
 *   unsent is discarded rather than delivered when the route heals, and a connection that sat
 *   out a partition can stay slow after it (TCP's retransmission timer backs off while packets
 *   are dropped; later commands queue behind the stalled ones). ioredis connects afresh;
 * - while Redis is away, no hit is sent to it (nothing piles up in a queue or a socket buffer):
 *   every `probeMs` a PING on the new connection asks whether it is back (a PING unanswered
 *   within `budgetMs` resets that connection too). Once one is answered, a second PING measures
 *   the round trip afresh: the first one's may include the wait for the route to heal, and
 *   samples from before the partition say nothing of the Redis that is back (slower, perhaps);
 * - an increment that reaches Redis later than `staleMs` after it was sent (held somewhere on
 *   the route, delivered when the partition heals) is not counted: the script compares Redis's
 *   clock with the deadline the hit carries, on Redis's clock as last measured.
 * The connection is opened with `REDIS_LIMITER_OPTIONS`.
 */

/**
 * The options of the limiter's ioredis connection: no offline queue and no resending on a new
 * connection (a command that missed its wait is never sent again), no ready check or client
 * info before the first command (the probe's PING is the check), short timeouts, and keep-alive,
 * so that a peer gone without a word is noticed by TCP as well.
 */
export const REDIS_LIMITER_OPTIONS: RedisOptions = {
  connectTimeout: 1000,
  commandTimeout: 500,
  maxRetriesPerRequest: 1,
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
  enableReadyCheck: false,
  disableClientInfo: true,
  keepAlive: 10_000,
  // Reconnect soon: while it is away, each probe wants a connection to ask on.
  retryStrategy: (times) => Math.min(times * 100, 1000),
};

export interface RedisLimiterTiming {
  /** The longest a hit waits for Redis before it is counted locally (also before any answer). */
  readonly budgetMs: number;
  /** The shortest: a Redis that answers in well under a ms still gets this long. */
  readonly minBudgetMs: number;
  /** How many smoothed round trips a hit waits, between the two. */
  readonly rttFactor: number;
  /** How often a PING asks, while Redis is away, whether it is back. */
  readonly probeMs: number;
  /** An increment older than this when Redis runs it is dropped. */
  readonly staleMs: number;
}

export const DEFAULT_REDIS_LIMITER_TIMING: RedisLimiterTiming = {
  budgetMs: 500,
  minBudgetMs: 20,
  rttFactor: 10,
  probeMs: 1000,
  staleMs: 1000,
};

const WINDOW_MS = 60_000;
/** The weight of the newest round trip in the smoothed one. */
const RTT_SMOOTHING = 0.2;

// INCRBY the weight (ARGV[3]) and, on the first hit of a window, its expiry, in one round trip
// (atomic on the server); unless the hit comes after its deadline (ARGV[2], ms on Redis's clock;
// 0: none). Returns the count (-1: stale, not counted), the window's remaining ms and Redis's
// clock in ms.
const HIT_SCRIPT = `
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local deadline = tonumber(ARGV[2])
  if deadline > 0 and now > deadline then return {-1, 0, now} end
  local count = redis.call('INCRBY', KEYS[1], ARGV[3])
  if count == tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
  return {count, redis.call('PTTL', KEYS[1]), now}`;

/** Rejected when Redis did not answer in time, or went away meanwhile. */
class RedisAway extends Error {}

export class RedisRateLimiter implements RateLimiter {
  private readonly fallback: LocalRateLimiter;
  private away = false;
  /** Hits waiting for Redis: answered locally at once when it goes away. */
  private readonly waiting = new Set<(error: RedisAway) => void>();
  /** Redis's clock minus ours, in ms, as last measured; undefined before the first answer. */
  private offset: number | undefined;
  /** A hit's round trip to Redis, smoothed, in ms; undefined before the first answer. */
  private roundTripMs: number | undefined;
  private probe: NodeJS.Timeout | undefined;
  /** A probe is under way (it can take longer than `probeMs`). */
  private asking = false;

  constructor(
    private readonly redis: Redis,
    private readonly limit: number,
    private readonly prefix: string,
    private readonly timing: RedisLimiterTiming = DEFAULT_REDIS_LIMITER_TIMING,
    private readonly now: () => number = Date.now,
  ) {
    this.fallback = new LocalRateLimiter(limit, now);
  }

  /** Whether hits are counted locally now (Redis away). */
  get counting(): 'redis' | 'local' {
    return this.away ? 'local' : 'redis';
  }

  async hit(key: string, weight = 1): Promise<LimitState> {
    if (this.away) return this.fallback.hit(key, weight);
    const sentAt = this.now();
    const deadline = this.offset === undefined ? 0 : sentAt + this.offset + this.timing.staleMs;
    try {
      const [count, ttl, redisNow] = (await this.answered(
        this.redis.eval(HIT_SCRIPT, 1, `${this.prefix}${key}`, WINDOW_MS, deadline, weight),
      )) as [number, number, number];
      const answeredAt = this.now();
      this.offset = redisNow - (sentAt + answeredAt) / 2;
      this.measured(answeredAt - sentAt);
      if (count < 0) return this.fallback.hit(key, weight);
      return stateOf(this.limit, count, ttl > 0 ? ttl : WINDOW_MS);
    } catch {
      this.goAway();
      return this.fallback.hit(key, weight);
    }
  }

  /** Stops probing (the app closes). */
  stop(): void {
    clearInterval(this.probe);
  }

  private measured(roundTrip: number): void {
    this.roundTripMs =
      this.roundTripMs === undefined
        ? roundTrip
        : this.roundTripMs + RTT_SMOOTHING * (roundTrip - this.roundTripMs);
  }

  /** How long a hit waits for Redis now. */
  private waitMs(): number {
    const { budgetMs, minBudgetMs, rttFactor } = this.timing;
    if (this.roundTripMs === undefined) return budgetMs;
    return Math.min(budgetMs, Math.max(minBudgetMs, rttFactor * this.roundTripMs));
  }

  /** `command`'s answer, or RedisAway after `waitMs` or when Redis goes away meanwhile. */
  private answered<T>(command: Promise<T>, waitMs = this.waitMs()): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const settle = () => {
        settled = true;
        clearTimeout(timer);
        this.waiting.delete(reject);
      };
      // Timers run before I/O in a turn of the loop: after a held loop the answer may be
      // waiting unread. setImmediate runs after the I/O of this turn, which reads it first.
      const timer = setTimeout(
        () =>
          setImmediate(() => {
            if (settled) return;
            settle();
            reject(new RedisAway());
          }),
        waitMs,
      );
      this.waiting.add(reject);
      command.then(
        (value) => {
          settle();
          resolve(value);
        },
        (error: unknown) => {
          settle();
          reject(error instanceof Error ? error : new RedisAway());
        },
      );
    });
  }

  private goAway(): void {
    if (this.away) return;
    this.away = true;
    for (const reject of this.waiting) reject(new RedisAway());
    this.waiting.clear();
    this.resetConnection();
    this.probe = setInterval(() => void this.askWhetherBack(), this.timing.probeMs);
    this.probe.unref();
  }

  /**
   * One probe: on a connection opened since Redis went away (none yet: the next probe asks). No
   * request waits on it, so it waits the longest: a Redis slower now than before still comes back.
   */
  private async askWhetherBack(): Promise<void> {
    if (this.asking || this.redis.status !== 'ready') return;
    this.asking = true;
    try {
      await this.answered(this.redis.ping(), this.timing.budgetMs);
      const sentAt = this.now();
      await this.answered(this.redis.ping(), this.timing.budgetMs);
      this.roundTripMs = this.now() - sentAt;
      this.away = false;
      clearInterval(this.probe);
    } catch {
      this.resetConnection();
    } finally {
      this.asking = false;
    }
  }

  /**
   * Resets the connection (RST): what the socket holds unsent is discarded, not delivered when
   * the route heals. ioredis then connects afresh (`retryStrategy`).
   */
  private resetConnection(): void {
    if (this.redis.status !== 'ready') return;
    const { stream } = this.redis;
    // A TLS socket cannot send a bare RST; closing it leaves the unsent part to the deadline.
    if (stream instanceof TLSSocket) stream.destroy();
    else stream.resetAndDestroy();
  }
}
