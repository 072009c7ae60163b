import type { Reading, StoredForecast } from './reading.js';
import { type ForecastKind, forecastKindsOf } from './sources.js';
import { PROVISIONAL_METHOD } from './units.js';
import { ownValueIsLifecycle } from './zones.js';

/** The upstream forecasts served as readings: the GB operator's, on its own values only. */
export const SERVED_FORECAST_KIND: ForecastKind = forecastKindsOf('uk-operator').intensity;

/** Whether a zone can have a served forecast: where its own value is an operator's figure. */
export const mayServeForecast = (zone: string): boolean => !ownValueIsLifecycle(zone);

/** Whether a served reading is the provisional one (a forecast standing in for a settled value). */
export const isProvisional = (reading: Pick<Reading, 'method'>): boolean =>
  reading.method === PROVISIONAL_METHOD;

/**
 * The upstream forecast served as a reading (docs/api.md, "Data rules": the GB forecast): the
 * forecast of the zone's latest forecast interval, as last issued, while no published reading
 * exists at or after that interval. At most one per zone; a settled figure replaces it.
 */
export function servedForecast(
  newestPublishedTs: number | undefined,
  forecast: StoredForecast | undefined,
): Reading | undefined {
  if (!forecast) return undefined;
  if (newestPublishedTs !== undefined && newestPublishedTs >= forecast.ts) return undefined;
  return { ts: forecast.ts, value: forecast.value, method: PROVISIONAL_METHOD };
}
