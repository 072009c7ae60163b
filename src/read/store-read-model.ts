import type { Basis } from '../core/factors.js';
import {
  type Accounting,
  CONSUMPTION_DEFAULT_BASIS,
  type Reading,
  type ZoneReading,
} from '../core/reading.js';
import { mayServeForecast, SERVED_FORECAST_KIND, servedForecast } from '../core/served-forecast.js';
import { round1 } from '../core/units.js';
import { CONTRACT_REGISTRY, type ZoneRegistry } from '../core/zone-registry.js';
import type { MixPoint, Store } from '../storage/store.js';
import type {
  ConsumptionMixPoint,
  MixesWithTraced,
  ReadModel,
  SeriesWindow,
  Unavailable,
} from './read-model.js';
import { consumptionWhereTraced, newerOf } from './where-traced.js';
import { ZoneSeries } from './zone-series.js';

/**
 * The read model of the store, while memory is not loaded (or without it): the same values as
 * memory holds, rounded to tenths on the way out (a `ZoneSeries` holds them so), with the GB
 * provisional reading appended after the settled ones as the reading cache does. A failed read
 * throws the API's 503.
 */
export class StoreReadModel implements ReadModel {
  readonly inMemory = false;

  constructor(
    private readonly store: Store,
    private readonly unavailable: Unavailable,
    /** The zones served now: `latest` answers these, in their order. */
    private readonly zones: () => ZoneRegistry = () => CONTRACT_REGISTRY,
  ) {}

  async window(
    ...[zone, from, to, limit, basis, accounting = 'production']: Parameters<ReadModel['window']>
  ): Promise<SeriesWindow> {
    if (accounting === 'consumption') {
      const rows = await this.read(() =>
        this.store.consumptionInWindow(zone, from, to, limit, basis ?? CONSUMPTION_DEFAULT_BASIS),
      );
      const series = new ZoneSeries(rows);
      return { series, start: 0, end: series.length, complete: rows.length < limit };
    }
    const rows = await this.read(() => this.store.readingsInWindow(zone, from, to, limit, basis));
    const complete = rows.length < limit;
    // The provisional reading follows every settled one: only a window read to its end shows it.
    if (complete && basis === undefined && mayServeForecast(zone)) {
      const provisional = await this.provisional(zone);
      if (provisional && provisional.ts >= from && provisional.ts < to) rows.push(provisional);
    }
    const series = new ZoneSeries(rows);
    return { series, start: 0, end: series.length, complete };
  }

  async latest(
    basis: Basis | undefined,
    accounting: Accounting = 'production',
  ): Promise<ZoneReading[]> {
    if (accounting === 'consumption') {
      const basisOrDefault = basis ?? CONSUMPTION_DEFAULT_BASIS;
      const latest = await this.read(() => this.store.latestConsumptionPerZone(basisOrDefault));
      return asServed(latest, this.zones());
    }
    const latest = await this.read(() => this.store.latestPerZone(basis));
    if (basis !== undefined) return asServed(latest, this.zones());
    const forecasts = await this.read(() => this.store.newestForecasts(SERVED_FORECAST_KIND));
    const withForecasts = latest.filter((reading) => {
      const forecast = forecasts.find((candidate) => candidate.zone === reading.zone);
      return servedForecast(reading.ts, forecast) === undefined;
    });
    for (const forecast of forecasts) {
      const newest = latest.find((reading) => reading.zone === forecast.zone)?.ts;
      const served = servedForecast(newest, forecast);
      if (served) withForecasts.push({ zone: forecast.zone, ...served });
    }
    return asServed(withForecasts, this.zones());
  }

  mixes(zone: string, from: number, to: number, limit: number): Promise<MixPoint[]> {
    return this.read(() => this.store.mixesInWindow(zone, from, to, limit));
  }

  consumptionMixes(
    zone: string,
    from: number,
    to: number,
    limit: number,
  ): Promise<ConsumptionMixPoint[]> {
    return this.read(() => this.store.consumptionMixesInWindow(zone, from, to, limit));
  }

  async consumptionWhereTraced(
    ...[zone, from, to, limit, basis]: Parameters<ReadModel['consumptionWhereTraced']>
  ): Promise<Reading[]> {
    const [produced, consumed] = await Promise.all([
      this.window(zone, from, to, limit, basis),
      this.window(zone, from, to, limit, basis, 'consumption'),
    ]);
    return consumptionWhereTraced(produced, consumed);
  }

  async newestWhereTraced(zone: string, basis: Basis): Promise<Reading | undefined> {
    const [produced, consumed] = await Promise.all([
      this.latest(basis),
      this.latest(basis, 'consumption'),
    ]);
    const ofZone = (readings: readonly ZoneReading[]): Reading | undefined => {
      const found = readings.find((reading) => reading.zone === zone);
      return found && { ts: found.ts, value: found.value, method: found.method };
    };
    return newerOf(ofZone(produced), ofZone(consumed));
  }

  async mixesWithTraced(
    ...[zone, from, to, limit]: Parameters<ReadModel['mixesWithTraced']>
  ): Promise<MixesWithTraced> {
    const [mixes, traced] = await Promise.all([
      this.mixes(zone, from, to, limit),
      this.consumptionMixes(zone, from, to, limit),
    ]);
    return { mixes, traced };
  }

  /**
   * The GB operator's forecast as the default basis serves it after the zone's settled readings;
   * undefined for a zone without one, or once its interval is settled.
   */
  private async provisional(zone: string): Promise<Reading | undefined> {
    const forecast = (await this.read(() => this.store.newestForecasts(SERVED_FORECAST_KIND))).find(
      (candidate) => candidate.zone === zone,
    );
    if (!forecast) return undefined;
    const [settled] = await this.read(() =>
      this.store.readingsInWindow(zone, forecast.ts, Number.MAX_SAFE_INTEGER, 1),
    );
    return servedForecast(settled?.ts, forecast);
  }

  private async read<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch {
      throw this.unavailable();
    }
  }
}

/** The served zones' readings in the order of the registry, values in tenths as memory holds them. */
const asServed = (readings: readonly ZoneReading[], zones: ZoneRegistry): ZoneReading[] =>
  readings
    .filter((reading) => zones.has(reading.zone))
    .sort((a, b) => zones.indexOf(a.zone)! - zones.indexOf(b.zone)!)
    .map((reading) => ({ ...reading, value: round1(reading.value) }));
