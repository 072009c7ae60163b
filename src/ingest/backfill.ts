import type { Logger } from 'pino';
import type { Zone } from '../core/zones.js';
import type { Store } from '../storage/store.js';
import { isForecastOutcome, type SourceAdapter } from '../sources/adapter.js';
import { createSourceStop } from './sources.js';
import { floorToHour, HOUR, splitWindow, type TimeWindow } from '../core/time.js';
import { PendingChunk } from './pending-chunk.js';
import { addZoneForecasts } from './store-forecasts.js';
import { addZoneMixes } from './store-mixes.js';
import { addZoneReadings } from './store-readings.js';

/**
 * One resumable unit of a backfill: the zones fetched together over one chunk, or one border of
 * a flow graph (backfill-graph.ts; its zones are then none).
 */
export interface BackfillChunk {
  readonly zones: readonly Zone[];
  readonly window: TimeWindow;
  readonly border?: string;
}

export interface BackfillProgress {
  readonly done: number;
  readonly total: number;
  readonly chunk: BackfillChunk;
  /** The chunk's hours were all stored already, so it was not fetched. */
  readonly skipped: boolean;
  /** Readings and mixes written; for a border, its flows inserted or changed. */
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
  /**
   * Whether the zones' upstream forecasts are fetched too (when absent: yes). Never for the
   * extra nodes of a flow graph, which are not served: their chunks complete without.
   */
  readonly forecasts?: boolean;
}

export interface BackfillResult {
  readonly chunks: number;
  readonly skipped: number;
  readonly pointsStored: number;
  readonly incompleteHours: number;
  /** Upstream forecasts written over the backfilled window (forecast feeds). */
  readonly forecastsStored: number;
  /** Flows of a flow graph's borders inserted or changed (runGraphBackfill). */
  readonly flowsStored?: number;
  readonly errors: readonly string[];
}

/** A backfill that stored nothing, and why. */
export function nothingBackfilled(errors: readonly string[] = []): BackfillResult {
  return { chunks: 0, skipped: 0, pointsStored: 0, incompleteHours: 0, forecastsStored: 0, errors };
}

/** What a backfill loop keeps of its chunks, and whom it tells. */
interface ChunkLedger {
  readonly errors: string[];
  readonly logger: Logger;
  readonly source: string;
  readonly onProgress?: ((progress: BackfillProgress) => void) | undefined;
}

/**
 * Ends a chunk: its errors kept, then either why it gave the source (or its graph) up, logged
 * and kept, or its progress told. Returns whether the backfill stops there.
 */
export function endChunk(
  ledger: ChunkLedger,
  progress: BackfillProgress,
  givenUp: string | undefined,
): boolean {
  ledger.errors.push(...progress.errors);
  if (givenUp !== undefined) {
    ledger.errors.push(givenUp);
    ledger.logger.error({ source: ledger.source }, givenUp);
    return true;
  }
  ledger.onProgress?.(progress);
  return false;
}

