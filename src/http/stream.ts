import type { IncomingMessage, ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Basis } from '../core/factors.js';
import { formatTs } from '../core/time.js';
import { ZONES } from '../core/zones.js';
import { publishedReading, type AppliedChanges } from '../read/reading-cache.js';
import type { Reads } from '../read/reads.js';
import type { ReadingChange } from '../read/read-model.js';
import { API_ERRORS } from './api-errors.js';
import { round1 } from '../core/units.js';
import { CACHE_CONTROL } from './headers.js';
import { interpretStream, readParams, STREAM_PARAMS } from './query.js';
import { errorResponses, StreamQuery, streamedResponses } from './schemas.js';
import { LoopTurns } from './loop-turns.js';
import { endAtAge, StreamAdmission } from './stream-admission.js';
import { ClientGone, drained } from './streaming.js';

/**
 * `GET /v1/stream` (extensions §7): server-sent events, one `reading` event per reading
 * published or revised on the chosen zones and basis, `id` the store's data version.
 *
 * Every instance emits what its own reading cache applies (the cache follows the store by
 * polling and, on PostgreSQL, LISTEN/NOTIFY), so a stream works on any instance of a scaled-out
 * deployment. Without a cache (or when the cache reloaded everything instead of applying
 * changes), the hub reads the changes from the store itself (`changesSince`).
 *
 * Resuming: the events of one write share its version, and only the last event of each write
 * carries the `id:` field (SSE keeps the last id seen), so a client cut off in the middle of a
 * write resumes before it, never after it: `Last-Event-ID` replays from the store everything
 * written since, at the client's pace, then the stream goes live. A client that got nothing for
 * a while gets a bare `id:` line (no event) so that its resume point moves on too.
 */

export interface StreamLimits {
  /** Open streams per client IP (extensions §7: 5). */
  readonly maxPerAddress: number;
  /** Open streams per client network: IPv4 /24, IPv6 /64. */
  readonly maxPerPrefix: number;
  /** A stream ends after this long, less up to a quarter at random; the client resumes. */
  readonly maxAgeMs: number;
  /** Open streams on this instance, all clients together (STREAM_MAX). */
  readonly maxInAll: number;
  /**
   * Time between two comment heartbeats; below the socket idle timeout (75 s). A client that
   * takes no byte from one to the next while bytes wait for it is let go.
   */
  readonly heartbeatMs: number;
  /**
   * Bytes a client may leave unread while it is sent changes live; beyond, it is sent them at
   * the pace it reads, from the store.
   */
  readonly maxUnsentBytes: number;
  /** Without a reading cache: how often the store's data version is polled. */
  readonly pollMs: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  maxPerAddress: 5,
  maxPerPrefix: 250,
  maxAgeMs: 30 * 60_000,
  maxInAll: 1000,
  heartbeatMs: 15_000,
  maxUnsentBytes: 128 * 1024,
  pollMs: 2000,
};

/** What EventSource waits before it reconnects, in ms (the `retry:` field). */
const RETRY_MS = 5000;
/** Changes read from the store per query when catching up. */
const PAGE_ROWS = 5000;
/** Changes read per query when replaying: one page is read, and its events built, in one go. */
const REPLAY_PAGE_ROWS = 1000;
/** Event text written at once. */
const CHUNK_CHARS = 16 * 1024;

let openInProcess = 0;

/** Streams open in this process now, every app together: for the operator's metrics. */
export function openStreamCount(): number {
  return openInProcess;
}

export interface StreamDeps {
  readonly reads: Reads;
  readonly clientAddress: (request: IncomingMessage) => string;
  /** The per-IP rate limit, counted once when a stream opens. */
  readonly limit: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  readonly limits: StreamLimits;
  readonly logger?: Logger;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's open streams, and of them those replaying (not sent live changes). */
    streamStats(): { readonly open: number; readonly replaying: number };
  }
}

