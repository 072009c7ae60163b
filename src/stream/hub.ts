import type { ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Basis } from '../core/factors.js';
import type { AppliedChanges } from '../read/reading-cache.js';
import type { Reads } from '../read/reads.js';
import type { StoreKey } from '../read/read-model.js';
import { changePages, type ChangePosition } from './change-pages.js';
import { eventChunks, idLine, PreparedEvents, type BatchRest, type Chunk } from './events.js';
import { ClientGone, drained, LoopTurns } from './pacing.js';

/**
 * The engine of `GET /v1/stream` (extensions §7): the open streams of one app and what each is
 * sent. It reads only through `Reads`; the route (`http/routes/stream.ts`) keeps the transport: the
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
 *
 * A write larger than a page is read in pages (changePages): the hub and each client keep where
 * they are inside it (`within`), an event of it gets no `id:` until a page holds its end, and
 * a client goes live only where the live clients are, never halfway into a write they were sent.
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
  /** Write `cursor + 1` has been sent up to this key (a write larger than a page). */
  within: StoreKey | undefined;
  /** Replaying from the store: live changes are not sent until the replay catches up. */
  live: boolean;
  /**
   * The version of the last event it was sent: above `cursor`, part of a write has been sent,
   * not all of it, and the stream may not end before the rest.
   */
  sent: number;
  /** The stream's age is up: it ends at the end of the write in progress. */
  ending: boolean;
  /** Bytes its socket had taken at the previous heartbeat. */
  takenAtHeartbeat: number;
}

/** Part of a write has been sent to `client`, not all of it. */
const midWrite = (client: StreamClient) => client.sent > client.cursor;

/** Notes that `chunk` has been written to `client`. */
function wrote(client: StreamClient, chunk: Chunk): void {
  if (chunk.upTo > client.cursor) client.within = undefined;
  [client.cursor, client.sent] = [chunk.upTo, chunk.last];
}

/** Whether two keys (or their absence) are the same. */
const sameKey = (a: StoreKey | undefined, b: StoreKey | undefined) =>
  a === b || (a !== undefined && b !== undefined && a.zone === b.zone && a.ts === b.ts);

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
  /** And write `version + 1` up to this key, while a write larger than a page is sent. */
  private within: StoreKey | undefined;
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

  /** Whether a stored zone is served now (extensions §16: with ZONES=all, nodes come and go). */
  private readonly served = (zone: string): boolean => this.reads.zones.has(zone);

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
      within: undefined,
      live: false,
      sent: cursor,
      ending: false,
      takenAtHeartbeat: bytesTaken(response),
    };
    client.live = this.caughtUp(client);
    const end = () => {
      if (midWrite(client)) client.ending = true;
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
    // In the middle of a write (a catch-up that failed there), the rest is read from the store.
    if (
      applied.changes === undefined ||
      applied.fromVersion > this.version ||
      this.within !== undefined
    ) {
      return this.catchUp(applied.version);
    }
    this.send(new PreparedEvents(applied.changes, this.served), applied.version);
  }

  /**
   * Reads from the store what the live clients have not been sent, up to the store's version
   * (at least `target`). With no client open, only the version moves on.
   */
  private async catchUp(target = 0): Promise<void> {
    if (this.version < 0 || this.closed) return;
    if (this.liveClients() === 0) {
      const version = Math.max(target, await this.reads.dataVersion());
      if (version > this.version) [this.version, this.within] = [version, undefined];
      return;
    }
    for await (const page of changePages(this.reads, this.position())) {
      this.send(new PreparedEvents(page.changes, this.served), page.upTo, page.within);
    }
  }

  /** What every live client has been sent. */
  private position(): ChangePosition {
    return { version: this.version, within: this.within };
  }

  /** Whether `client` has been sent all the live clients have: then it is sent live changes. */
  private caughtUp(client: StreamClient): boolean {
    if (client.cursor !== this.version) return client.cursor > this.version;
    return sameKey(client.within, this.within);
  }

  private liveClients(): number {
    let live = 0;
    for (const client of this.clients) if (client.live) live++;
    return live;
  }

  /**
   * Sends a batch of changes, complete up to version `upTo` (and up to the key `within` of the
   * next write), to every live client.
   */
  private send(events: PreparedEvents, upTo: number, within?: StoreKey): void {
    for (const client of this.clients) {
      if (client.live && (client.cursor < upTo || (client.cursor === upTo && within))) {
        this.sendLive(client, { events: events.on(client.basis), from: 0, upTo, within });
      }
    }
    if (upTo >= this.version) [this.version, this.within] = [upTo, within];
  }

  /**
   * Writes a batch to one client while it keeps up, a chunk at a time. Once what it has not
   * read yet would pass `maxUnsentBytes`, the rest is not buffered: the client is sent it at the
   * pace it reads, then replays from the store (a large write, a backfill, or a client that
   * paused). A write larger than a chunk may be cut there: its rest follows, nothing twice.
   */
  private sendLive(client: StreamClient, batch: BatchRest): void {
    const { response } = client;
    let from = batch.from;
    for (const chunk of eventChunks(client, batch)) {
      if (response.destroyed || response.writableEnded) return;
      const unsent = response.writableLength;
      if (unsent > 0 && unsent + chunk.text.length > this.limits.maxUnsentBytes) {
        client.live = false;
        void this.replay(client, { ...batch, from });
        return;
      }
      response.write(chunk.text);
      wrote(client, chunk);
      if (this.endIfDue(client)) return;
      from = chunk.next;
    }
    const end = this.batchEnd(client, batch);
    if (end === '' || write(response, end)) this.endIfDue(client);
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
        const from = { version: client.cursor, within: client.within };
        for await (const page of changePages(this.reads, from, REPLAY_PAGE_ROWS)) {
          if (client.response.writableEnded) return;
          const events = new PreparedEvents(page.changes, this.served).on(client.basis);
          const batch = { events, from: 0, upTo: page.upTo, within: page.within };
          await this.sendPaced(client, batch, turns);
          // A turn between pages whatever the time: reading a page is the costly part.
          await nextTurn();
        }
        // No await since the last check: no batch can slip between the replay and going live.
        client.live = this.caughtUp(client);
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
    for (const chunk of eventChunks(client, rest)) {
      if (response.destroyed || response.writableEnded) throw new ClientGone();
      const more = response.write(chunk.text);
      wrote(client, chunk);
      if (this.endIfDue(client)) return;
      if (!more) await drained(response);
      await turns.yieldIfDue();
    }
    const end = this.batchEnd(client, rest);
    if (end !== '' && !write(response, end)) throw new ClientGone();
    this.endIfDue(client);
  }

  /**
   * Where `client` is once it has been sent `batch` whole: the text that tells it so (a bare
   * `id` line past writes not for it, or nothing).
   */
  private batchEnd(client: StreamClient, batch: BatchRest): string {
    if (client.cursor > batch.upTo) return '';
    const moved = client.cursor < batch.upTo;
    [client.cursor, client.within] = [batch.upTo, batch.within];
    return moved ? idLine(batch.upTo) : '';
  }

  /** Ends the stream of `client` if its age is up and it is between two writes. */
  private endIfDue(client: StreamClient): boolean {
    if (!client.ending || midWrite(client)) return false;
    client.response.end();
    return true;
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
