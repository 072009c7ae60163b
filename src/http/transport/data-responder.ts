import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Basis } from '../../core/factors.js';
import type { Accounting } from '../../core/reading.js';
import { formatTs } from '../../core/time.js';
import type { Zone } from '../../core/zones.js';
import type { SeriesWindow } from '../../read/read-model.js';
import type { Reads } from '../../read/reads.js';
import { MAX_POINTS } from '../contract/limits.js';
import { EncodedBody, ResponseCache } from './response-cache.js';
import { API_ERRORS } from '../contract/errors.js';
import {
  encodeConsumptionMixPoint,
  encodeHistory,
  encodeLatest,
  encodeMix,
  encodeMixPoint,
} from './encode.js';
import { SOURCE_INFO } from '../../core/sources.js';

const RESPONSE_CACHE_BYTES = 64 * 1024 * 1024;
/** Points read for a window: one beyond the cap tells that it is truncated, and where. */
const WINDOW_READ = MAX_POINTS + 1;
/**
 * Mixes read and encoded in one turn of the event loop: a few ms. A whole 5000-interval page at
 * once (a synchronous SQLite read, a JSON.parse per row, then the encoding) held it for 40 to 60
 * ms on an idle machine (issue 21).
 */
export const MIX_PAGE_ROWS = 500;

/**
 * Builds the bodies of the data endpoints from the read layer: from memory when it answers
 * (bodies kept encoded until the data changes), else from the store, with the same values
 * either way (read/read-model.ts). Used by the Fastify routes and by the fast path alike, so
 * both send the same bytes. `basis` undefined is each zone's own value (the default basis);
 * `accounting` production unless asked (extensions §15).
 */
export class DataResponder {
  private readonly responses = new ResponseCache(RESPONSE_CACHE_BYTES);
  /** Bodies encoded since start, and their bytes: the work a request can cost. */
  readonly encoded = { bodies: 0, bytes: 0 };
  /** Changes of the data so far: a body read over several turns is kept only if none came. */
  private changes = 0;

  constructor(private readonly reads: Reads) {
    reads.onChange(() => {
      this.changes++;
      this.responses.clear();
    });
  }

  /** Whether memory can answer now (loaded, and its store reachable). */
  get cached(): boolean {
    return this.reads.memory !== undefined;
  }

  /** Whether memory holds a reading of `zone` on `basis` (answered without a 404). */
  hasCachedLatest(zone: string, basis?: Basis, accounting: Accounting = 'production'): boolean {
    return this.reads.memory?.hasReading(zone, basis, accounting) ?? false;
  }

  /** From memory only: undefined when memory cannot answer, or the zone has no reading. */
  cachedLatest(
    zone: string | undefined,
    basis?: Basis,
    accounting: Accounting = 'production',
  ): EncodedBody | undefined {
    const memory = this.reads.memory;
    if (!memory) return undefined;
    const key = `latest:${accounting}:${basis ?? ''}:${zone ?? ''}`;
    const known = this.responses.get(key);
    if (known) return known;
    const latest = memory.latestNow(basis, accounting);
    const selected = zone ? latest.filter((reading) => reading.zone === zone) : latest;
    if (zone && selected.length === 0) return undefined;
    return this.responses.getOrBuild(key, () => this.encode(encodeLatest(selected)));
  }

  /** From memory only: undefined when memory cannot answer. */
  cachedHistory(
    zone: string,
    from: number,
    to: number,
    basis?: Basis,
    accounting: Accounting = 'production',
  ): EncodedBody | undefined {
    const memory = this.reads.memory;
    if (!memory) return undefined;
    // Windows are admitted on their second request: unique windows pass through uncached.
    return this.responses.getOrBuild(
      `history:${accounting}:${basis ?? ''}:${zone}:${from}:${to}`,
      () =>
        this.encodeWindow(
          zone,
          from,
          to,
          memory.windowNow(zone, from, to, WINDOW_READ, basis, accounting),
        ),
      true,
    );
  }

  /** A mix body kept from an earlier request, if memory is current and holds one. */
  cachedMix(
    zone: string,
    from: number,
    to: number,
    accounting: Accounting = 'production',
  ): EncodedBody | undefined {
    return this.cached ? this.responses.get(mixKey(zone, from, to, accounting)) : undefined;
  }