export function registerStream(app: FastifyInstance, deps: StreamDeps): void {
  const { reads, clientAddress, limit, limits } = deps;
  const hub = new StreamHub(reads, limits, deps.logger);
  app.decorate('streamStats', () => hub.stats());
  const admission = new StreamAdmission(limits);
  // Open streams never end by themselves: close them first, or the server would wait for them.
  app.addHook('preClose', async () => hub.close());

  app.get(
    '/v1/stream',
    {
      schema: {
        summary: 'Readings as they are published or revised, as server-sent events',
        description:
          'A `text/event-stream` (use EventSource, or `curl -N`). First `retry: 5000` and the ' +
          'current `id`; then one `reading` event per reading published or revised on the ' +
          'zones and basis asked, `data` `{zone, ts, gco2eq_kwh, method}`, `id` the data ' +
          'version (on the last event of each write); a `: heartbeat` comment every 15 s. ' +
          'Send `Last-Event-ID` (EventSource does) to get everything written since that id ' +
          'before the stream goes live. Counts once against the rate limit when opened; at most ' +
          `${limits.maxPerAddress} open streams per client IP.`,
        operationId: 'streamReadings',
        querystring: StreamQuery,
        headers: {
          type: 'object',
          properties: {
            'last-event-id': {
              type: 'string',
              description:
                'The id of the last event received: the stream first replays every reading ' +
                'written after it.',
            },
          },
        },
        response: {
          ...streamedResponses(
            {
              'text/event-stream':
                'Server-sent events: `event: reading`, `data: {"zone":"DE","ts":"...",' +
                '"gco2eq_kwh":301.2,"method":"computed:v1"}`, `id: <data version>`.',
            },
            'The stream; it stays open until the client closes it (or reads too slowly: then it ' +
              'is closed and the client resumes with Last-Event-ID).',
          ),
          ...errorResponses(400, 404, 429, 503),
          400: {
            ...errorResponses(400)[400],
            description:
              'Bad request: a parameter is missing, repeated or unparseable, or Last-Event-ID ' +
              'is not a whole number.',
          },
          429: {
            ...errorResponses(429)[429],
            description:
              `Rate limit exceeded, or this client IP has ${limits.maxPerAddress} streams ` +
              'open; retry after the seconds in retry-after.',
          },
          503: {
            ...errorResponses(503)[503],
            description:
              'The data store is unreachable, or this server has as many streams open as it ' +
              'allows; retry after the seconds in retry-after.',
          },
        },
      },
      onRequest: limit,
    },
    async (request, reply) => {
      const asked = interpretStream(readParams(request.url, STREAM_PARAMS));
      const lastEventId = interpretLastEventId(request.headers['last-event-id']);
      reads.refuseWhenStoreLost();
      const response = reply.raw;
      // At the cap, the oldest stream of the network holding the most may give way to this one.
      const release = admission.admit(clientAddress(request.raw), () => response.destroy(), {
        perAddress: () => API_ERRORS.tooManyStreams(limits.maxPerAddress),
        perPrefix: () => API_ERRORS.tooManyStreamsFromNetwork(limits.maxPerPrefix),
        inAll: () => API_ERRORS.serverBusy('streams'),
      });
      // Before any wait: a client gone meanwhile must give its place back too.
      response.once('close', release);
      let storeVersion: number;
      try {
        await hub.follow();
        storeVersion = await reads.dataVersion();
      } catch (error) {
        release();
        throw error;
      }
      reply.hijack();
      if (response.destroyed) return;
      response.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        'content-type': 'text/event-stream',
        'cache-control': CACHE_CONTROL.stream,
        // Proxies that buffer responses (nginx) would hold the events back.
        'x-accel-buffering': 'no',
      });
      if (request.method === 'HEAD') {
        response.end();
        return;
      }
      // An id from another deployment, beyond this store's version, cannot be resumed: start now.
      const since = lastEventId === undefined ? undefined : Math.min(lastEventId, storeVersion);
      const zones = asked.zones.length === ZONES.length ? undefined : asked.zones;
      endAtAge(response, limits.maxAgeMs, hub.open(response, zones, asked.basis, since));
    },
  );
}

/** `Last-Event-ID`: a data version this server sent, or absent. */
function interpretLastEventId(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const text = (Array.isArray(header) ? header.join(',') : header).trim();
  if (text === '') return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value)) throw API_ERRORS.invalidLastEventId();
  return value;
}

type BasisKey = 'default' | Basis;

interface StreamClient {
  readonly response: ServerResponse;
  /** Undefined: every zone. */
  readonly zones: ReadonlySet<string> | undefined;
  readonly basis: Basis | undefined;
  /** Every change up to this data version has been sent to this client, or does not concern it. */
  cursor: number;
  /** Replaying from the store: live changes are not sent until the replay catches up. */
  live: boolean;
  /** Part of a write has been sent, not all of it: the stream may not end before the rest. */
  midWrite: boolean;
  /** The stream's age is up: it ends at the end of the write in progress. */
  ending: boolean;
  /** Bytes its socket had taken at the previous heartbeat. */
  takenAtHeartbeat: number;
}

