import type { Basis } from '../core/factors.js';
import type { Accounting, Reading, ZoneReading } from '../core/reading.js';
import { CONTRACT_REGISTRY, type ZoneRegistry } from '../core/zone-registry.js';
import type { MixPoint } from '../storage/store.js';
import type {
  ConsumptionMixPoint,
  MixesWithTraced,
  ReadModel,
  SeriesWindow,
} from './read-model.js';
import type { ReadingCache } from './reading-cache.js';
import { consumptionWhereTraced, newerOf } from './where-traced.js';
import { ZoneSeries } from './zone-series.js';

const EMPTY_SERIES = new ZoneSeries();

/**
 * The read model of the reading cache: every published series in memory, in tenths, the GB
 * provisional reading appended by the cache itself. Its reads also answer at once (`...Now`),
 * for the fast path. Mixes are not held in memory: they are read from the store.
 */
export class MemoryReadModel implements ReadModel {
  readonly inMemory = true;

  constructor(
    private readonly cache: ReadingCache,
    private readonly store: Pick<ReadModel, 'mixes' | 'consumptionMixes' | 'mixesWithTraced'>,
    /** The zones served now: `latest` answers these, in their order. */
    private readonly zones: () => ZoneRegistry = () => CONTRACT_REGISTRY,
  ) {}

  /** The live series, valid until the cache next takes changes: for a reader that never waits. */
  windowNow(
    ...[zone, from, to, limit, basis, accounting = 'production']: Parameters<ReadModel['window']>
  ): SeriesWindow {
    const series = this.cache.zone(zone, basis, accounting) ?? EMPTY_SERIES;
    const start = series.lowerBound(from);
    const last = series.lowerBound(to);
    const end = Math.min(last, start + limit);
    return { series, start, end, complete: end === last };
  }

  latestNow(basis: Basis | undefined, accounting: Accounting = 'production'): ZoneReading[] {
    return this.cache.latest(basis, accounting, this.zones().zones);
  }

  /** Whether the zone has a reading on `basis`. */
  hasReading(
    zone: string,
    basis: Basis | undefined,
    accounting: Accounting = 'production',
  ): boolean {
    return (this.cache.zone(zone, basis, accounting)?.length ?? 0) > 0;
  }

  /** A copy: the cache may take changes while the reader waits. */
  async window(...asked: Parameters<ReadModel['window']>): Promise<SeriesWindow> {
    const { series, start, end, complete } = this.windowNow(...asked);
    return { series: series.slice(start, end), start: 0, end: end - start, complete };
  }

  async latest(
    basis: Basis | undefined,
    accounting: Accounting = 'production',
  ): Promise<ZoneReading[]> {
    return this.latestNow(basis, accounting);
  }

  async consumptionWhereTraced(
    ...[zone, from, to, limit, basis]: Parameters<ReadModel['consumptionWhereTraced']>
  ): Promise<Reading[]> {
    return consumptionWhereTraced(
      this.windowNow(zone, from, to, limit, basis),
      this.windowNow(zone, from, to, limit, basis, 'consumption'),
    );
  }

  async newestWhereTraced(zone: string, basis: Basis): Promise<Reading | undefined> {
    const newest = (accounting: Accounting) => {
      const series = this.cache.zone(zone, basis, accounting);
      if (!series || series.length === 0) return undefined;
      const last = series.length - 1;
      return { ts: series.ts(last), value: series.value(last), method: series.method(last) };
    };
    return newerOf(newest('production'), newest('consumption'));
  }

  // Mixes are read from the store, as they are stored.
  mixesWithTraced(...asked: Parameters<ReadModel['mixesWithTraced']>): Promise<MixesWithTraced> {
    return this.store.mixesWithTraced(...asked);
  }

  mixes(...asked: Parameters<ReadModel['mixes']>): Promise<MixPoint[]> {
    return this.store.mixes(...asked);
  }

  consumptionMixes(
    ...asked: Parameters<ReadModel['consumptionMixes']>
  ): Promise<ConsumptionMixPoint[]> {
    return this.store.consumptionMixes(...asked);
  }
}
