import type { StoredMix, StoredReading } from '../core/reading.js';
import type { ZoneMixes } from '../core/uk-operator.js';
import type { TimeWindow } from '../sources/http.js';
import type { PendingChunk } from './pending-chunk.js';

/**
 * Adds the mixes one fetch of a zone's mix feed produced over `window` (GB's generation mix) to
 * the `pending` write, leaving the intervals' default values alone, and returns how many. Revisions
 * replace a stored mix in place; an unchanged mix is not rewritten, so the hourly re-fetch of the
 * trailing window does not churn the store's data version.
 */
export async function addZoneMixes(
  pending: PendingChunk,
  zone: string,
  fetched: ZoneMixes,
  window: TimeWindow,
): Promise<number> {
  const stored = new Map(
    (await pending.store.readStored(zone, window.fromTs, window.toTs)).map((row) => [row.ts, row]),
  );
  const changed = fetched.mixes.filter(
    (mix) => mix.ts >= window.fromTs && mix.ts < window.toTs && !isSame(stored.get(mix.ts), mix),
  );
  pending.mixes.push(...changed);
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
