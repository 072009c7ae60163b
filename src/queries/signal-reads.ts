import type { Basis } from '../core/factors.js';
import type { Accounting, ZoneReading } from '../core/reading.js';
import type { ReadingCache } from '../read/reading-cache.js';
import type { Reads } from '../read/reads.js';

/**
 * The two reads levels, statistics and webhooks need, as function types: the published points
 * of a zone in a window and the newest reading of every zone, each on the default basis or one
 * basis, values in tenths as served. Routes take these, not the cache or the store, so they can
 * sit on any read model that offers a zone's series and the latest readings.
 */

/**
 * Published points `from <= ts < to`, ascending; values in tenths of gCO2eq/kWh. They may be
 * views of what the read layer holds: read them, never write them.
 */
interface PublishedPoints {
  readonly ts: Float64Array;
  readonly tenths: Int32Array;
}

export type ReadPoints = (
  zone: string,
  basis: Basis | undefined,
  from: number,
  to: number,
  accounting?: Accounting,
) => Promise<PublishedPoints>;

/** The newest published reading of every zone that has one, in the order of /v1/zones. */
export type ReadLatest = (
  basis: Basis | undefined,
  accounting?: Accounting,
) => Promise<readonly ZoneReading[]>;

/** The data version the reads reflect, or undefined when it is not known (nothing is cached). */
export type ReadVersion = () => number | undefined;

/**
 * A zone's published points, from memory or the store as the read layer answers now. From
 * memory they are views of the cached series, not copies: a 400-day window is 9,600 to 19,200
 * points, and copying them (twice) was most of what a statistics request allocated.
 */
export function readPointsOf(reads: Reads): ReadPoints {
  return async (zone, basis, from, to, accounting = 'production') => {
    const model = reads.current();
    const limit = Number.MAX_SAFE_INTEGER;
    const { series, start, end } =
      model === reads.memory
        ? reads.memory.windowNow(zone, from, to, limit, basis, accounting)
        : await model.window(zone, from, to, limit, basis, accounting);
    return series.view(start, end);
  };
}

export function readLatestOf(reads: Reads): ReadLatest {
  return (basis, accounting) => reads.current().latest(basis, accounting);
}

/** The cache's version while memory answers; undefined when reading the store. */
export function readVersionOf(reads: Reads, cache: ReadingCache | undefined): ReadVersion {
  return () => (reads.memory && cache ? cache.version : undefined);
}

/** The reads of a process without HTTP routes at hand (the webhook deliverer). */
export function signalReads(reads: Reads): { points: ReadPoints; latest: ReadLatest } {
  return { points: readPointsOf(reads), latest: readLatestOf(reads) };
}
