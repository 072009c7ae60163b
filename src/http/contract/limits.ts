/**
 * Every limit of the /v1 contract (docs/api.md, extensions.md), spelled once: the query
 * interpreter enforces them, the schemas state them (minimum, maximum, default), the error hints
 * and the index prose quote them. test/contract-conformance.test.ts checks that the interpreter
 * accepts exactly what the schemas state.
 */

/** Points of one history or mix body; beyond, it is truncated with a next link. */
export const MAX_POINTS = 5000;

/** The longest window of one export, days. */
export const MAX_EXPORT_DAYS = 400;

/** The default and longest horizon of `/v1/intensity/forecast`, hours (extensions §4). */
export const FORECAST_HORIZON = { default: 48, max: 72 } as const;

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
