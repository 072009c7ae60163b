import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { CATEGORIES } from '../../core/factors.js';
import { TRACED_CATEGORIES } from '../../core/consumption/trace-hour.js';
import { formatTs } from '../../core/time.js';
import type { Zone } from '../../core/zones.js';
import type { ReadModel } from '../../read/read-model.js';
import type { Reads } from '../../read/reads.js';
import { API_ERRORS } from '../contract/errors.js';
import { round1 } from '../../core/units.js';
import { apiCategory, MIX_MEMBER } from '../transport/encode.js';
import { CACHE_CONTROL, CORS_HEADERS } from '../contract/headers.js';
import {
  EXPORT_PARAMS,
  type ExportRequest,
  interpretExport,
  type Offered,
  readParams,
} from '../contract/params.js';
import {
  MAX_EXPORT_DAYS,
  MAX_EXPORTS_IN_ALL,
  MAX_EXPORTS_PER_ADDRESS,
} from '../contract/limits.js';
import { ClientGone, drained, LoopTurns } from '../../stream/pacing.js';
import { guardReadRate, type ReadRateGuard, type ReadRateLimits } from '../transport/read-rate.js';
import { errorResponsesWorded, ExportQuery, streamedResponses } from '../contract/schemas.js';
import { SlotCounter, startLongResponse } from '../transport/long-responses.js';
import type { LimitHook } from './route-options.js';

/**
 * `GET /v1/export` (extensions §6): every published reading of some zones in a window of at
 * most 400 days, as CSV or NDJSON, streamed as it is read. Memory per export stays flat whatever
 * its size: a zone's points are read in keyset pages and written in chunks of CHUNK_CHARS, each
 * after the client has taken the previous ones.
 *
 * Rows equal the `/v1/intensity` pages of the same window, row by row: they come from the same
 * read model (read/read-model.ts), the GB provisional reading included where the default basis
 * shows it.
 */

export interface ExportDeps {
  readonly reads: Reads;
  readonly clock: () => number;
  readonly clientAddress: (request: IncomingMessage) => string;
  /** The per-IP rate limit, counted once per export. */
  readonly limit: LimitHook;
  readonly offered: Offered;
}

/**
 * An export lasts at most 15 minutes (a 400-day all-zone export with its mix, about 100 MB,
 * takes well under a minute at 10 Mbit/s), and its client takes at least 16 KiB/s over every
 * 10 s in which bytes wait for it: a client that reads nothing gives its slot back about 10 s
 * after the kernel's buffers are full, one reading 1 KiB/s 10 s after it starts.
 */
const DEFAULT_EXPORT_READ_RATE: ReadRateLimits = {
  deadlineMs: 15 * 60_000,
  minBytesPerSecond: 16 * 1024,
  windowMs: 10_000,
};

/** Rows read per page. */
const PAGE_ROWS = 10_000;
/**
 * Mixes read per page: a page is one synchronous read on SQLite, and a mix row costs several
 * times a reading (10,000 of them held the loop for 20-30 ms).
 */
const MIX_PAGE_ROWS = 2_500;
/** Text written at once: large enough to cost few writes, small enough to keep memory flat. */
const CHUNK_CHARS = 64 * 1024;

const MIX_COLUMNS = CATEGORIES.map(apiCategory);
/** With accounting=consumption, include=mix gives the traced mix (extensions §15). */
const CONSUMPTION_COLUMNS = TRACED_CATEGORIES.map(apiCategory);
const CSV_HEADER = 'zone,ts,gco2eq_kwh,method';
const MEDIA_TYPE = {
  csv: 'text/csv; charset=utf-8; header=present',
  ndjson: 'application/x-ndjson',
} as const;

