import type { Basis } from '../core/factors.js';
import type { ConsumptionMixPoint } from '../core/consumption/series-row.js';
import type { Accounting, Reading, ZoneReading } from '../core/reading.js';
import type { MixPoint } from '../storage/store.js';

// The shapes of what is read, for readers above this layer (they never hold the store port).
export type { MixPoint, ReadingChange, StoreKey } from '../storage/store.js';
export type { ConsumptionMixPoint } from '../core/consumption/series-row.js';
import type { ZoneSeries } from './zone-series.js';

/**
 * The read layer: what every route, the fast path and both compatibility shims read the data
 * through. Two implementations answer one interface with identical values:
 * - memory (`MemoryReadModel`), the reading cache, once it is loaded and its store follows;
 * - the store (`StoreReadModel`), until then or without a cache.
 * Values are held and handed out in whole tenths, exactly as served (core/units.ts), and the GB
 * provisional reading (core/served-forecast.ts) is applied on the default basis by both, here
 * in read/ and nowhere else: a reader never asks which one answered, or rounds.
 */

/** Points `start` to `end - 1` of `series`, values in tenths as served. */
export interface SeriesWindow {
  readonly series: ZoneSeries;
  readonly start: number;
  readonly end: number;
  /** Whether the window holds every point up to its end (false: cut at the limit asked). */
  readonly complete: boolean;
}

export interface ReadModel {
  /** Whether memory answers (bodies built from it may be kept until the data changes). */
  readonly inMemory: boolean;
  /**
   * A zone's published points with `from <= ts < to` on `basis` (undefined: its own values, the
   * GB provisional reading included; of consumption values, lifecycle), at most `limit` from
   * `from`; the reader may keep it.
   */
  window(
    zone: string,
    from: number,
    to: number,
    limit: number,
    basis: Basis | undefined,
    accounting?: Accounting,
  ): Promise<SeriesWindow>;
  /** The newest reading of every zone on `basis`, in the order of the zone registry. */
  latest(basis: Basis | undefined, accounting?: Accounting): Promise<ZoneReading[]>;
  /** The published mixes of a zone with `from <= ts < to`, at most `limit`. */
  mixes(zone: string, from: number, to: number, limit: number): Promise<MixPoint[]>;
  /** The traced (consumption) mixes of a zone with `from <= ts < to`, at most `limit`. */
  consumptionMixes(
    zone: string,
    from: number,
    to: number,
    limit: number,
  ): Promise<ConsumptionMixPoint[]>;
  /**
   * A zone's published readings with `from <= ts < to` on `basis` (at most `limit`), each the
   * interval's consumption value where it has one (read/where-traced.ts): what the Electricity
   * Maps shim serves, in one call.
   */
  consumptionWhereTraced(
    zone: string,
    from: number,
    to: number,
    limit: number,
    basis: Basis,
  ): Promise<Reading[]>;
  /** The newer of a zone's newest production and consumption readings on `basis`, if any. */
  newestWhereTraced(zone: string, basis: Basis): Promise<Reading | undefined>;
  /** A zone's published mixes and its traced mixes with `from <= ts < to`, at most `limit` each. */
  mixesWithTraced(zone: string, from: number, to: number, limit: number): Promise<MixesWithTraced>;
}

export interface MixesWithTraced {
  readonly mixes: MixPoint[];
  readonly traced: ConsumptionMixPoint[];
}

/** Builds the error a read answers when the store cannot be read (the API's 503). */
export type Unavailable = () => Error;
