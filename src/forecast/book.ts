import type { Basis } from '../core/factors.js';
import type { BacktestRun } from '../core/forecast/backtest.js';
import type { ZoneForecast } from '../core/forecast/prepare.js';

/**
 * What the HTTP layer (forecast, schedule, compatibility routes, the page) reads of the forecasts:
 * prepared series, recomputed when new data or upstream forecasts arrive, never per request
 * (docs/forecast.md).
 */

export type { ForecastBasis } from '../core/forecast/backtest.js';
export type { ZoneForecast } from '../core/forecast/prepare.js';

export interface ForecastBook {
  /**
   * The newest forecast of `zone` on `basis` (undefined: the zone's default value), or null when
   * the zone has too little history to forecast.
   */
  forecast(zone: string, basis: Basis | undefined): ZoneForecast | null;
  /** The newest walk-forward backtest behind the forecasts, when there is one. */
  readonly backtest?: BacktestRun | null;
  readonly ready?: boolean; // false while the first forecasts are prepared after start
  /** True while forecasts or a backtest are being computed (off the serving thread). */
  readonly computing?: boolean;
}
