import { intensityOfMix } from '../core/method.js';
import { ownValueIsLifecycle } from '../core/zones.js';
import type { Mix, StoredReading } from '../core/reading.js';
import { type Store, storedPages } from '../storage/store.js';

export interface RecomputeProgress {
  readonly scanned: number;
  readonly changed: number;
}

export interface RecomputeResult extends RecomputeProgress {
  /** Rows whose stored mix could not be read; left as they were. */
  readonly unreadable: readonly string[];
}

export interface RecomputeOptions {
  /**
   * Leave every default value (and whether it is published) as stored, and compute only the
   * values on each basis: what a schema upgrade adds, without re-deciding what was served.
   */
  readonly keepDefaultValues?: boolean;
}

/** Rows per page of the scan and per upsert transaction. */
const PAGE_ROWS = 1000;

/**
 * Recomputes every stored value on both bases from its stored mix with the current factors
 * (src/core/factors.ts), without refetching: the default value of computed rows (which is their
 * lifecycle value) and the lifecycle and direct values of every mix. Operator figures (GB's
 * default values) are left alone. Pages through the store by key, so it runs in bounded memory
 * beside `serve`. Clears the store's `recomputeNeeded` mark when it has been through every row.
 */
export async function recomputeStored(
  store: Store,
  onProgress?: (progress: RecomputeProgress) => void,
  options: RecomputeOptions = {},
): Promise<RecomputeResult> {
  const unreadable: string[] = [];
  let scanned = 0;
  let changed = 0;
  for await (const page of storedPages(store, PAGE_ROWS)) {
    const updates: StoredReading[] = [];
    for (const row of page) {
      if (row.mix === null) continue;
      let recomputed: StoredReading;
      try {
        recomputed = recomputeRow(row, row.mix, options.keepDefaultValues ?? false);
      } catch (error) {
        unreadable.push(`${row.zone} ${row.ts}: ${String(error)}`);
        continue;
      }
      const same =
        recomputed.value === row.value &&
        recomputed.complete === row.complete &&
        recomputed.lifecycle === row.lifecycle &&
        recomputed.direct === row.direct;
      if (!same) updates.push(recomputed);
    }
    await store.upsertReadings(updates);
    scanned += page.length;
    changed += updates.length;
    onProgress?.({ scanned, changed });
  }
  await store.recomputeDone();
  return { scanned, changed, unreadable };
}

/** A stored row's values from its mix: a computed zone's own value is its lifecycle value. */
function recomputeRow(row: StoredReading, mix: Mix, keepDefaultValues: boolean): StoredReading {
  const lifecycle = intensityOfMix(mix, 'lifecycle');
  const direct = intensityOfMix(mix, 'direct');
  if (!ownValueIsLifecycle(row.zone)) {
    // A mix beside an operator figure (GB): published on each basis when it has generation.
    return { ...row, lifecycle, direct: lifecycle === null ? null : direct };
  }
  if (keepDefaultValues) {
    return {
      ...row,
      lifecycle: row.complete ? row.value : null,
      direct: row.complete ? direct : null,
    };
  }
  // A mix without generation cannot be published, whatever it was before.
  const complete = row.complete && lifecycle !== null;
  return {
    ...row,
    value: lifecycle,
    complete,
    lifecycle: complete ? lifecycle : null,
    direct: complete ? direct : null,
  };
}