  /** The latest body; 404 for a zone without reading, 503 when the store is unreachable. */
  async latest(
    zone: string | undefined,
    given: string | undefined,
    basis?: Basis,
    accounting: Accounting = 'production',
  ): Promise<EncodedBody> {
    const model = this.reads.current();
    if (model.inMemory) {
      const fromMemory = this.cachedLatest(zone, basis, accounting);
      if (!fromMemory) throw API_ERRORS.unknownZone(given ?? zone!);
      return fromMemory;
    }
    const latest = await model.latest(basis, accounting);
    const selected = zone ? latest.filter((reading) => reading.zone === zone) : latest;
    if (zone && selected.length === 0) throw API_ERRORS.unknownZone(given ?? zone);
    return this.encode(encodeLatest(selected));
  }

  async history(
    zone: string,
    from: number,
    to: number,
    basis?: Basis,
    accounting: Accounting = 'production',
  ): Promise<EncodedBody> {
    const model = this.reads.current();
    const fromMemory = this.cachedHistory(zone, from, to, basis, accounting);
    if (fromMemory) return fromMemory;
    return this.encodeWindow(
      zone,
      from,
      to,
      await model.window(zone, from, to, WINDOW_READ, basis, accounting),
    );
  }

  /**
   * The published mixes of a zone in `from <= ts < to`, at most MAX_POINTS (then truncated): read
   * and encoded MIX_PAGE_ROWS at a time, each page in its own turn of the event loop.
   */
  async mix(
    zone: Zone,
    from: number,
    to: number,
    accounting: Accounting = 'production',
  ): Promise<EncodedBody> {
    const model = this.reads.current();
    const known = this.cachedMix(zone.code, from, to, accounting);
    if (known) return known;
    const changesBefore = this.changes;
    const data: string[] = [];
    let nextFrom: number | undefined;
    // Production: the generation behind each value; consumption: the traced mix (§15).
    const readPage = async (pageFrom: number, wanted: number) =>
      accounting === 'consumption'
        ? (await model.consumptionMixes(zone.code, pageFrom, to, wanted)).map((point) => ({
            ts: point.ts,
            encoded: encodeConsumptionMixPoint(point),
          }))
        : (await model.mixes(zone.code, pageFrom, to, wanted)).map((point) => ({
            ts: point.ts,
            encoded: encodeMixPoint(point),
          }));
    for (let pageFrom = from, pages = 1; ; pages++) {
      const wanted = Math.min(MIX_PAGE_ROWS, WINDOW_READ - data.length);
      const page = await readPage(pageFrom, wanted);
      for (const point of page) {
        if (data.length < MAX_POINTS) data.push(point.encoded);
        else nextFrom = point.ts;
      }
      const done = page.length < wanted || nextFrom !== undefined;
      // Between pages, and after the last of several: a long body is assembled in a turn of its own.
      if (!done || pages > 1) await nextTurn();
      if (done) break;
      pageFrom = page.at(-1)!.ts + 1;
    }
    const note = nextFrom === undefined ? undefined : truncationNote(nextFrom);
    const unit = accounting === 'consumption' ? 'MWh' : SOURCE_INFO[zone.source].mixUnit;
    const body = this.encode(
      encodeMix({ zone: zone.code, from, to, unit, data, ...(note && { note }) }),
      nextFrom,
    );
    // Kept only while memory follows the store, and only if the data did not change while it
    // was read: the cache is emptied whenever it does.
    return model.inMemory && this.changes === changesBefore
      ? this.responses.admit(mixKey(zone.code, from, to, accounting), body, true)
      : body;
  }

  /** Heap bytes held by encoded bodies kept for reuse, compressed variants included. */
  get cachedBodyBytes(): number {
    return this.responses.heldBytes;
  }

  private encode(text: string, nextFrom?: number): EncodedBody {
    const body = new EncodedBody(Buffer.from(text), nextFrom);
    this.encoded.bodies++;
    this.encoded.bytes += body.body.length;
    return body;
  }

  /** A window of a series as a history body, truncated at MAX_POINTS. */
  private encodeWindow(zone: string, from: number, to: number, window: SeriesWindow): EncodedBody {
    const { series, start, end } = window;
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
}

const mixKey = (zone: string, from: number, to: number, accounting: Accounting) =>
  `mix:${accounting}:${zone}:${from}:${to}`;

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
  return { nextFrom, note: truncationNote(nextFrom) };
}

const truncationNote = (nextFrom: number): string =>
  `truncated at ${MAX_POINTS} points: narrow the window, or request the rest with from=${formatTs(nextFrom)}`;
