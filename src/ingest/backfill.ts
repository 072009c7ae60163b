import type { Logger } from 'pino';
import type { Zone } from '../core/zones.js';
import { splitWindow, type TimeWindow } from '../sources/http.js';
import type { Store } from '../storage/store.js';
import { type SourceAdapter, stopsSource } from './sources.js';
import { storeZoneReadings } from './store-readings.js';

/** One resumable unit of a backfill: the zones fetched together over one chunk. */
export interface BackfillChunk {
  readonly zones: readonly Zone[];
  readonly window: TimeWindow;
}

export interface BackfillProgress {
  readonly done: number;
  readonly total: number;
  readonly chunk: BackfillChunk;
  /** The chunk's hours were all stored already, so it was not fetched. */
  readonly skipped: boolean;
  readonly pointsStored: number;
  readonly errors: readonly string[];
}

export interface BackfillOptions {
  readonly store: Store;
  readonly adapter: SourceAdapter;
  readonly logger: Logger;
  /** A subset of the adapter's zones; all of them when absent. */
  readonly zones?: readonly Zone[];
  /** Whole hours. */
  readonly window: TimeWindow;
  readonly onProgress?: (progress: BackfillProgress) => void;
  readonly signal?: AbortSignal;
}

export interface BackfillResult {
  readonly chunks: number;
  readonly skipped: number;
  readonly pointsStored: number;
  readonly incompleteHours: number;
  readonly errors: readonly string[];
}

/**
 * Fills a source's history over a window, chunk by chunk (each within the upstream's limits).
 * Resumable: a chunk whose intervals are all stored already is skipped, so a run interrupted at
 * any point (even killed) and started again ends with the same store as an uninterrupted one;
 * a chunk cut short is fetched again and upserted in place. Chunks the upstream cannot fill
 * completely (gaps, the present) are fetched again on every run.
 * Safe beside `serve`: writes go in short batches (SQLite WAL and busy timeout do the rest).
 */
export async function runBackfill(options: BackfillOptions): Promise<BackfillResult> {
  const { store, adapter, logger, onProgress, signal } = options;
  const chunks = planBackfill(adapter, options.zones ?? adapter.zones, options.window);
  const errors: string[] = [];
  let skipped = 0;
  let pointsStored = 0;
  let incompleteHours = 0;

  for (const [index, chunk] of chunks.entries()) {
    signal?.throwIfAborted();
    const chunkErrors: string[] = [];
    let chunkPoints = 0;
    const alreadyStored = await isStored(store, chunk);
    if (alreadyStored) {
      skipped += 1;
    } else {
      for await (const outcome of adapter.fetch(chunk.zones, chunk.window, signal)) {
        if ('error' in outcome) {
          chunkErrors.push(`${outcome.zone}: ${outcome.error.message}`);
          if (stopsSource(outcome.error)) {
            errors.push(...chunkErrors);
            logger.error({ source: adapter.source }, outcome.error.message);
            return { chunks: chunks.length, skipped, pointsStored, incompleteHours, errors };
          }
          continue;
        }
        const quality = await storeZoneReadings(store, outcome.zone, outcome, chunk.window);
        chunkPoints += quality.pointsStored;
        incompleteHours += quality.incompleteHours;
      }
    }
    pointsStored += chunkPoints;
    errors.push(...chunkErrors);
    onProgress?.({
      done: index + 1,
      total: chunks.length,
      chunk,
      skipped: alreadyStored,
      pointsStored: chunkPoints,
      errors: chunkErrors,
    });
  }
  return { chunks: chunks.length, skipped, pointsStored, incompleteHours, errors };
}

/** Zone by zone, oldest chunk first; zones that share requests are fetched together. */
export function planBackfill(
  adapter: SourceAdapter,
  zones: readonly Zone[],
  window: TimeWindow,
): BackfillChunk[] {
  const windows = splitWindow(window, adapter.backfillChunkSeconds);
  if (adapter.zonesShareRequests) return windows.map((piece) => ({ zones, window: piece }));
  return zones.flatMap((zone) => windows.map((piece) => ({ zones: [zone], window: piece })));
}

/** Every interval of every zone of the chunk is stored (complete or not). */
async function isStored(store: Store, { zones, window }: BackfillChunk): Promise<boolean> {
  for (const zone of zones) {
    const expected = (window.toTs - window.fromTs) / (zone.resolutionMin * 60);
    const stored = await store.readStored(zone.code, window.fromTs, window.toTs);
    if (stored.length < expected) return false;
  }
  return true;
}
