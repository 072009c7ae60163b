import type { StoredReading, ZoneQuality } from '../core/reading.js';
import type { TimeWindow } from '../sources/http.js';
import type { Store } from '../storage/store.js';

/** Rows per upsert transaction: short write locks, so `serve` keeps reading beside a backfill. */
export const UPSERT_BATCH_ROWS = 1000;

const FORECAST = 'upstream:uk-operator:forecast';

/**
 * Writes what one fetch of one zone produced over `window`, and returns the zone's quality
 * counters: `pointsStored` counts rows written (new or revised), `incompleteHours` the hours of
 * the window that stay incomplete.
 *
 * A fetched reading never replaces a better stored one: an incomplete hour does not unpublish a
 * complete one, and a forecast does not replace a settled figure. A later partial answer of the
 * upstream therefore never loses a published value (decisions.md, "Bad hours"), while complete
 * revisions replace values in place ("Revisions"). Unchanged rows are not rewritten, so the
 * hourly re-fetch of the trailing window does not churn the store's data version.
 *
 * GB keeps at most one forecast (decisions.md, "GB forecast"): the one this fetch produced, or
 * the stored one as long as no later half-hour is settled.
 */
export async function storeZoneReadings(
  store: Store,
  zone: string,
  fetched: { readonly readings: readonly StoredReading[]; readonly quality: ZoneQuality },
  window: TimeWindow,
): Promise<ZoneQuality> {
  const stored = new Map(
    (await store.readStored(zone, window.fromTs, window.toTs)).map((row) => [row.ts, row]),
  );
  const kept = fetched.readings.filter(
    (reading) =>
      reading.ts >= window.fromTs &&
      reading.ts < window.toTs &&
      !isDowngrade(stored.get(reading.ts), reading),
  );
  const changed = kept.filter((reading) => !isSame(stored.get(reading.ts), reading));
  for (let start = 0; start < changed.length; start += UPSERT_BATCH_ROWS) {
    await store.upsertReadings(changed.slice(start, start + UPSERT_BATCH_ROWS));
  }

  const forecast = kept.findLast((reading) => reading.method === FORECAST);
  if (forecast) {
    await store.deleteForecastsExcept(zone, forecast.ts);
  } else {
    // A forecast is obsolete once a later half-hour is settled; a reply that stops short of
    // the present (lagging, or a backfill) leaves the live forecast alone.
    const newestSettled = Math.max(
      -Infinity,
      ...kept.filter((reading) => reading.method !== FORECAST).map((reading) => reading.ts),
    );
    const storedForecasts = [...stored.values()].filter((row) => row.method === FORECAST);
    if (storedForecasts.some((row) => row.ts < newestSettled)) {
      const live = storedForecasts.filter((row) => row.ts > newestSettled).at(-1);
      await store.deleteForecastsExcept(zone, live?.ts ?? null);
    }
  }

  return {
    ...fetched.quality,
    pointsStored: changed.length,
    incompleteHours: kept.filter((reading) => !reading.complete).length,
  };
}

function isDowngrade(stored: StoredReading | undefined, fetched: StoredReading): boolean {
  if (!stored) return false;
  if (stored.complete && !fetched.complete) return true;
  return stored.method !== FORECAST && fetched.method === FORECAST;
}

function isSame(stored: StoredReading | undefined, fetched: StoredReading): boolean {
  if (!stored) return false;
  const storedMix = Object.entries(stored.mix ?? {});
  return (
    stored.value === fetched.value &&
    stored.method === fetched.method &&
    stored.complete === fetched.complete &&
    (stored.mix === null) === (fetched.mix === null) &&
    storedMix.length === Object.keys(fetched.mix ?? {}).length &&
    storedMix.every(([category, mwh]) => fetched.mix?.[category] === mwh)
  );
}