/** Writes to a stream still open; false when it has closed (nothing is written then). */
function write(response: ServerResponse, text: string): boolean {
  if (response.destroyed || response.writableEnded) return false;
  response.write(text);
  return true;
}

/** One reading event, written as the client needs it (with or without `id`). */
interface ReadingEvent {
  readonly zone: string;
  readonly version: number;
  readonly data: string;
}

/** The events of a set of changes on each basis, built once for every client that needs them. */
class PreparedEvents {
  private readonly built = new Map<BasisKey, readonly ReadingEvent[]>();

  constructor(private readonly changes: readonly ReadingChange[]) {}

  on(basis: Basis | undefined): readonly ReadingEvent[] {
    const key: BasisKey = basis ?? 'default';
    let events = this.built.get(key);
    if (!events) {
      const list: ReadingEvent[] = [];
      for (const change of this.changes) {
        const reading = publishedReading(change, basis);
        if (!reading) continue;
        list.push({
          zone: change.zone,
          version: change.version,
          data:
            `{"zone":"${change.zone}","ts":"${formatTs(reading.ts)}",` +
            `"gco2eq_kwh":${round1(reading.value)},"method":"${reading.method}"}`,
        });
      }
      this.built.set(key, (events = list));
    }
    return events;
  }
}

/** Event text of consecutive events, the last one at `next - 1` in the events it was cut from. */
interface Chunk {
  readonly text: string;
  /** Every write up to this version has been sent whole once this chunk is. */
  readonly upTo: number;
  /** Where the events after this chunk start. */
  readonly next: number;
  /** The chunk ends in the middle of a write (a write larger than a chunk). */
  readonly midWrite: boolean;
}

/**
 * The events of `events`, from index `from`, that `client` has not had (above its cursor, in its
 * zones), as chunks of about CHUNK_CHARS. The last event of each write carries the `id`, so the
 * id a client keeps is that of a write it got whole; a write larger than a chunk is cut between
 * chunks, and `next` says where its rest starts, so that it is sent once, never again.
 */
function* eventChunks(
  client: StreamClient,
  events: readonly ReadingEvent[],
  from = 0,
): Generator<Chunk> {
  let text = '';
  let upTo = client.cursor;
  let midWrite = false;
  const mine = (event: ReadingEvent) =>
    event.version > client.cursor && (!client.zones || client.zones.has(event.zone));
  for (let i = from; i < events.length; i++) {
    const event = events[i]!;
    if (!mine(event)) continue;
    let next = i + 1;
    while (next < events.length && !mine(events[next]!)) next++;
    midWrite = next < events.length && events[next]!.version === event.version;
    if (midWrite) {
      text += `event: reading\ndata: ${event.data}\n\n`;
    } else {
      text += `event: reading\nid: ${event.version}\ndata: ${event.data}\n\n`;
      upTo = event.version;
    }
    if (text.length >= CHUNK_CHARS) {
      yield { text, upTo, next: i + 1, midWrite };
      text = '';
    }
  }
  if (text !== '') yield { text, upTo, next: events.length, midWrite };
}

/** The events of a batch a client has still to be sent, from `from`; complete up to `upTo`. */
interface BatchRest {
  readonly events: readonly ReadingEvent[];
  readonly from: number;
  readonly upTo: number;
}

/** Bytes the socket of `response` has handed to the kernel: its client's progress. */
function bytesTaken(response: ServerResponse): number {
  const socket = response.socket;
  return socket ? socket.bytesWritten - socket.writableLength : 0;
}

/** A bare `id` line (no event): moves the client's resume point on past writes not for it. */
const idLine = (version: number) => `id: ${version}\n\n`;

/**
 * Every change after data version `since`, in pages that each end on a whole write, with the
 * version up to which the page is complete.
 */
async function* changePages(
  reads: Reads,
  since: number,
  pageRows = PAGE_ROWS,
): AsyncGenerator<{ readonly changes: readonly ReadingChange[]; readonly upTo: number }> {
  let cursor = since;
  let limit = pageRows;
  for (;;) {
    const page = await reads.changesSince(cursor, limit);
    const rows = page.changes;
    if (rows.length < limit || page.complete) {
      yield { changes: rows, upTo: page.version };
      return;
    }
    // The page may end inside a write: keep its last write for the next page.
    const lastVersion = rows.at(-1)!.version;
    const end = rows.findIndex((row) => row.version === lastVersion);
    if (end === 0) {
      // One write larger than a page: read it whole.
      limit *= 2;
      continue;
    }
    yield { changes: rows.slice(0, end), upTo: lastVersion - 1 };
    cursor = lastVersion - 1;
    limit = pageRows;
  }
}

