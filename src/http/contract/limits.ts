/**
 * Every limit of the /v1 contract (docs/api.md, extensions.md), spelled once: the query
 * interpreter enforces them, the schemas state them (minimum, maximum, default), the error hints
 * and the index prose quote them. test/contract-conformance.test.ts checks that the interpreter
 * accepts exactly what the schemas state.
 */

import type { ZoneRegistry } from '../../core/zone-registry.js';
import type { StreamLimits } from '../../stream/hub.js';

/** Points of one history or mix body; beyond, it is truncated with a next link. */
export const MAX_POINTS = 5000;

/** The longest window of one export, days. */
export const MAX_EXPORT_DAYS = 400;

/** The default and longest horizon of `/v1/intensity/forecast`, hours (extensions §4). */
export const FORECAST_HORIZON = { default: 48, max: 72 } as const;

/** The default and longest horizon of `/v1/intensity/level`'s forecast part, hours (extensions §11). */
export const LEVEL_HORIZON = { default: 24, max: 72 } as const;

/** The longest window of `/v1/intensity/stats`, days (extensions §12). */
export const MAX_STATS_DAYS = 400;

/** Exports one client IP may have under way at once (extensions §6), on this instance. */
export const MAX_EXPORTS_PER_ADDRESS = 2;
/**
 * Exports under way on this instance, all clients together. Each holds little memory, but
 * costs CPU while its client reads quickly: past this, 503 with Retry-After.
 */
export const MAX_EXPORTS_IN_ALL = 16;

/** The bounds of webhook subscriptions (extensions §13). */
export const SUBSCRIPTION_LIMITS = {
  perAddress: 20,
  /**
   * Per client network, as streams count them (IPv4 /24, IPv6 /64: what one subscriber holds),
   * and at most half of WEBHOOK_MAX: one network never fills the server.
   */
  perNetwork: 100,
  bodyBytes: 16 * 1024,
} as const;

/**
 * Codes one subscription's list may give: each zone served once (`served`: the zones `/v1/zones`
 * lists now; 45 by default, with `ZONES=all` the flow graphs' served nodes too, extensions §16).
 */
export const maxSubscriptionZones = (served: ZoneRegistry): number => served.zones.length;

/** The bounds of `/v1/stream` (extensions §7); STREAM_MAX sets maxInAll. */
export const STREAM_LIMITS: StreamLimits = {
  maxPerAddress: 5,
  maxPerPrefix: 250,
  maxAgeMs: 30 * 60_000,
  maxInAll: 1000,
  heartbeatMs: 15_000,
  maxUnsentBytes: 128 * 1024,
  pollMs: 2000,
};

/** The bounds of `/v1/schedule` (extensions §5). */
export const SCHEDULE_LIMITS = {
  /** Longest job, minutes. */
  maxDurationMinutes: 4320,
  defaultDurationMinutes: 60,
  /** Default deadline after earliest, hours. */
  defaultWindowHours: 24,
  /** The deadline is at most this long after the request time, hours (the forecasts' reach). */
  maxAheadHours: 72,
  /** `deadline - earliest` at most, hours: bounds the work of one request. */
  maxWindowHours: 72,
  maxEnergyKwh: 1e12,
} as const;

/** A limit as the contract's prose writes it: powers of ten as `1e12`, others in digits. */
export const limitText = (limit: number): string =>
  limit >= 1e6 && Number.isInteger(Math.log10(limit)) ? `1e${Math.log10(limit)}` : String(limit);
