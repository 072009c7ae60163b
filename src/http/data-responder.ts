import type { Basis } from '../core/factors.js';
import type { Reading, ZoneReading } from '../core/reading.js';
import { mayServeForecast, SERVED_FORECAST_KIND, servedForecast } from '../core/served-forecast.js';
import { formatTs } from '../core/time.js';
import { SOURCE_INFO, ZONES, type Zone } from '../core/zones.js';
import type { ReadingCache } from '../read/reading-cache.js';
import { EncodedBody, ResponseCache } from './response-cache.js';
import { ZoneSeries } from '../read/zone-series.js';
import type { Store } from '../storage/store.js';
import { API_ERRORS } from './api-errors.js';
import { encodeHistory, encodeLatest, encodeMix } from './encode.js';

export const MAX_POINTS = 5000;
const RESPONSE_CACHE_BYTES = 64 * 1024 * 1024;
const MIN_COMPRESS_BYTES = 1024;
const EMPTY_SERIES = new ZoneSeries();
const ZONE_ORDER = new Map(ZONES.map((zone, index) => [zone.code, index]));

/** One representation of a body, ready to send: the bytes, its own ETag and its encoding. */
export interface Representation {
  readonly body: Buffer;
  readonly etag: string;
  readonly encoding: 'br' | 'gzip' | undefined;
  /** Whether the body could have been compressed, so caches must vary on Accept-Encoding. */
  readonly varies: boolean;
}

/**
 * Builds the bodies of the data endpoints, from the in-memory reading cache when it is loaded
 * (kept encoded until the data changes) or from the store. Used by the Fastify routes and by the
 * fast path alike, so both send the same bytes. `basis` undefined is each zone's own value (the
 * default basis); mixes are read from the store, their bodies kept like the others.
 */
export class DataResponder {
  private readonly responses = new ResponseCache(RESPONSE_CACHE_BYTES);
  /** Bodies encoded since start, and their bytes: the work a request can cost. */
  readonly encoded = { bodies: 0, bytes: 0 };

  constructor(
    private readonly store: Store,
    private readonly cache: ReadingCache | undefined,
  ) {
    cache?.onChange(() => this.responses.clear());
  }

  /** Whether memory can answer now (loaded, and its store reachable). */
  get cached(): boolean {
    return this.cache !== undefined && this.cache.ready && this.cache.storeReachable;
  }

  /** Whether memory holds a reading of `zone` on `basis` (answered without a 404). */
  hasCachedLatest(zone: string, basis?: Basis): boolean {
    return this.cached && (this.cache!.zone(zone, basis)?.length ?? 0) > 0;
  }

  /** From memory only: undefined when memory cannot answer, or the zone has no reading. */
  cachedLatest(zone: string | undefined, basis?: Basis): EncodedBody | undefined {
    if (!this.cached) return undefined;
    const key = `latest:${basis ?? ''}:${zone ?? ''}`;
    const known = this.responses.get(key);
    if (known) return known;
    const latest = this.cache!.latest(basis);
    const selected = zone ? latest.filter((reading) => reading.zone === zone) : latest;
    if (zone && selected.length === 0) return undefined;
    return this.responses.getOrBuild(key, () => this.encode(encodeLatest(selected)));
  }

  /** From memory only: undefined when memory cannot answer. */
  cachedHistory(zone: string, from: number, to: number, basis?: Basis): EncodedBody | undefined {
    if (!this.cached) return undefined;
    // Windows are admitted on their second request: unique windows pass through uncached.
    return this.responses.getOrBuild(
      `history:${basis ?? ''}:${zone}:${from}:${to}`,
      () => this.encodeWindow(zone, from, to, this.cache!.zone(zone, basis) ?? EMPTY_SERIES),
      true,
    );
  }

  /**
   * A zone's published series on `basis` when memory can answer (empty for a zone without one),
   * else undefined: what `/v1/intensity` serves from, for readers that page it themselves.
   */
  memorySeries(zone: string, basis?: Basis): ZoneSeries | undefined {
    return this.cached ? (this.cache!.zone(zone, basis) ?? EMPTY_SERIES) : undefined;
  }

