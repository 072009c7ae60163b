import { setImmediate as setImmediatePromise } from 'node:timers/promises';
import type { Logger } from 'pino';
import { BASES, type Basis } from '../core/factors.js';
import {
  type Accounting,
  BASIS_METHOD,
  CONSUMPTION_DEFAULT_BASIS,
  type Reading,
  type StoredForecast,
  type ZoneReading,
} from '../core/reading.js';
import { SERVED_FORECAST_KIND, servedForecast } from '../core/served-forecast.js';
import { hasConsumptionSeries, ownValueIsLifecycle, ZONES, type Zone } from '../core/zones.js';
import type { ReadingChange, Store } from '../storage/store.js';
import { type SeriesChange, ZoneSeries } from './zone-series.js';

export interface ReadingCacheOptions {
  /** How often the store's data version is compared with the cached one. */
  readonly pollMs?: number;
  /** More changes than this since the cached version: reload everything instead. */
  readonly maxChanges?: number;
  /**
   * The zones held and followed: every zone the server may serve (core/zone-registry.ts
   * `servableZones`); by default the 45 of the contract. The flow graphs' other nodes are stored
   * beside them and left out.
   */
  readonly zones?: readonly Zone[];
}

const EVERYTHING = Number.MAX_SAFE_INTEGER;

/**
 * A series of the default basis (each zone's own method) or of one basis, of production values;
 * or of consumption values on one basis (extensions §15).
 */
type ProductionKey = 'default' | Basis;
type SeriesKey = ProductionKey | `consumption:${Basis}`;

const seriesKey = (basis: Basis | undefined, accounting: Accounting): SeriesKey =>
  accounting === 'consumption'
    ? `consumption:${basis ?? CONSUMPTION_DEFAULT_BASIS}`
    : (basis ?? 'default');

/**
 * The reading a stored change publishes on the default basis (undefined) or on `basis`, exactly
 * as the cached series hold it; null when it publishes none there. A zone whose own value is its
 * lifecycle value serves its own series on `basis=lifecycle`.
 */
export function publishedReading(change: ReadingChange, basis: Basis | undefined): Reading | null {
  if (basis === undefined || (basis === 'lifecycle' && ownValueIsLifecycle(change.zone))) {
    return change.published && change.value !== null
      ? { ts: change.ts, value: change.value, method: change.method }
      : null;
  }
  const value = change[basis];
  return value === null ? null : { ts: change.ts, value, method: BASIS_METHOD[basis] };
}

