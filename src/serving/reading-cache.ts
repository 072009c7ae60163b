import { setImmediate as setImmediatePromise } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { ZoneReading } from '../core/reading.js';
import { ZONES } from '../core/zones.js';
import type { ReadingChange, Store } from '../storage/store.js';
import { type SeriesChange, ZoneSeries } from './zone-series.js';

export interface ReadingCacheOptions {
  /** How often the store's data version is compared with the cached one. */
  readonly pollMs?: number;
  /** More changes than this since the cached version: reload everything instead. */
  readonly maxChanges?: number;
}

const EVERYTHING = Number.MAX_SAFE_INTEGER;

/**
 * Every published reading, in memory, kept in step with the store. The data changes about once
 * an hour and is small (3.2M points is ~45 MB here), so serving from memory makes a response cost
 * independent of the store's size and of the database's latency.
 *
 * It follows the store by its data version: a poll every `pollMs` (and `refresh()` on a change
 * notification) fetches only the readings changed since the cached version. Until the first load
 * completes, `ready` is false and the API reads the store directly.
 */
export class ReadingCache {
  private readonly series = new Map<string, ZoneSeries>();
  private cachedVersion = -1;
  private refreshing: Promise<void> | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: Promise<(() => Promise<void>) | undefined> | undefined;
  private readonly pollMs: number;
  private readonly maxChanges: number;
  ready = false;
  /**
   * False since the last poll failed. The API then answers 503 rather than serve what it holds
   * as if it were current; the next successful poll clears it.
   */
  storeReachable = true;
  /** Listeners told after every applied change (response caches drop what they built). */
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly store: Store,
    private readonly logger: Logger | undefined,
    options: ReadingCacheOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 2000;
    this.maxChanges = options.maxChanges ?? 200_000;
  }

  /** The store data version the cache reflects; part of every ETag built from it. */
  get version(): number {
    return this.cachedVersion;
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /**
   * Starts loading in the background, polling, and listening for change notifications where the
   * store pushes them; never rejects (a failed load is retried at the next poll).
   */
  start(): void {
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.pollMs);
    this.timer.unref();
    this.unsubscribe = this.store
      .subscribe?.(() => void this.refresh())
      .catch((error: unknown) => {
        this.logger?.warn({ err: error }, 'change notifications unavailable; polling only');
        return undefined;
      });
  }

  /** Stops polling and listening, and waits for a refresh under way: the store closes next. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    const unsubscribe = await this.unsubscribe;
    await unsubscribe?.();
    await this.refreshing;
  }

  /** Brings the cache up to the store's current version. Concurrent calls share one run. */
  refresh(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.refreshing ??= this.catchUp()
      .then(() => {
        if (!this.storeReachable) this.logger?.info('store reachable again');
        this.storeReachable = true;
      })
      .catch((error: unknown) => {
        if (this.storeReachable) this.logger?.warn({ err: error }, 'store unreachable');
        this.storeReachable = false;
      })
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  zone(code: string): ZoneSeries | undefined {
    return this.series.get(code);
  }

  /** The newest reading of every zone that has one, in the order of the zone registry. */
  latest(): ZoneReading[] {
    const latest: ZoneReading[] = [];
    for (const zone of ZONES) {
      const series = this.series.get(zone.code);
      if (!series || series.length === 0) continue;
      const last = series.length - 1;
      latest.push({
        zone: zone.code,
        ts: series.ts(last),
        value: series.value(last),
        method: series.method(last),
      });
    }
    return latest;
  }

  private async catchUp(): Promise<void> {
    const version = await this.store.dataVersion();
    if (version === this.cachedVersion) return;
    if (this.ready) {
      const changes = await this.store.changesSince(this.cachedVersion, this.maxChanges);
      if (changes.complete) {
        this.apply(changes.changes);
        this.cachedVersion = changes.version;
        return this.changed();
      }
    }
    await this.loadEverything(version);
  }

  /**
   * Reads every zone's published series. Writes that land during the load carry a version above
   * `version`, so the next poll applies them again; applying a change twice is harmless.
   */
  private async loadEverything(version: number): Promise<void> {
    const started = Date.now();
    let points = 0;
    for (const zone of ZONES) {
      // SQLite answers synchronously: yield between zones so requests are served (from the
      // store) while millions of points load.
      await setImmediatePromise();
      // A full load takes seconds on a large store: shutdown does not wait for the rest of it.
      if (this.stopped) return;
      const readings = await this.store.readingsInWindow(zone.code, 0, EVERYTHING, EVERYTHING);
      this.series.set(zone.code, new ZoneSeries(readings));
      points += readings.length;
    }
    this.cachedVersion = version;
    this.ready = true;
    this.logger?.info({ points, ms: Date.now() - started, version }, 'reading cache loaded');
    this.changed();
  }

  private apply(changes: readonly ReadingChange[]): void {
    const byZone = new Map<string, SeriesChange[]>();
    for (const change of changes) {
      let list = byZone.get(change.zone);
      if (!list) byZone.set(change.zone, (list = []));
      list.push({
        ts: change.ts,
        reading: change.published ? { value: change.value!, method: change.method } : null,
      });
    }
    for (const [zone, list] of byZone) {
      let series = this.series.get(zone);
      if (!series) this.series.set(zone, (series = new ZoneSeries()));
      series.apply(list);
    }
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}