  /** A mix body kept from an earlier request, if memory is current and holds one. */
  cachedMix(zone: string, from: number, to: number): EncodedBody | undefined {
    return this.cached ? this.responses.get(mixKey(zone, from, to)) : undefined;
  }

  /**
   * The newest reading of every zone on the default basis (the GB forecast included): from
   * memory when loaded, else from the store.
   */
  async latestReadings(): Promise<ZoneReading[]> {
    this.refuseWhenStoreLost();
    return this.cached ? this.cache!.latest() : this.latestFromStore(undefined);
  }

  /** The latest body; 404 for a zone without reading, 503 when the store is unreachable. */
  async latest(
    zone: string | undefined,
    given: string | undefined,
    basis?: Basis,
  ): Promise<EncodedBody> {
    this.refuseWhenStoreLost();
    if (this.cached) {
      const fromMemory = this.cachedLatest(zone, basis);
      if (!fromMemory) throw API_ERRORS.unknownZone(given ?? zone!);
      return fromMemory;
    }
    const latest = await this.latestFromStore(basis);
    const selected = zone ? latest.filter((reading) => reading.zone === zone) : latest;
    if (zone && selected.length === 0) throw API_ERRORS.unknownZone(given ?? zone);
    return this.encode(encodeLatest(selected));
  }

  async history(zone: string, from: number, to: number, basis?: Basis): Promise<EncodedBody> {
    this.refuseWhenStoreLost();
    const fromMemory = this.cachedHistory(zone, from, to, basis);
    if (fromMemory) return fromMemory;
    const rows = await fromStore(() =>
      this.store.readingsInWindow(zone, from, to, MAX_POINTS + 1, basis),
    );
    if (basis === undefined && mayServeForecast(zone)) {
      // The GB forecast reading: served while nothing at or after its interval is settled.
      const forecast = await this.servedForecastFromStore(zone);
      if (forecast && forecast.ts >= from && forecast.ts < to) rows.push(forecast);
    }
    return this.encodeWindow(zone, from, to, new ZoneSeries(rows));
  }

  /** The published mixes of a zone in `from <= ts < to`, at most MAX_POINTS (then truncated). */
  async mix(zone: Zone, from: number, to: number): Promise<EncodedBody> {
    this.refuseWhenStoreLost();
    const known = this.cachedMix(zone.code, from, to);
    if (known) return known;
    const rows = await fromStore(() =>
      this.store.mixesInWindow(zone.code, from, to, MAX_POINTS + 1),
    );
    const truncation = truncate(rows.length, (index) => rows[index]!.ts);
    const body = this.encode(
      encodeMix({
        zone: zone.code,
        from,
        to,
        unit: SOURCE_INFO[zone.source].mixUnit,
        points: rows.slice(0, MAX_POINTS),
        ...(truncation && { note: truncation.note }),
      }),
      truncation?.nextFrom,
    );
    // Kept only while memory follows the store: it is emptied whenever the data changes.
    return this.cached ? this.responses.admit(mixKey(zone.code, from, to), body, true) : body;
  }

  /** Heap bytes held by encoded bodies kept for reuse, compressed variants included. */
  get cachedBodyBytes(): number {
    return this.responses.heldBytes;
  }

  private async latestFromStore(basis: Basis | undefined): Promise<ZoneReading[]> {
    const latest = await fromStore(() => this.store.latestPerZone(basis));
    if (basis !== undefined) return inZoneOrder(latest);
    const forecasts = await fromStore(() => this.store.newestForecasts(SERVED_FORECAST_KIND));
    const withForecasts = latest.filter((reading) => {
      const forecast = forecasts.find((candidate) => candidate.zone === reading.zone);
      return servedForecast(reading.ts, forecast) === undefined;
    });
    for (const forecast of forecasts) {
      const newest = latest.find((reading) => reading.zone === forecast.zone)?.ts;
      const served = servedForecast(newest, forecast);
      if (served) withForecasts.push({ zone: forecast.zone, ...served });
    }
    return inZoneOrder(withForecasts);
  }

