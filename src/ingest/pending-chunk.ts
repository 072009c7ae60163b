import type { StoredForecast, StoredMix, StoredReading } from '../core/reading.js';
import type { TimeWindow } from '../core/time.js';
import type { ChunkWrite, Store, ZoneWindow } from '../storage/store.js';

/**
 * What one fetch (a backfill chunk, a zone of an ingestion run) is to write, gathered feed by
 * feed and written in one transaction by `write`: a process killed at any point leaves each
 * fetch written whole or not at all. Reads go to `store`, which does not hold these rows yet.
 */
export class PendingChunk implements ChunkWrite {
  readings: StoredReading[] = [];
  mixes: StoredMix[] = [];
  forecasts: StoredForecast[] = [];
  backfilled: ZoneWindow[] = [];

  constructor(readonly store: Store) {}

  /** What `store` holds of `zone` over `window` (none of this chunk's rows yet), by interval start. */
  async storedIn(zone: string, window: TimeWindow): Promise<Map<number, StoredReading>> {
    const rows = await this.store.readStored(zone, window.fromTs, window.toTs);
    return new Map(rows.map((row) => [row.ts, row]));
  }

  /** Writes what was gathered, in one transaction, and starts over empty. */
  async write(): Promise<void> {
    const { readings, mixes, forecasts, backfilled } = this;
    this.readings = [];
    this.mixes = [];
    this.forecasts = [];
    this.backfilled = [];
    await this.store.writeChunk({ readings, mixes, forecasts, backfilled });
  }
}
