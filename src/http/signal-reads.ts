import type { Basis } from '../core/factors.js';
import type { ZoneReading } from '../core/reading.js';
import type { ReadingCache } from '../serving/reading-cache.js';
import type { Store } from '../storage/store.js';
import { DataResponder, fromStore } from './data-responder.js';

/**
 * The two reads levels, statistics and webhooks need, as function types: the published points
 * of a zone in a window and the newest reading of every zone, each on the default basis or one
 * basis, values in tenths as served. Routes take these, not the cache or the store, so they can
 * sit on any read model that offers a zone's series and the latest readings.
 */

/** Published points `from <= ts < to`, ascending; values in tenths of gCO2eq/kWh. */
export interface PublishedPoints {
  readonly ts: Float64Array;
  readonly tenths: Int32Array;
}

export type ReadPoints = (
  zone: string,
  basis: Basis | undefined,
  from: number,
  to: number,
) => Promise<PublishedPoints>;

/** The newest published reading of every zone that has one, in the order of /v1/zones. */
export type ReadLatest = (basis: Basis | undefined) => Promise<readonly ZoneReading[]>;

/** The data version the reads reflect, or undefined when it is not known (nothing is cached). */
export type ReadVersion = () => number | undefined;

/** A value in tenths as served: rounded to 1 decimal the way `toFixed(1)` rounds. */
const toTenths = (value: number): number => Math.round(Number(value.toFixed(1)) * 10);

/** From memory when it can answer, else from the store (503 when the store is unreachable). */
export function readPointsOf(responder: DataResponder, store: Store): ReadPoints {
  return async (zone, basis, from, to) => {
    responder.refuseWhenStoreLost();
    const memory = responder.memorySeries(zone, basis);
    if (memory) {
      const start = memory.lowerBound(from);
      const end = memory.lowerBound(to);
      const ts = new Float64Array(end - start);
      const tenths = new Int32Array(end - start);
      for (let i = start; i < end; i++) {
        ts[i - start] = memory.ts(i);
        tenths[i - start] = Math.round(memory.value(i) * 10);
      }
      return { ts, tenths };
    }
    const rows = await fromStore(() =>
      store.readingsInWindow(zone, from, to, Number.MAX_SAFE_INTEGER, basis),
    );
    // As /v1/intensity from the store: GB's provisional figure after its settled ones.
    const provisional =
      basis === undefined ? await responder.servedForecastFromStore(zone) : undefined;
    if (
      provisional &&
      provisional.ts >= from &&
      provisional.ts < to &&
      provisional.ts > (rows.at(-1)?.ts ?? -Infinity)
    ) {
      rows.push(provisional);
    }
    return {
      ts: Float64Array.from(rows, (row) => row.ts),
      tenths: Int32Array.from(rows, (row) => toTenths(row.value)),
    };
  };
}

export function readLatestOf(
  responder: DataResponder,
  store: Store,
  cache: ReadingCache | undefined,
): ReadLatest {
  return async (basis) => {
    responder.refuseWhenStoreLost();
    if (responder.cached && cache) return cache.latest(basis);
    // The default basis as latest serves it from the store: GB's provisional figure included.
    if (basis === undefined) return responder.latestReadings();
    return fromStore(() => store.latestPerZone(basis));
  };
}

export function readVersionOf(
  responder: DataResponder,
  cache: ReadingCache | undefined,
): ReadVersion {
  return () => (responder.cached && cache ? cache.version : undefined);
}

/**
 * The reads for a process that has no HTTP responder at hand (the webhook deliverer): from the
 * cache once it is loaded, else from the store.
 */
export function signalReads(
  store: Store,
  cache: ReadingCache | undefined,
): { points: ReadPoints; latest: ReadLatest } {
  const responder = new DataResponder(store, cache);
  return { points: readPointsOf(responder, store), latest: readLatestOf(responder, store, cache) };
}