  /**
   * The GB operator's forecast as the default basis serves it after the zone's settled readings,
   * read from the store; undefined for a zone without one, or once its interval is settled.
   */
  async servedForecastFromStore(zone: string): Promise<Reading | undefined> {
    const forecast = (await fromStore(() => this.store.newestForecasts(SERVED_FORECAST_KIND))).find(
      (candidate) => candidate.zone === zone,
    );
    if (!forecast) return undefined;
    const [settled] = await fromStore(() =>
      this.store.readingsInWindow(zone, forecast.ts, Number.MAX_SAFE_INTEGER, 1),
    );
    return servedForecast(settled?.ts, forecast);
  }

  private encode(text: string, nextFrom?: number): EncodedBody {
    const body = new EncodedBody(Buffer.from(text), nextFrom);
    this.encoded.bodies++;
    this.encoded.bytes += body.body.length;
    return body;
  }

  /** The window `from <= ts < to` of a series as a history body, truncated at MAX_POINTS. */
  private encodeWindow(zone: string, from: number, to: number, series: ZoneSeries): EncodedBody {
    const start = series.lowerBound(from);
    const end = series.lowerBound(to);
    const truncation = truncate(end - start, (index) => series.ts(start + index));
    return this.encode(
      encodeHistory({
        zone,
        from,
        to,
        series,
        start,
        end: truncation ? start + MAX_POINTS : end,
        ...(truncation && { note: truncation.note }),
      }),
      truncation?.nextFrom,
    );
  }

  /** A loaded cache whose store is gone answers 503, as the store would, not stale data. */
  refuseWhenStoreLost(): void {
    if (this.cache?.ready && !this.cache.storeReachable) throw API_ERRORS.storeUnavailable();
  }
}

const mixKey = (zone: string, from: number, to: number) => `mix:${zone}:${from}:${to}`;

/**
 * The truncation of a window of `count` points (`tsAt(i)`: ts of the i-th): none within the
 * cap; else where the next page starts and the note that says so.
 */
function truncate(
  count: number,
  tsAt: (index: number) => number,
): { nextFrom: number; note: string } | undefined {
  if (count <= MAX_POINTS) return undefined;
  const nextFrom = tsAt(MAX_POINTS);
  return {
    nextFrom,
    note: `truncated at ${MAX_POINTS} points: narrow the window, or request the rest with from=${formatTs(nextFrom)}`,
  };
}

/** Picks the representation for a client's Accept-Encoding: br, then gzip, else identity. */
export function representationFor(
  encoded: EncodedBody,
  acceptEncoding: string | undefined,
): Representation {
  const varies = encoded.body.length >= MIN_COMPRESS_BYTES;
  const encoding = varies ? preferredEncoding(acceptEncoding) : undefined;
  if (encoding === undefined) return { body: encoded.body, etag: encoded.etag, encoding, varies };
  return {
    body: encoding === 'br' ? encoded.br() : encoded.gzip(),
    etag: `${encoded.etag.slice(0, -1)}-${encoding}"`,
    encoding,
    varies,
  };
}

function preferredEncoding(header: string | undefined): 'br' | 'gzip' | undefined {
  if (!header) return undefined;
  const accepted = new Set(
    header
      .split(',')
      .map((part) => part.trim().toLowerCase())
      .filter((part) => !/;\s*q=0(\.0*)?$/.test(part))
      .map((part) => part.split(';')[0]!.trim()),
  );
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip')) return 'gzip';
  return undefined;
}

const inZoneOrder = (readings: ZoneReading[]): ZoneReading[] =>
  readings
    .filter((reading) => ZONE_ORDER.has(reading.zone))
    .sort((a, b) => ZONE_ORDER.get(a.zone)! - ZONE_ORDER.get(b.zone)!);

/** Store failures become 503 with retry-after: the client retries, nothing is lost. */
export async function fromStore<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch {
    throw API_ERRORS.storeUnavailable();
  }
}
