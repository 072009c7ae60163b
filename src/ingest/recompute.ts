import { intensityOfMix } from '../core/method.js';
import type { StoredReading } from '../core/reading.js';
import type { Store, StoreKey } from '../storage/store.js';

export interface RecomputeProgress {
  readonly scanned: number;
  readonly changed: number;
}

export interface RecomputeResult extends RecomputeProgress {
  /** Rows whose stored mix could not be read; left as they were. */
  readonly unreadable: readonly string[];
}

/** Rows per page of the scan and per upsert transaction. */
const PAGE_ROWS = 1000;

/**
 * Recomputes every stored computed value from its stored mix with the current factors
 * (src/core/factors.ts), without refetching. Operator figures (GB, no mix) are left alone.
 * Pages through the store by key, so it runs in bounded memory beside `serve`.
 */
export async function recomputeStored(
  store: Store,
  onProgress?: (progress: RecomputeProgress) => void,
): Promise<RecomputeResult> {
  const unreadable: string[] = [];
  let scanned = 0;
  let changed = 0;
  let after: StoreKey | null = null;
  for (;;) {
    const page = await store.scanStored(after, PAGE_ROWS);
    const last = page.at(-1);
    if (!last) break;
    const updates: StoredReading[] = [];
    for (const row of page) {
      if (row.mix === null) continue;
      let value: number | null;
      try {
        value = intensityOfMix(row.mix);
      } catch (error) {
        unreadable.push(`${row.zone} ${row.ts}: ${String(error)}`);
        continue;
      }
      // A mix without generation cannot be published, whatever it was before.
      if (value !== row.value)
        updates.push({ ...row, value, complete: row.complete && value !== null });
    }
    await store.upsertReadings(updates);
    scanned += page.length;
    changed += updates.length;
    after = { zone: last.zone, ts: last.ts };
    onProgress?.({ scanned, changed });
  }
  return { scanned, changed, unreadable };
}
