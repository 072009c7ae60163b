import type { StoredForecast } from '../core/reading.js';
import { isInWindow, type TimeWindow } from '../core/time.js';
import type { PendingChunk } from './pending-chunk.js';
import { FORECAST_KINDS } from '../core/sources.js';

/**
 * Adds what one fetch of one forecast feed of one zone produced to the `pending` write: to the
 * forecasts, never the readings (a forecast feed has no path to them). Only the zone's own
 * forecasts inside the forecast window, of a known kind and with a finite value, are kept; a repeat of (zone, kind,
 * ts, issuedAt) replaces the stored value (the latest revision). Returns rows added.
 */
export function addZoneForecasts(
  pending: PendingChunk,
  zone: string,
  forecasts: readonly StoredForecast[],
  window: TimeWindow,
): number {
  const kept = forecasts.filter(
    (forecast) =>
      forecast.zone === zone &&
      isInWindow(forecast.ts, window) &&
      FORECAST_KINDS.includes(forecast.kind) &&
      Number.isFinite(forecast.value) &&
      Number.isFinite(forecast.issuedAt),
  );
  pending.forecasts.push(...kept);
  return kept.length;
}
