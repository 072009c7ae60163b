import type { StoredMix, StoredReading } from '../core/reading.js';
import type { ZoneMixes } from '../core/uk-operator.js';
import { isInWindow, type TimeWindow } from '../core/time.js';
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
  const stored = await pending.storedIn(zone, window);
  const changed = fetched.mixes.filter(
    (mix) => isInWindow(mix.ts, window) && !sameMix(stored.get(mix.ts), mix),
  );
  pending.mixes.push(...changed);
  return changed.length;
}

/** Whether `stored` holds `fetched`'s mix already, with the same values on both bases. */
export function sameMix(
  stored: StoredReading | undefined,
  fetched: Pick<StoredMix, 'mix' | 'lifecycle' | 'direct'>,
): boolean {
  if (!stored?.mix) return false;
  const storedMix = Object.entries(stored.mix);
  return (
    stored.lifecycle === fetched.lifecycle &&
    stored.direct === fetched.direct &&
    storedMix.length === Object.keys(fetched.mix).length &&
    storedMix.every(([category, share]) => fetched.mix[category] === share)
  );
}