/** The open streams of one app and what they are sent. */
class StreamHub {
  private readonly clients = new Set<StreamClient>();
  /** Changes up to this version have been sent to every live client; -1: not following yet. */
  private version = -1;
  private following: Promise<void> | undefined;
  /** Sends happen one batch after another, in version order. */
  private queue: Promise<void> = Promise.resolve();
  private readonly timers: NodeJS.Timeout[] = [];
  private unsubscribe: Promise<(() => Promise<void>) | undefined> | undefined;
  private closed = false;

  constructor(
    private readonly reads: Reads,
    private readonly limits: StreamLimits,
    private readonly logger: Logger | undefined,
  ) {
    reads.onApplied((applied) => this.enqueue(() => this.applied(applied)));
  }

  /** Streams open, and of them those replaying (not sent live changes). */
  stats(): { readonly open: number; readonly replaying: number } {
    return { open: this.clients.size, replaying: this.clients.size - this.liveClients() };
  }

  /** Starts following the store (when the first stream opens); rejects if it is unreachable. */
  follow(): Promise<void> {
    this.following ??= this.reads.dataVersion().then(
      (version) => {
        this.version = Math.max(this.version, version);
        const heartbeat = setInterval(() => this.heartbeat(), this.limits.heartbeatMs);
        this.timers.push(heartbeat);
        if (!this.reads.follows) {
          // No memory to follow: poll the store, and listen where it pushes (PostgreSQL).
          const poll = () => this.enqueue(() => this.catchUp());
          this.timers.push(setInterval(poll, this.limits.pollMs));
          this.unsubscribe = this.reads.subscribe(poll).catch(() => undefined);
        }
        for (const timer of this.timers) timer.unref();
      },
      (error: unknown) => {
        this.following = undefined;
        throw error;
      },
    );
    return this.following;
  }

  /**
   * Adds a stream; `since` is its Last-Event-ID (undefined: from now on). Returns how to end it
   * (at its age): at the end of the write in progress, so that its client resumes after it.
   */
  open(
    response: ServerResponse,
    zones: readonly { code: string }[] | undefined,
    basis: Basis | undefined,
    since: number | undefined,
  ): () => void {
    const cursor = since ?? this.version;
    const client: StreamClient = {
      response,
      zones: zones && new Set(zones.map((zone) => zone.code)),
      basis,
      cursor,
      live: cursor >= this.version,
      midWrite: false,
      ending: false,
      takenAtHeartbeat: bytesTaken(response),
    };
    const end = () => {
      if (client.midWrite) client.ending = true;
      // Bytes still unread: cut rather than ended, which would wait for a client that may never
      // read them.
      else if (response.writableLength > 0) response.destroy();
      else response.end();
    };
    if (response.destroyed) return end;
    this.clients.add(client);
    openInProcess++;
    response.once('close', () => {
      this.clients.delete(client);
      openInProcess--;
    });
    write(response, `retry: ${RETRY_MS}\nid: ${cursor}\n\n`);
    if (!client.live) void this.replay(client);
    return end;
  }

  /** Ends every stream (clients reconnect elsewhere) and stops following. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    for (const client of this.clients) if (!client.response.writableEnded) client.response.end();
    const unsubscribe = await this.unsubscribe;
    await unsubscribe?.();
  }

  private enqueue(work: () => Promise<void> | void): void {
    this.queue = this.queue
      .then(work)
      .catch((error: unknown) => this.logger?.warn({ err: error }, 'stream: changes not sent'));
  }

  /** What the reading cache applied: sent on as it is, or read from the store after a reload. */
  private async applied(applied: AppliedChanges): Promise<void> {
    if (this.version < 0 || this.closed) return;
    if (applied.changes === undefined || applied.fromVersion > this.version) {
      return this.catchUp(applied.version);
    }
    this.send(new PreparedEvents(applied.changes), applied.version);
  }

