import type { ConsumptionMixPoint } from '../core/consumption/series-row.js';
import type { Basis } from '../core/factors.js';
import type { FlowGraphId } from '../core/flows.js';
import type { Reading, ZoneReading } from '../core/reading.js';
import type { ChunkWrite, ConsumptionWrite, Store } from './store.js';

/**
 * A saved backtest state as both drivers bind a BLOB or bytea: a Buffer, here a view of the same
 * bytes rather than a copy (a zone-basis's state is a megabyte or so).
 */
export const backtestStateParam = (state: Uint8Array): Buffer =>
  Buffer.from(state.buffer, state.byteOffset, state.byteLength);

/** Answers now (SQLite) or later (PostgreSQL). */
type Answer<T> = T | Promise<T>;

/** The consumption series of one backend (extensions §15); the store delegates to it. */
export interface ConsumptionTable {
  /** Replaces the rows of the write's hours in one write transaction; returns rows changed. */
  replace(graph: FlowGraphId, write: ConsumptionWrite): Answer<number>;
  changedFrom(sinceVersion: number): Answer<number | null>;
  cursor(graph: FlowGraphId): Answer<number | null>;
  inWindow(...asked: Parameters<Store['consumptionInWindow']>): Answer<Reading[]>;
  latestPerZone(basis: Basis): Answer<ZoneReading[]>;
  mixesInWindow(
    ...asked: Parameters<Store['consumptionMixesInWindow']>
  ): Answer<ConsumptionMixPoint[]>;
}

/**
 * What the SQLite and PostgreSQL stores do alike above their SQL: a write of one kind is a chunk
 * of that kind alone, and the consumption series is the backend's consumption table.
 */
export abstract class SqlStoreBase {
  protected abstract readonly consumption: ConsumptionTable;

  abstract writeChunk(chunk: ChunkWrite): Promise<void>;

  async upsertReadings(readings: ChunkWrite['readings']): Promise<number> {
    await this.writeChunk({ readings, mixes: [], forecasts: [] });
    return readings.length;
  }

  async upsertMixes(mixes: ChunkWrite['mixes']): Promise<number> {
    await this.writeChunk({ readings: [], mixes, forecasts: [] });
    return mixes.length;
  }

  async upsertForecasts(forecasts: ChunkWrite['forecasts']): Promise<number> {
    await this.writeChunk({ readings: [], mixes: [], forecasts });
    return forecasts.length;
  }

  async replaceConsumption(graph: FlowGraphId, write: ConsumptionWrite): Promise<number> {
    if (write.hours.length === 0 && write.cursor === undefined) return 0;
    return this.consumption.replace(graph, write);
  }

  async consumptionChangedFrom(sinceVersion: number): Promise<number | null> {
    return this.consumption.changedFrom(sinceVersion);
  }

  async consumptionCursor(graph: FlowGraphId): Promise<number | null> {
    return this.consumption.cursor(graph);
  }

  async consumptionInWindow(
    ...asked: Parameters<Store['consumptionInWindow']>
  ): Promise<Reading[]> {
    return this.consumption.inWindow(...asked);
  }

  async latestConsumptionPerZone(basis: Basis): Promise<ZoneReading[]> {
    return this.consumption.latestPerZone(basis);
  }

  async consumptionMixesInWindow(
    ...asked: Parameters<Store['consumptionMixesInWindow']>
  ): Promise<ConsumptionMixPoint[]> {
    return this.consumption.mixesInWindow(...asked);
  }
}
