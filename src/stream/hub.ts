import type { ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Basis } from '../core/factors.js';
import type { AppliedChanges } from '../read/reading-cache.js';
import type { Reads } from '../read/reads.js';
import { changePages } from './change-pages.js';
import {
  eventChunks,
  idLine,
  PreparedEvents,
  type BatchRest,
  type ReadingEvent,
} from './events.js';
import { ClientGone, drained, LoopTurns } from './pacing.js';

/**
 * The engine of `GET /v1/stream` (extensions §7): the open streams of one app and what each is
 * sent. It reads only through `Reads`; the route (`http/stream.ts`) keeps the transport: the
 * query, Last-Event-ID, admission and headers.
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

export interface StreamStats {
  readonly open: number;
  readonly replaying: number;
}

/** What EventSource waits before it reconnects, in ms (the `retry:` field). */
const RETRY_MS = 5000;
/** Changes read per query when replaying: one page is read, and its events built, in one go. */
const REPLAY_PAGE_ROWS = 1000;

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

/** Bytes the socket of `response` has handed to the kernel: its client's progress. */
function bytesTaken(response: ServerResponse): number {
  const socket = response.socket;
  return socket ? socket.bytesWritten - socket.writableLength : 0;
}

/** The open streams of one app and what they are sent. */
export class StreamHub {
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

  /** Streams open, and of them those replaying (not sent live changes): for metrics and tests. */
  stats(): StreamStats {
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
    response.once('close', () => this.clients.delete(client));
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
      while (!client.live && !client.response.writableEnded) {
        for await (const page of changePages(this.reads, client.cursor, REPLAY_PAGE_ROWS)) {
          if (client.response.writableEnded) return;
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
      if (client.ending && !chunk.midWrite) {
        response.end();
        return;
      }
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
