import { FORECAST_KINDS, type StoredForecast } from '../core/reading.js';
import type { TimeWindow } from '../sources/http.js';
import type { Store } from '../storage/store.js';
import { UPSERT_BATCH_ROWS } from './store-readings.js';

/**
 * Writes what one fetch of one forecast feed of one zone produced: to the forecasts, never the
 * readings (a forecast feed has no path to them). Only the zone's own forecasts inside the
 * forecast window, of a known kind and with a finite value, are written; a repeat of (zone, kind,
 * ts, issuedAt) replaces the stored value (the latest revision). Returns rows written.
 */
export async function storeZoneForecasts(
  store: Store,
  zone: string,
  forecasts: readonly StoredForecast[],
  window: TimeWindow,
): Promise<number> {
  const kept = forecasts.filter(
    (forecast) =>
      forecast.zone === zone &&
      forecast.ts >= window.fromTs &&
      forecast.ts < window.toTs &&
      FORECAST_KINDS.includes(forecast.kind) &&
      Number.isFinite(forecast.value) &&
      Number.isFinite(forecast.issuedAt),
  );
  let written = 0;
  for (let start = 0; start < kept.length; start += UPSERT_BATCH_ROWS) {
    written += await store.upsertForecasts(kept.slice(start, start + UPSERT_BATCH_ROWS));
  }
  return written;
}
