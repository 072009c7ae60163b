import type { Logger } from 'pino';
import type { Zone } from '../core/zones.js';
import { splitWindow, type TimeWindow } from '../sources/http.js';
import type { Store } from '../storage/store.js';
import { isForecastOutcome, type SourceAdapter } from '../sources/adapter.js';
import { createSourceStop } from './sources.js';
import { storeZoneForecasts } from './store-forecasts.js';
import { storeZoneMixes } from './store-mixes.js';
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
  /** Upstream forecasts written over the backfilled window (forecast feeds). */
  readonly forecastsStored: number;
  readonly errors: readonly string[];
}

/**
 * Fills a source's history over a window, chunk by chunk (each within the upstream's limits).
 * No run deadline (a year of history takes its time), but the source is given up by the same
 * rule as an ingestion run (createSourceStop): run the command again once the upstream is back.
 * Resumable: a chunk whose intervals are all stored already is skipped, so a run interrupted at
 * any point (even killed) and started again ends with the same store as an uninterrupted one;
 * a chunk cut short is fetched again and upserted in place. Chunks the upstream cannot fill
 * completely (gaps, the present) are fetched again on every run.
 * Safe beside `serve`: writes go in short batches (SQLite WAL and busy timeout do the rest).
 * The upstream's own forecasts are fetched over each chunk too, as issued (docs/upstreams.md §8):
 * their failures are listed but never give the source up; after the stop rule trips on them, the
 * remaining chunks are fetched without forecasts. A skipped chunk is skipped with its forecasts.
 */
export async function runBackfill(options: BackfillOptions): Promise<BackfillResult> {
  const { store, adapter, logger, onProgress, signal } = options;
  const chunks = planBackfill(adapter, options.zones ?? adapter.zones, options.window);
  const stopsSource = createSourceStop();
  const errors: string[] = [];
  let skipped = 0;
  let pointsStored = 0;
  let incompleteHours = 0;
  let forecastsStored = 0;
  const stopsForecasts = createSourceStop();
  let forecastsGivenUp = false;

  // Giving the source up starts no further zone; the outcomes already at hand (the other zones
  // of a failed EIA query) are still taken.
  const noFurtherZone = new AbortController();
  const onAbort = () => noFurtherZone.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  try {
    for (const [index, chunk] of chunks.entries()) {
      signal?.throwIfAborted();
      const chunkErrors: string[] = [];
      let chunkPoints = 0;
      let givenUp: string | undefined;
      const alreadyStored = await isStored(store, adapter, chunk);
      if (alreadyStored) {
        skipped += 1;
      } else {
        const limits = { signal: noFurtherZone.signal };
        const forecasts = forecastsGivenUp ? undefined : { window: chunk.window };
        for await (const outcome of adapter.fetch(chunk.zones, chunk.window, limits, forecasts)) {
          if (isForecastOutcome(outcome)) {
            if ('error' in outcome) {
              chunkErrors.push(
                `${outcome.zone}: forecasts: ${adapter.scrub(outcome.error.message)}`,
              );
            } else if ('forecasts' in outcome && !('readings' in outcome)) {
              forecastsStored += await storeZoneForecasts(
                store,
                outcome.zone,
                outcome.forecasts,
                chunk.window,
              );
            }
            const stop = stopsForecasts(outcome);
            if (stop !== null && !forecastsGivenUp) {
              forecastsGivenUp = true;
              chunkErrors.push(`${adapter.source}: forecasts given up: ${stop}`);
            }
            continue;
          }
          if ('error' in outcome) {
            chunkErrors.push(`${outcome.zone}: ${adapter.scrub(outcome.error.message)}`);
          } else if ('mixes' in outcome) {
            chunkPoints += await storeZoneMixes(store, outcome.zone, outcome, chunk.window);
          } else if ('readings' in outcome) {
            const quality = await storeZoneReadings(store, outcome.zone, outcome, chunk.window);
            chunkPoints += quality.pointsStored;
            incompleteHours += quality.incompleteHours;
          }
          const stop = stopsSource(outcome);
          if (stop !== null && givenUp === undefined) {
            givenUp = `${adapter.source} given up at chunk ${index + 1} of ${chunks.length}: ${stop}`;
            noFurtherZone.abort();
          }
        }
      }
      pointsStored += chunkPoints;
      errors.push(...chunkErrors);
      if (givenUp !== undefined) {
        errors.push(givenUp);
        logger.error({ source: adapter.source }, givenUp);
        break;
      }
      onProgress?.({
        done: index + 1,
        total: chunks.length,
        chunk,
        skipped: alreadyStored,
        pointsStored: chunkPoints,
        errors: chunkErrors,
      });
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  return { chunks: chunks.length, skipped, pointsStored, incompleteHours, forecastsStored, errors };
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

/**
 * Every interval of every zone of the chunk is stored (complete or not). Where the mix is a
 * second feed (GB), an interval counts once both feeds wrote it: its default value (a settled
 * operator figure) and its mix, so that a chunk one feed failed on is fetched again.
 */
async function isStored(
  store: Store,
  adapter: SourceAdapter,
  { zones, window }: BackfillChunk,
): Promise<boolean> {
  for (const zone of zones) {
    const expected = (window.toTs - window.fromTs) / (zone.resolutionMin * 60);
    const stored = await store.readStored(zone.code, window.fromTs, window.toTs);
    const filled = adapter.mixFeed
      ? stored.filter((row) => row.complete && row.mix !== null)
      : stored;
    if (filled.length < expected) return false;
  }
  return true;
}
