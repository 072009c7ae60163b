import type { ZoneReadings } from '../core/method.js';
import type { StoredReading, ZoneQuality } from '../core/reading.js';
import { isInWindow, type TimeWindow } from '../core/time.js';
import type { PendingChunk } from './pending-chunk.js';
import { sameMix } from './store-mixes.js';

/**
 * Adds what one fetch of one zone produced over `window` to the `pending` write, and returns the zone's quality
 * counters: `pointsStored` counts rows written (new or revised), `incompleteHours` the hours of
 * the window that stay incomplete.
 *
 * A fetched reading never replaces a better stored one: an incomplete hour does not unpublish a
 * complete one, and a forecast does not replace a settled figure. A later partial answer of the
 * upstream therefore never loses a published value (decisions.md, "Bad hours"), while complete
 * revisions replace values in place ("Revisions"). Unchanged rows are not rewritten, so the
 * hourly re-fetch of the trailing window does not churn the store's data version.
 *
 * Upstream forecasts fetched with the readings (GB's operator forecast) go to the forecasts,
 * never the readings: which one is served as the GB forecast reading is decided when it is read
 * (src/core/served-forecast.ts).
 */
export async function addZoneReadings(
  pending: PendingChunk,
  zone: string,
  fetched: ZoneReadings,
  window: TimeWindow,
): Promise<ZoneQuality> {
  const stored = await pending.storedIn(zone, window);
  const kept = fetched.readings.filter(
    (reading) => isInWindow(reading.ts, window) && !isDowngrade(stored.get(reading.ts), reading),
  );
  const changed = kept.filter((reading) => !isSame(stored.get(reading.ts), reading));
  pending.readings.push(...changed);
  pending.forecasts.push(
    ...(fetched.forecasts ?? []).filter((forecast) => isInWindow(forecast.ts, window)),
  );

  return {
    ...fetched.quality,
    pointsStored: changed.length,
    incompleteHours: kept.filter((reading) => !reading.complete).length,
  };
}

function isDowngrade(stored: StoredReading | undefined, fetched: StoredReading): boolean {
  return stored !== undefined && stored.complete && !fetched.complete;
}

/**
 * Whether writing `fetched` would change nothing. A reading without a mix leaves the stored mix
 * alone (another feed brings GB's), so only its own value is compared then.
 */
function isSame(stored: StoredReading | undefined, fetched: StoredReading): boolean {
  if (!stored) return false;
  const sameValue =
    stored.value === fetched.value &&
    stored.method === fetched.method &&
    stored.complete === fetched.complete;
  const { mix, lifecycle, direct } = fetched;
  if (!sameValue || mix === null) return sameValue;
  return sameMix(stored, { mix, lifecycle, direct });
}
