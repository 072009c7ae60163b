import type { Basis } from '../core/factors.js';

/**
 * What the HTTP layer (forecast, schedule, compatibility routes, the page) reads of the forecasts:
 * prepared series, recomputed when new data or upstream forecasts arrive, never per request
 * (docs/forecast.md).
 */

/** The basis a forecast is on: a basis, or GB's own operator figure (GB asked without a basis). */
export type ForecastBasis = Basis | 'operator';

/** One zone's forecast on one basis, interval by interval at the zone's resolution. */
export interface ZoneForecast {
  readonly zone: string;
  /** What the response's `basis` echoes. */
  readonly basis: ForecastBasis;
  /** `name@version` of the model that made the value of each interval (the first one's). */
  readonly model: string;
  /** When this forecast was computed, epoch seconds. */
  readonly generatedAt: number;
  /** Start of the first interval forecast: the one after the zone's newest published reading. */
  readonly startTs: number;
  readonly stepSeconds: number;
  /** One per interval from `startTs`; reaches at least 72 hours past `generatedAt`. */
  readonly values: Float64Array;
  readonly p10: Float64Array;
  readonly p90: Float64Array;
}

export interface ForecastBook {
  /**
   * The newest forecast of `zone` on `basis` (undefined: the zone's default value), or null when
   * the zone has too little history to forecast.
   */
  forecast(zone: string, basis: Basis | undefined): ZoneForecast | null;
}
