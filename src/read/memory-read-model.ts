import type { Basis } from '../core/factors.js';
import type { Accounting, ZoneReading } from '../core/reading.js';
import { CONTRACT_REGISTRY, type ZoneRegistry } from '../core/zone-registry.js';
import type { MixPoint } from '../storage/store.js';
import type { ConsumptionMixPoint, ReadModel, SeriesWindow } from './read-model.js';
import type { ReadingCache } from './reading-cache.js';
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
    private readonly store: Pick<ReadModel, 'mixes' | 'consumptionMixes'>,
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

  // Mixes are read from the store, as they are stored.
  mixes(...asked: Parameters<ReadModel['mixes']>): Promise<MixPoint[]> {
    return this.store.mixes(...asked);
  }

  consumptionMixes(
    ...asked: Parameters<ReadModel['consumptionMixes']>
  ): Promise<ConsumptionMixPoint[]> {
    return this.store.consumptionMixes(...asked);
  }
}