/** What one refresh of the cache brought, handed to `onApplied` listeners. */
export interface AppliedChanges {
  /** The store data version the cache reflected before; -1 before the first load. */
  readonly fromVersion: number;
  /** The version it reflects now. */
  readonly version: number;
  /**
   * The reading changes applied, each with the version of its write, ascending; undefined when
   * everything was reloaded instead (the first load, or more than `maxChanges` changes): a
   * follower that needs every change then reads them from the store (`changesSince`).
   */
  readonly changes: readonly ReadingChange[] | undefined;
}
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
  private readonly series: Record<SeriesKey, Map<string, ZoneSeries>> = {
    default: new Map(),
    lifecycle: new Map(),
    direct: new Map(),
    'consumption:lifecycle': new Map(),
    'consumption:direct': new Map(),
  };
  /** Per zone, the newest forecast of the kind served as a reading, and its ts when shown. */
  private readonly forecasts = new Map<string, StoredForecast>();
  private readonly shownForecastTs = new Map<string, number>();
  private cachedVersion = -1;
  private refreshing: Promise<void> | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: Promise<(() => Promise<void>) | undefined> | undefined;
  private readonly pollMs: number;
  private readonly maxChanges: number;
  /** The zones held and followed (ReadingCacheOptions.zones). */
  readonly zones: readonly Zone[];
  private readonly held: ReadonlySet<string>;
  /** The zones with a consumption series, which the cache holds beside their production ones. */
  private readonly consumptionZones: readonly Zone[];
  ready = false;
  /**
   * False since the last poll failed. The API then answers 503 rather than serve what it holds
   * as if it were current; the next successful poll clears it.
   */
  storeReachable = true;
  /** Listeners told after every applied change (response caches drop what they built). */
  private readonly listeners: (() => void)[] = [];
  /** Listeners given the changes themselves (event streams). */
  private readonly appliedListeners: ((applied: AppliedChanges) => void)[] = [];

  constructor(
    private readonly store: Store,
    private readonly logger: Logger | undefined,
    options: ReadingCacheOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 2000;
    this.maxChanges = options.maxChanges ?? 200_000;
    this.zones = options.zones ?? ZONES;
    this.held = new Set(this.zones.map((zone) => zone.code));
    this.consumptionZones = this.zones.filter(hasConsumptionSeries);
  }

  /** The store data version the cache reflects; part of every ETag built from it. */
  get version(): number {
    return this.cachedVersion;
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /**
   * Calls `listener` after every refresh that changed the cache, with what it applied, in version
   * order: once the series serve the new values, so a listener that reads them sees them too.
   */
  onApplied(listener: (applied: AppliedChanges) => void): void {
    this.appliedListeners.push(listener);
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

  /** A zone's published series on the default basis, or on `basis`; of production by default. */
  zone(code: string, basis?: Basis, accounting: Accounting = 'production'): ZoneSeries | undefined {
    return this.series[seriesKey(basis, accounting)].get(code);
  }

  /** The newest reading of each of `zones` (default: every zone held) that has one, in order. */
  latest(
    basis?: Basis,
    accounting: Accounting = 'production',
    zones: readonly Zone[] = this.zones,
  ): ZoneReading[] {
    const latest: ZoneReading[] = [];
    const all = this.series[seriesKey(basis, accounting)];
    for (const zone of zones) {
      const series = all.get(zone.code);
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
        const fromVersion = this.cachedVersion;
        // Held zones only: the flow graphs' other nodes are stored beside them (extensions §16).
        const served = changes.changes.filter((change) => this.held.has(change.zone));
        this.apply(served, changes.forecasts);
        const consumptionFrom = await this.store.consumptionChangedFrom(fromVersion);
        if (consumptionFrom !== null) await this.reloadConsumption(consumptionFrom);
        this.cachedVersion = changes.version;
        return this.changed({ fromVersion, version: changes.version, changes: served });
      }
    }
    await this.loadEverything(version);
  }

  /**
   * Reads every zone's published series on each basis, and the forecasts served as readings.
   * Writes that land during the load carry a version above `version`, so the next poll applies
   * them again; applying a change twice is harmless.
   */
  private async loadEverything(version: number): Promise<void> {
    const started = Date.now();
    let points = 0;
    const forecasts = await this.store.newestForecasts(SERVED_FORECAST_KIND);
    for (const zone of this.zones) {
      // SQLite answers synchronously: yield between zones so requests are served (from the
      // store) while millions of points load.
      await setImmediatePromise();
      // A full load takes seconds on a large store: shutdown does not wait for the rest of it.
      if (this.stopped) return;
      const read = (basis?: Basis) =>
        this.store.readingsInWindow(zone.code, 0, EVERYTHING, EVERYTHING, basis);
      const ownSeries = new ZoneSeries(await read());
      this.series.default.set(zone.code, ownSeries);
      this.series.lifecycle.set(
        zone.code,
        ownValueIsLifecycle(zone.code) ? ownSeries : new ZoneSeries(await read('lifecycle')),
      );
      this.series.direct.set(zone.code, new ZoneSeries(await read('direct')));
      points += ownSeries.length;
      this.shownForecastTs.delete(zone.code);
      const forecast = forecasts.find((candidate) => candidate.zone === zone.code);
      if (forecast) this.forecasts.set(zone.code, forecast);
      else this.forecasts.delete(zone.code);
      this.showForecast(zone.code);
    }
    await this.reloadConsumption(0);
    if (this.stopped) return;
    const fromVersion = this.cachedVersion;
    this.cachedVersion = version;
    this.ready = true;
    this.logger?.info({ points, ms: Date.now() - started, version }, 'reading cache loaded');
    this.changed({ fromVersion, version, changes: undefined });
  }

  /**
   * Reads every zone's consumption series again from `fromTs` on (the store says from which hour
   * a write replaced them): what is held from there is replaced, rows removed included.
   */
  private async reloadConsumption(fromTs: number): Promise<void> {
    for (const zone of this.consumptionZones) {
      await setImmediatePromise();
      if (this.stopped) return;
      for (const basis of BASES) {
        const key = seriesKey(basis, 'consumption');
        const rows = await this.store.consumptionInWindow(
          zone.code,
          fromTs,
          EVERYTHING,
          EVERYTHING,
          basis,
        );
        let series = this.series[key].get(zone.code);
        if (!series) this.series[key].set(zone.code, (series = new ZoneSeries()));
        const held: SeriesChange[] = [];
        for (let index = series.lowerBound(fromTs); index < series.length; index++) {
          held.push({ ts: series.ts(index), reading: null });
        }
        // A ts both held and read: the reading comes later in the batch and wins.
        series.apply([...held, ...rows.map((reading) => ({ ts: reading.ts, reading }))]);
      }
    }
  }

  private apply(changes: readonly ReadingChange[], forecasts: readonly StoredForecast[]): void {
    const byZone = new Map<string, Record<ProductionKey, SeriesChange[]>>();
    const listsOf = (zone: string) => {
      let lists = byZone.get(zone);
      if (!lists) byZone.set(zone, (lists = { default: [], lifecycle: [], direct: [] }));
      return lists;
    };
    for (const forecast of forecasts) {
      if (forecast.kind !== SERVED_FORECAST_KIND) continue;
      const known = this.forecasts.get(forecast.zone);
      const newer =
        !known ||
        forecast.ts > known.ts ||
        (forecast.ts === known.ts && forecast.issuedAt >= known.issuedAt);
      if (newer) this.forecasts.set(forecast.zone, forecast);
      listsOf(forecast.zone);
    }
    for (const change of changes) {
      const lists = listsOf(change.zone);
      lists.default.push({ ts: change.ts, reading: publishedReading(change, undefined) });
      for (const basis of BASES) {
        lists[basis].push({ ts: change.ts, reading: publishedReading(change, basis) });
      }
    }
    for (const [zone, lists] of byZone) {
      // The shown forecast goes first: a settled figure of its interval in this batch wins.
      const shown = this.shownForecastTs.get(zone);
      if (shown !== undefined) lists.default.unshift({ ts: shown, reading: null });
      this.shownForecastTs.delete(zone);
      for (const key of ['default', ...BASES] as const) {
        if (key === 'lifecycle' && ownValueIsLifecycle(zone)) continue;
        let series = this.series[key].get(zone);
        if (!series) this.series[key].set(zone, (series = new ZoneSeries()));
        series.apply(lists[key]);
      }
      if (ownValueIsLifecycle(zone)) {
        this.series.lifecycle.set(zone, this.series.default.get(zone)!);
      }
      this.showForecast(zone);
    }
  }

  /** Appends the zone's served forecast, if any, to its default series. */
  private showForecast(zone: string): void {
    const series = this.series.default.get(zone);
    if (!series) return;
    const newest = series.length === 0 ? undefined : series.ts(series.length - 1);
    const reading = servedForecast(newest, this.forecasts.get(zone));
    if (!reading) return;
    series.apply([{ ts: reading.ts, reading }]);
    this.shownForecastTs.set(zone, reading.ts);
  }

  private changed(applied: AppliedChanges): void {
    for (const listener of this.listeners) listener();
    for (const listener of this.appliedListeners) listener(applied);
  }
}