  /**
   * Reads from the store what the live clients have not been sent, up to the store's version
   * (at least `target`). With no client open, only the version moves on.
   */
  private async catchUp(target = 0): Promise<void> {
    if (this.version < 0 || this.closed) return;
    if (this.liveClients() === 0) {
      this.version = Math.max(this.version, target, await this.reads.dataVersion());
      return;
    }
    for await (const page of changePages(this.reads, this.version)) {
      this.send(new PreparedEvents(page.changes), page.upTo);
    }
  }

  private liveClients(): number {
    let live = 0;
    for (const client of this.clients) if (client.live) live++;
    return live;
  }

  /** Sends a batch of changes, complete up to version `upTo`, to every live client. */
  private send(events: PreparedEvents, upTo: number): void {
    for (const client of this.clients) {
      if (client.live && client.cursor < upTo) this.sendLive(client, events.on(client.basis), upTo);
    }
    this.version = Math.max(this.version, upTo);
  }

  /**
   * Writes a batch to one client while it keeps up, a chunk at a time. Once what it has not
   * read yet would pass `maxUnsentBytes`, the rest is not buffered: the client is sent it at the
   * pace it reads, then replays from the store (a large write, a backfill, or a client that
   * paused). A write larger than a chunk may be cut there: its rest follows, nothing twice.
   */
  private sendLive(client: StreamClient, events: readonly ReadingEvent[], upTo: number): void {
    const { response } = client;
    let from = 0;
    for (const chunk of eventChunks(client, events)) {
      if (response.destroyed || response.writableEnded) return;
      const unsent = response.writableLength;
      if (unsent > 0 && unsent + chunk.text.length > this.limits.maxUnsentBytes) {
        client.live = false;
        void this.replay(client, { events, from, upTo });
        return;
      }
      response.write(chunk.text);
      client.cursor = chunk.upTo;
      client.midWrite = chunk.midWrite;
      from = chunk.next;
    }
    if (client.cursor < upTo && write(response, idLine(upTo))) client.cursor = upTo;
  }

  /**
   * Sends a client that is not live what it has not had: the rest of a batch it fell behind
   * in, then what was written since its cursor (its Last-Event-ID), read from the store; then
   * lets it go live.
   */
  private async replay(client: StreamClient, rest?: BatchRest): Promise<void> {
    const turns = new LoopTurns();
    try {
      if (rest) await this.sendPaced(client, rest, turns);
      while (!client.live) {
        for await (const page of changePages(this.reads, client.cursor, REPLAY_PAGE_ROWS)) {
          const events = new PreparedEvents(page.changes).on(client.basis);
          await this.sendPaced(client, { events, from: 0, upTo: page.upTo }, turns);
          // A turn between pages whatever the time: reading a page is the costly part.
          await nextTurn();
        }
        // No await since the last check: no batch can slip between the replay and going live.
        if (client.cursor >= this.version) client.live = true;
      }
    } catch (error) {
      if (!(error instanceof ClientGone)) {
        this.logger?.warn({ err: error }, 'stream: replay failed; the client resumes later');
      }
      // An ended stream (its age, the server closing) keeps what it was sent.
      if (!client.response.writableEnded) client.response.destroy();
    }
  }

  /**
   * Writes events to one client at the pace it reads: a replay may be long, and only this
   * client waits for it. A stream whose age is up ends at the first whole write.
   */
  private async sendPaced(client: StreamClient, rest: BatchRest, turns: LoopTurns): Promise<void> {
    const { response } = client;
    for (const chunk of eventChunks(client, rest.events, rest.from)) {
      if (response.destroyed || response.writableEnded) throw new ClientGone();
      const more = response.write(chunk.text);
      client.cursor = chunk.upTo;
      client.midWrite = chunk.midWrite;
      if (client.ending && !chunk.midWrite) response.end();
      if (!more) await drained(response);
      await turns.yieldIfDue();
    }
    if (client.cursor < rest.upTo && !write(response, idLine(rest.upTo))) throw new ClientGone();
    client.cursor = rest.upTo;
  }

  /**
   * A comment to every stream. One whose client has taken no byte since the previous heartbeat
   * while bytes waited for it is closed: it stopped reading (it resumes with Last-Event-ID if it
   * comes back). One that reads, however slowly, is left to read.
   */
  private heartbeat(): void {
    for (const client of this.clients) {
      const { response } = client;
      const taken = bytesTaken(response);
      const stalled = response.writableLength > 0 && taken === client.takenAtHeartbeat;
      client.takenAtHeartbeat = taken;
      if (stalled) {
        response.destroy();
        continue;
      }
      write(response, ': heartbeat\n\n');
    }
  }
}
