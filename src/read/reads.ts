import type { IngestReport } from '../core/reading.js';
import type { SourceId } from '../core/sources.js';
import type { ZoneRegistry } from '../core/zone-registry.js';
import type { ReadingChanges, Store, StoreKey } from '../storage/store.js';
import { MemoryReadModel } from './memory-read-model.js';
import type { ReadModel, Unavailable } from './read-model.js';
import type { AppliedChanges, ReadingCache } from './reading-cache.js';
import { ServedZones } from './served-zones.js';
import { StoreReadModel } from './store-read-model.js';

/**
 * The read layer of one app: `current()` is the read model that answers now; the change feed
 * (data version, changes, notifications) and the stored reports pass through here too, so
 * nothing above this layer holds the store port.
 */
export class Reads {
  private readonly fromMemory: MemoryReadModel | undefined;
  private readonly fromStore: StoreReadModel;

  constructor(
    private readonly store: Store,
    private readonly cache: ReadingCache | undefined,
    private readonly unavailable: Unavailable,
    /** The zones served (`ZONES`, extensions §16); by default the 45 of the contract. */
    private readonly served: ServedZones = ServedZones.CONTRACT,
  ) {
    const zones = () => served.current;
    this.fromStore = new StoreReadModel(store, unavailable, zones);
    this.fromMemory = cache && new MemoryReadModel(cache, this.fromStore, zones);
  }

  /** The zones served now: what every list answers, in its order. */
  get zones(): ZoneRegistry {
    return this.served.current;
  }

  /** The memory read model when it answers now (loaded, and its store reachable). */
  get memory(): MemoryReadModel | undefined {
    return this.cache?.ready && this.cache.storeReachable ? this.fromMemory : undefined;
  }

  /** The read model that answers now; throws the API's 503 when the store is lost. */
  current(): ReadModel {
    this.refuseWhenStoreLost();
    return this.memory ?? this.fromStore;
  }

  /** A loaded cache whose store is gone answers 503, as the store would, not stale data. */
  refuseWhenStoreLost(): void {
    if (this.cache?.ready && !this.cache.storeReachable) throw this.unavailable();
  }

  /** Whether memory follows the store (then `onApplied` tells every change it applies). */
  get follows(): boolean {
    return this.cache !== undefined;
  }

  /**
   * Called whenever the data memory answers from changed, or the zones served did (bodies built
   * from either are stale).
   */
  onChange(listener: () => void): void {
    this.cache?.onChange(listener);
    this.served.onChange(listener);
  }

  /** Called with the changes memory applied, in version order (see ReadingCache.onApplied). */
  onApplied(listener: (applied: AppliedChanges) => void): void {
    this.cache?.onApplied(listener);
  }

  /** The store's data version: every write moves it on. */
  dataVersion(): Promise<number> {
    return this.guard(() => this.store.dataVersion());
  }

  /**
   * The reading changes written after `version`, at most `limit`; with `after`, those of write
   * `version + 1` after that key (Store.changesSince).
   */
  changesSince(version: number, limit: number, after?: StoreKey): Promise<ReadingChanges> {
    return this.store.changesSince(version, limit, after);
  }

  /** Calls `listener` when the store says it changed, where it pushes that (PostgreSQL). */
  subscribe(listener: () => void): Promise<(() => Promise<void>) | undefined> {
    return this.store.subscribe?.(listener) ?? Promise.resolve(undefined);
  }

  /** The newest stored ingestion report of each source, whoever ran it. */
  ingestReports(): Promise<Partial<Record<SourceId, IngestReport>>> {
    return this.store.latestIngestReports();
  }

  /** What keeps the store from following (Store.problems); empty when it is sound. */
  problems(): Promise<readonly string[]> {
    return this.store.problems();
  }

  private async guard<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch {
      throw this.unavailable();
    }
  }
}
