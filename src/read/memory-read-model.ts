import type { Basis } from '../core/factors.js';
import type { ZoneReading } from '../core/reading.js';
import type { MixPoint } from '../storage/store.js';
import type { ReadModel, SeriesWindow } from './read-model.js';
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
    private readonly store: Pick<ReadModel, 'mixes'>,
  ) {}

  /** The live series, valid until the cache next takes changes: for a reader that never waits. */
  windowNow(
    zone: string,
    from: number,
    to: number,
    limit: number,
    basis: Basis | undefined,
  ): SeriesWindow {
    const series = this.cache.zone(zone, basis) ?? EMPTY_SERIES;
    const start = series.lowerBound(from);
    const last = series.lowerBound(to);
    const end = Math.min(last, start + limit);
    return { series, start, end, complete: end === last };
  }

  latestNow(basis: Basis | undefined): ZoneReading[] {
    return this.cache.latest(basis);
  }

  /** Whether the zone has a reading on `basis`. */
  hasReading(zone: string, basis: Basis | undefined): boolean {
    return (this.cache.zone(zone, basis)?.length ?? 0) > 0;
  }

  /** A copy: the cache may take changes while the reader waits. */
  async window(
    zone: string,
    from: number,
    to: number,
    limit: number,
    basis: Basis | undefined,
  ): Promise<SeriesWindow> {
    const { series, start, end, complete } = this.windowNow(zone, from, to, limit, basis);
    return { series: series.slice(start, end), start: 0, end: end - start, complete };
  }

  async latest(basis: Basis | undefined): Promise<ZoneReading[]> {
    return this.latestNow(basis);
  }

  mixes(zone: string, from: number, to: number, limit: number): Promise<MixPoint[]> {
    return this.store.mixes(zone, from, to, limit);
  }
}