export function registerExport(app: FastifyInstance, deps: ExportDeps): void {
  const { reads, clock, clientAddress, limit, offered } = deps;
  const slots = new SlotCounter(MAX_EXPORTS_PER_ADDRESS, MAX_EXPORTS_IN_ALL);
  const readRate = DEFAULT_EXPORT_READ_RATE;

  app.get(
    '/v1/export',
    {
      schema: {
        summary: 'Every published reading of some zones in a window, as a file',
        description:
          `Streams the readings with from <= ts < to (at most ${MAX_EXPORT_DAYS} days; no point ` +
          'cap) of each zone asked, ordered by zone as /v1/zones then by ts, exactly as the ' +
          '/v1/intensity pages of the same window give them. Counts once against the rate limit; ' +
          `at most ${MAX_EXPORTS_PER_ADDRESS} exports at a time per client IP.`,
        operationId: 'exportReadings',
        querystring: ExportQuery,
        response: {
          ...streamedResponses(
            {
              'text/csv':
                `Header \`${CSV_HEADER}\` (with include=mix, then one column per category: ` +
                `${MIX_COLUMNS.join(', ')}; with accounting=consumption, the categories consumed: ` +
                `${CONSUMPTION_COLUMNS.join(', ')}), one line per reading, LF line ends.`,
              'application/x-ndjson':
                'One JSON object per line: `{zone, ts, gco2eq_kwh, method}`, with include=mix ' +
                'also `generation` (as in /v1/mix, or null for an interval without a mix; with ' +
                'accounting=consumption, `consumption` as in its /v1/mix).',
            },
            'The readings, streamed: an export cut short by a store failure ends without its ' +
              'final chunk, so a client never takes a partial file for a whole one.',
            { disposition: true },
          ),
          ...errorResponsesWorded([400, 404, 429, 503], {
            429:
              'Rate limit exceeded, or this client IP has ' +
              `${MAX_EXPORTS_PER_ADDRESS} exports under way; retry after the seconds in retry-after.`,
            503:
              'The data store is unreachable, or this server has too many exports under way; ' +
              'retry after the seconds in retry-after.',
          }),
        },
      },
      onRequest: limit,
    },
    async (request, reply) => {
      const asked = interpretExport(readParams(request.url, EXPORT_PARAMS), clock(), offered);
      const model = reads.current();
      const release = slots.take(clientAddress(request.raw), {
        perAddress: () => API_ERRORS.tooManyExports(MAX_EXPORTS_PER_ADDRESS),
        // A slot held by a client that stopped reading comes back within one read-rate window.
        inAll: () => API_ERRORS.serverBusy('exports', Math.ceil(readRate.windowMs / 1000)),
      });
      const started = await startLongResponse(
        request,
        reply,
        release,
        // From the store: fail with 503 now rather than after the headers are sent.
        async () => {
          if (!model.inMemory) await reads.dataVersion();
        },
        {
          'content-type': MEDIA_TYPE[asked.format],
          'content-disposition': `attachment; filename="${fileName(asked, offered.zones.zones.length)}"`,
          'cache-control': CACHE_CONTROL.export,
          'access-control-expose-headers': `${CORS_HEADERS['access-control-expose-headers']}, Content-Disposition`,
        },
      );
      if (!started) return;
      const response = reply.raw;
      // A client that stops reading (or reads too slowly) gives its slot back at once.
      const guard = guardReadRate(response, readRate, release);
      try {
        await writeRows(response, asked, model, guard);
        guard.stop();
        response.end();
      } catch (error) {
        // The status is sent: ending without the last chunk tells the client the file is cut.
        if (!(error instanceof ClientGone)) {
          request.log.error({ err: error, url: request.url }, 'export failed after its headers');
        }
        response.destroy();
      }
    },
  );
}

/**
 * `gridco2-DE_FR-20261120T130000Z-20261121T130000Z.csv`: what, and which window (`served`: how
 * many zones are served, which `all` is).
 */
function fileName(asked: ExportRequest, served: number): string {
  const { zones } = asked;
  const label =
    zones.length === served
      ? 'all'
      : zones.length <= 5
        ? zones.map((zone) => zone.code).join('_')
        : `${zones.length}-zones`;
  const compact = (ts: number) => formatTs(ts).replaceAll(/[-:]/g, '');
  const basis =
    (asked.accounting === 'consumption' ? '-consumption' : '') +
    (asked.basis ? `-${asked.basis}` : '');
  const extension = asked.format === 'csv' ? 'csv' : 'ndjson';
  return `gridco2-${label}${basis}-${compact(asked.from)}-${compact(asked.to)}.${extension}`;
}

/** Writes every row of the export, zone after zone, waiting for the client between chunks. */
async function writeRows(
  response: ServerResponse,
  asked: ExportRequest,
  model: ReadModel,
  guard: ReadRateGuard,
): Promise<void> {
  const out = new ChunkedText(response, guard);
  const format = rowFormat(asked);
  if (asked.format === 'csv') {
    const columns = asked.accounting === 'consumption' ? CONSUMPTION_COLUMNS : MIX_COLUMNS;
    out.add(asked.mix ? `${CSV_HEADER},${columns.join(',')}\n` : `${CSV_HEADER}\n`);
  }
  for (const zone of asked.zones) {
    const mixes = asked.mix ? new MixCursor(model, zone, asked) : undefined;
    let from = asked.from;
    for (;;) {
      const page = await model.window(
        zone.code,
        from,
        asked.to,
        PAGE_ROWS,
        asked.basis,
        asked.accounting,
      );
      const { series, start, end } = page;
      for (let i = start; i < end; i++) {
        const ts = series.ts(i);
        const mix = mixes && (await mixes.at(ts));
        if (out.add(format(zone.code, ts, series.value(i), series.method(i), mix))) {
          await out.flush();
        }
      }
      if (page.complete || end === start) break;
      from = series.ts(end - 1) + 1;
    }
  }
  await out.flush();
}

