import type { StoredMix, StoredReading } from '../core/reading.js';
import type { ZoneMixes } from '../core/uk-operator.js';
import type { TimeWindow } from '../sources/http.js';
import type { Store } from '../storage/store.js';
import { UPSERT_BATCH_ROWS } from './store-readings.js';

/**
 * Writes the mixes one fetch of a zone's mix feed produced over `window` (GB's generation mix),
 * leaving the intervals' default values alone, and returns how many were written. Revisions
 * replace a stored mix in place; an unchanged mix is not rewritten, so the hourly re-fetch of the
 * trailing window does not churn the store's data version.
 */
export async function storeZoneMixes(
  store: Store,
  zone: string,
  fetched: ZoneMixes,
  window: TimeWindow,
): Promise<number> {
  const stored = new Map(
    (await store.readStored(zone, window.fromTs, window.toTs)).map((row) => [row.ts, row]),
  );
  const changed = fetched.mixes.filter(
    (mix) => mix.ts >= window.fromTs && mix.ts < window.toTs && !isSame(stored.get(mix.ts), mix),
  );
  for (let start = 0; start < changed.length; start += UPSERT_BATCH_ROWS) {
    await store.upsertMixes(changed.slice(start, start + UPSERT_BATCH_ROWS));
  }
  return changed.length;
}

function isSame(stored: StoredReading | undefined, fetched: StoredMix): boolean {
  if (!stored?.mix) return false;
  const storedMix = Object.entries(stored.mix);
  return (
    stored.lifecycle === fetched.lifecycle &&
    stored.direct === fetched.direct &&
    storedMix.length === Object.keys(fetched.mix).length &&
    storedMix.every(([category, share]) => fetched.mix[category] === share)
  );
}