/**
 * Fills a source's history over a window, chunk by chunk (each within the upstream's limits).
 * No run deadline (a year of history takes its time), but the source is given up by the same
 * rule as an ingestion run (createSourceStop): run the command again once the upstream is back.
 *
 * Resumable at any window: each chunk's readings, mixes and upstream forecasts are written in
 * one transaction, together with the windows of its zones they complete (`Store.writeChunk`),
 * and a chunk fetches only the part of its window no earlier backfill completed, or nothing
 * (`missingWindow`). A run killed at any point and started again, or started again over a
 * longer window, therefore ends with the same store as one uninterrupted run, fetching only what
 * is missing. A zone's window counts as complete up to its first interval the upstream did not
 * fill (gaps, the present: fetched again on every run), and not at all when one of its feeds
 * failed or the chunk was cut short.
 * Safe beside `serve`: one short write per chunk (SQLite WAL and busy timeout do the rest).
 * The upstream's own forecasts are fetched over each chunk too, as issued (docs/upstreams.md §8):
 * their failures are listed but never give the source up; after the stop rule trips on them, the
 * remaining chunks are fetched without forecasts (and so fetched again by the next run).
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
  const wantsForecasts = options.forecasts ?? true;

  for (const [index, chunk] of chunks.entries()) {
    signal?.throwIfAborted();
    const chunkErrors: string[] = [];
    let chunkPoints = 0;
    let givenUp: string | undefined;
    const missing = await missingWindow(
      store,
      chunk.zones.map((zone) => zone.code),
      chunk.window,
    );
    if (missing === null) {
      skipped += 1;
    } else {
      // Giving the source up or an interruption starts no further zone; the outcomes already
      // at hand (the other zones of a failed EIA query) are still written.
      const noFurtherZone = new AbortController();
      const onAbort = () => noFurtherZone.abort(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();
      const pending = new PendingChunk(store);
      const withForecasts = wantsForecasts && !forecastsGivenUp;
      const answered = new Set<string>();
      const failed = new Set<string>();
      try {
        const limits = { signal: noFurtherZone.signal };
        const forecasts = withForecasts ? { window: missing } : undefined;
        for await (const outcome of adapter.fetch(chunk.zones, missing, limits, forecasts)) {
          switch (outcome.kind) {
            case 'forecasts':
              forecastsStored += addZoneForecasts(
                pending,
                outcome.zone,
                outcome.forecasts,
                missing,
              );
              break;
            case 'forecasts-failed':
              failed.add(outcome.zone);
              chunkErrors.push(
                `${outcome.zone}: forecasts: ${adapter.scrub(outcome.error.message)}`,
              );
              break;
            case 'actuals-failed':
              failed.add(outcome.zone);
              chunkErrors.push(`${outcome.zone}: ${adapter.scrub(outcome.error.message)}`);
              break;
            case 'mixes':
              chunkPoints += await addZoneMixes(pending, outcome.zone, outcome, missing);
              break;
            case 'readings': {
              answered.add(outcome.zone);
              const quality = await addZoneReadings(pending, outcome.zone, outcome, missing);
              chunkPoints += quality.pointsStored;
              incompleteHours += quality.incompleteHours;
              break;
            }
          }
          if (isForecastOutcome(outcome)) {
            const stop = stopsForecasts(outcome);
            if (stop !== null && !forecastsGivenUp) {
              forecastsGivenUp = true;
              chunkErrors.push(`${adapter.source}: forecasts given up: ${stop}`);
            }
            continue;
          }
          const stop = stopsSource(outcome);
          if (stop !== null && givenUp === undefined) {
            givenUp = `${adapter.source} given up at chunk ${index + 1} of ${chunks.length}: ${stop}`;
            noFurtherZone.abort();
          }
        }
        // A chunk is complete with its forecasts, unless none are wanted.
        if ((withForecasts || !wantsForecasts) && !noFurtherZone.signal.aborted) {
          for (const zone of chunk.zones) {
            if (!answered.has(zone.code) || failed.has(zone.code)) continue;
            const toTs = await filledUntil(pending, zone, missing, adapter.mixFeed);
            if (toTs > missing.fromTs) {
              pending.backfilled.push({ zone: zone.code, fromTs: missing.fromTs, toTs });
            }
          }
        }
        await pending.write();
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
    }
    pointsStored += chunkPoints;
    const progress = {
      done: index + 1,
      total: chunks.length,
      chunk,
      skipped: missing === null,
      pointsStored: chunkPoints,
      errors: chunkErrors,
    };
    if (endChunk({ errors, logger, source: adapter.source, onProgress }, progress, givenUp)) break;
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
 * The part of a chunk's window that some zone of it has not had completed by an earlier backfill
 * (its readings, mixes and upstream forecasts written together, `Store.backfilledWindows`; a
 * border's flows, under its key): from the first hour missing to the end of the last, over all
 * its keys. Null when nothing is missing: the chunk is already stored.
 */
export async function missingWindow(
  store: Store,
  keys: readonly string[],
  window: TimeWindow,
): Promise<TimeWindow | null> {
  let fromTs = Infinity;
  let toTs = -Infinity;
  const missing = (gapFrom: number, gapTo: number) => {
    fromTs = Math.min(fromTs, floorToHour(gapFrom));
    toTs = Math.max(toTs, gapTo);
  };
  for (const key of keys) {
    let covered = window.fromTs;
    for (const done of await store.backfilledWindows(key, window.fromTs, window.toTs)) {
      if (done.fromTs > covered) missing(covered, Math.min(done.fromTs, window.toTs));
      covered = Math.max(covered, done.toTs);
    }
    if (covered < window.toTs) missing(covered, window.toTs);
  }
  return fromTs < toTs
    ? { fromTs, toTs: Math.min(window.toTs, floorToHour(toTs - 1) + HOUR) }
    : null;
}

/**
 * Where a zone's intervals stop being filled, from the start of `window` on, once `pending` is
 * written: each interval stored or about to be (complete or not); where the mix is a second
 * feed (GB), complete and with its mix, so that an interval one feed failed on is fetched again.
 */
async function filledUntil(
  pending: PendingChunk,
  zone: Zone,
  window: TimeWindow,
  mixFeed: boolean,
): Promise<number> {
  const stored = await pending.storedIn(zone.code, window);
  const written = new Map(
    pending.readings.filter((row) => row.zone === zone.code).map((row) => [row.ts, row]),
  );
  const mixed = new Set(pending.mixes.filter((row) => row.zone === zone.code).map((row) => row.ts));
  const step = zone.resolutionMin * 60;
  let ts = window.fromTs;
  for (; ts < window.toTs; ts += step) {
    const row = written.get(ts) ?? stored.get(ts);
    if (row === undefined) break;
    if (mixFeed && !(row.complete && (mixed.has(ts) || (stored.get(ts)?.mix ?? null) !== null))) {
      break;
    }
  }
  return ts;
}