/** MWh (or %, GB) per category of one interval: generated, or with consumption, consumed. */
type Amounts = Readonly<Partial<Record<string, number>>>;

/**
 * The published mixes of a zone (with accounting=consumption, its traced mixes), read in keyset
 * pages alongside its readings (both ascending by ts): `at(ts)` is the mix of that interval, or
 * undefined when it has none.
 */
class MixCursor {
  private page: readonly { ts: number; amounts: Amounts }[] = [];
  private index = 0;
  private next: number;
  private readonly to: number;
  private done = false;

  constructor(
    private readonly model: ReadModel,
    private readonly zone: Zone,
    private readonly asked: ExportRequest,
  ) {
    this.next = asked.from;
    this.to = asked.to;
  }

  private async read(): Promise<{ ts: number; amounts: Amounts }[]> {
    const { model, zone, next, to } = this;
    if (this.asked.accounting === 'consumption') {
      const points = await model.consumptionMixes(zone.code, next, to, MIX_PAGE_ROWS);
      return points.map((point) => ({ ts: point.ts, amounts: point.consumption }));
    }
    const points = await model.mixes(zone.code, next, to, MIX_PAGE_ROWS);
    return points.map((point) => ({ ts: point.ts, amounts: point.mix }));
  }

  async at(ts: number): Promise<Amounts | undefined> {
    for (;;) {
      while (this.index < this.page.length && this.page[this.index]!.ts < ts) this.index++;
      if (this.index < this.page.length) {
        const point = this.page[this.index]!;
        return point.ts === ts ? point.amounts : undefined;
      }
      if (this.done) return undefined;
      this.page = await this.read();
      this.index = 0;
      if (this.page.length < MIX_PAGE_ROWS) this.done = true;
      if (this.page.length > 0) this.next = this.page.at(-1)!.ts + 1;
    }
  }
}

type RowFormat = (
  zone: string,
  ts: number,
  value: number,
  method: string,
  mix: Amounts | undefined,
) => string;

/** One line of the export: values 1 decimal and timestamps as every response writes them. */
function rowFormat(asked: ExportRequest): RowFormat {
  const consumed = asked.accounting === 'consumption';
  const categories: readonly string[] = consumed ? TRACED_CATEGORIES : CATEGORIES;
  const member = consumed ? 'consumption' : 'generation';
  if (asked.format === 'csv') {
    return (zone, ts, value, method, mix) => {
      const line = `${zone},${formatTs(ts)},${value},${method}`;
      if (!asked.mix) return `${line}\n`;
      // One cell per category, empty where the interval has no value for it.
      let cells = '';
      for (const category of categories) {
        const amount = mix?.[category];
        cells += amount === undefined ? ',' : `,${round1(amount)}`;
      }
      return `${line}${cells}\n`;
    };
  }
  return (zone, ts, value, method, mix) => {
    const line = `{"zone":"${zone}","ts":"${formatTs(ts)}","gco2eq_kwh":${value},"method":"${method}"`;
    if (!asked.mix) return `${line}}\n`;
    if (!mix) return `${line},"${member}":null}\n`;
    let amounts = '';
    for (const category of categories) {
      const amount = mix[category];
      if (amount === undefined) continue;
      amounts += `${amounts === '' ? '' : ','}${MIX_MEMBER.get(category)!}${round1(amount)}`;
    }
    return `${line},"${member}":{${amounts}}}\n`;
  };
}

/** Text gathered into chunks and written with backpressure: one chunk in memory at most. */
class ChunkedText {
  private text = '';
  private readonly turns = new LoopTurns();

  constructor(
    private readonly response: ServerResponse,
    private readonly guard: ReadRateGuard,
  ) {}

  /** Adds text; true when a chunk is full and `flush` should be awaited. */
  add(text: string): boolean {
    this.text += text;
    return this.text.length >= CHUNK_CHARS;
  }

  async flush(): Promise<void> {
    if (this.response.destroyed) throw new ClientGone();
    if (this.text === '') return;
    const written = this.response.write(this.text);
    this.guard.wrote(this.text.length);
    this.text = '';
    if (!written) await drained(this.response);
    await this.turns.yieldIfDue();
    if (this.response.destroyed) throw new ClientGone();
  }
}
