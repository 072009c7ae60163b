import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { API_ERRORS } from '../contract/errors.js';
import { sendRawError } from './error-handler.js';

/** Bounds on what one client, or all together, can make the process hold. */
export interface ConnectionLimits {
  /** Open connections in all; at the cap an idle one is closed to make room. */
  readonly maxConnections: number;
  /** Open connections from one address (trusted proxies are exempt). */
  readonly maxConnectionsPerAddress: number;
  /** Requests received on one connection and not yet answered (HTTP/1.1 pipelining). */
  readonly maxPipelined: number;
  /** Response bytes one connection may leave unread before it is closed. */
  readonly maxUnsentBytes: number;
  /**
   * Response bytes all connections together may leave unread; past it, the connections holding
   * the most are closed. Bounds the memory of many clients that ask and never read.
   */
  readonly maxUnsentBytesInAll: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  maxConnections: 10_000,
  maxConnectionsPerAddress: 256,
  maxPipelined: 8,
  maxUnsentBytes: 256 * 1024,
  maxUnsentBytesInAll: 64 * 1024 * 1024,
};

/** How often, at most, the unsent bytes of all connections are added up (on a request). */
const MEASURE_EVERY_MS = 50;

/** Connections without traffic either way are closed after `idleTimeout`, checked in bulk. */
export interface IdleLimit {
  readonly idleTimeout: number;
  /** How often the connections' traffic is compared with the last check. */
  readonly checkInterval: number;
}

interface Tracked {
  readonly address: string;
  /** Responses begun and not yet closed, oldest first. */
  readonly pending: Set<ServerResponse>;
  /** Its byte counters at the last idle check, and how many checks since saw them all still. */
  traffic: { read: number; written: number; unsent: number };
  quietChecks: number;
}

type ShedReason =
  | 'connection cap'
  | 'per-address cap'
  | 'too many pipelined requests'
  | 'unread responses'
  | 'unread responses in all';

const LOG_EVERY_MS = 10_000;

/**
 * Keeps the process answerable under hostile clients: caps connections (in all and per address),
 * closing idle ones first so that a new client (a health probe) still gets in; caps pipelined
 * requests (the excess is answered 429 and the connection closed); and closes a connection that leaves too many response bytes unread, instead of
 * queueing more for it. Every shed connection is counted and logged (at most every 10 s).
 */
export class ConnectionGuard {
  private readonly sockets = new Map<Socket, Tracked>();
  /** Connections with no request in flight, the longest idle first. */
  private readonly idle = new Set<Socket>();
  private readonly perAddress = new Map<string, Set<Socket>>();
  private readonly shed = new Map<ShedReason, number>();
  private lastLogAt = 0;
  private measuredAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly limits: ConnectionLimits & IdleLimit,
    private readonly log: Logger | undefined,
    /** Addresses the per-address cap does not apply to (trusted proxies carry many clients). */
    private readonly exempt: (address: string) => boolean,
    private readonly now: () => number = Date.now,
  ) {}

  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.onConnection(socket));
    // Rather than Node's socket timeout, which rearms a timer at every read and write: about
    // 0.4 us a request, 2 % of a cached response's whole cost (issue 21).
    const idleCheck = setInterval(() => this.closeIdleTooLong(), this.limits.checkInterval);
    idleCheck.unref();
    server.on('close', () => clearInterval(idleCheck));
  }

  get openConnections(): number {
    return this.sockets.size;
  }

  /** Connections closed by each rule since start. */
  get shedCounts(): ReadonlyMap<ShedReason, number> {
    return this.shed;
  }

  /**
   * Called first for every request. False: the connection was closed and the request must not be
   * answered. True: the response is pending until `release` is called, when it closes.
   */
  admit(request: IncomingMessage, response: ServerResponse): boolean {
    const socket = request.socket;
    // Requests already parsed from a connection closed since still arrive: none is answered.
    if (socket.destroyed) return false;
    const tracked = this.sockets.get(socket);
    if (!tracked) return true;
    if (tracked.pending.size >= this.limits.maxPipelined) {
      // Answered in order after the others, small, and the connection closes after it.
      this.count('too many pipelined requests');
      sendRawError(response, API_ERRORS.tooManyPipelined(this.limits.maxPipelined), {
        close: true,
      });
      return false;
    }
    if (this.unsentBytes(socket, tracked) > this.limits.maxUnsentBytes) {
      return this.close(socket, 'unread responses');
    }
    this.boundUnsentInAll();
    if (!this.sockets.has(socket)) return false;
    tracked.pending.add(response);
    this.idle.delete(socket);
    return true;
  }

  /** An admitted response closed: its connection is idle once none other is pending. */
  release(request: IncomingMessage, response: ServerResponse): void {
    const socket = request.socket;
    const tracked = this.sockets.get(socket);
    if (!tracked?.pending.delete(response)) return;
    if (tracked.pending.size === 0) this.idle.add(socket);
  }

  /**
   * Closes every connection with no request in flight: on shutdown, a kept-alive connection or
   * one that never sent a request would otherwise hold the server open until its idle timeout.
   */
  closeIdle(): void {
    for (const socket of [...this.idle]) {
      this.forget(socket);
      socket.destroy();
    }
  }

  /**
   * Closes every connection whose bytes read, written and still unsent have not moved for
   * `idleTimeout` (between that and one check interval more): an idle client, or a response
   * stalled by a client that never reads, which the per-request checks never see.
   */
  private closeIdleTooLong(): void {
    const quietChecksAllowed = Math.ceil(this.limits.idleTimeout / this.limits.checkInterval);
    for (const [socket, tracked] of this.sockets) {
      const traffic = trafficOf(socket);
      const last = tracked.traffic;
      if (
        traffic.read !== last.read ||
        traffic.written !== last.written ||
        traffic.unsent !== last.unsent
      ) {
        tracked.traffic = traffic;
        tracked.quietChecks = 0;
      } else if (++tracked.quietChecks >= quietChecksAllowed) {
        this.forget(socket);
        socket.destroy();
      }
    }
  }

  private onConnection(socket: Socket): void {
    const address = socket.remoteAddress ?? '';
    if (this.sockets.size >= this.limits.maxConnections && !this.closeOldestIdle(this.idle)) {
      this.close(socket, 'connection cap');
      return;
    }
    const sameAddress = this.perAddress.get(address) ?? new Set<Socket>();
    if (sameAddress.size >= this.limits.maxConnectionsPerAddress && !this.exempt(address)) {
      const idleOfAddress = [...sameAddress].filter((other) => this.idle.has(other));
      if (!this.closeOldestIdle(new Set(idleOfAddress))) {
        this.close(socket, 'per-address cap');
        return;
      }
    }
    sameAddress.add(socket);
    this.perAddress.set(address, sameAddress);
    this.sockets.set(socket, {
      address,
      pending: new Set(),
      traffic: trafficOf(socket),
      // Its first check comes less than an interval after it opened: not a whole quiet one.
      quietChecks: -1,
    });
    this.idle.add(socket);
    socket.once('close', () => this.forget(socket));
  }

  private closeOldestIdle(candidates: ReadonlySet<Socket>): boolean {
    const oldest = candidates.values().next().value;
    if (oldest === undefined) return false;
    this.close(
      oldest,
      this.sockets.size >= this.limits.maxConnections ? 'connection cap' : 'per-address cap',
    );
    return true;
  }

  /** Closes the connections that hold the most unread bytes while all of them hold too many. */
  private boundUnsentInAll(): void {
    const now = this.now();
    if (now - this.measuredAt < MEASURE_EVERY_MS) return;
    this.measuredAt = now;
    const holding: { socket: Socket; bytes: number }[] = [];
    let total = 0;
    for (const [socket, tracked] of this.sockets) {
      if (tracked.pending.size === 0 && socket.writableLength === 0) continue;
      const bytes = this.unsentBytes(socket, tracked);
      total += bytes;
      holding.push({ socket, bytes });
    }
    if (total <= this.limits.maxUnsentBytesInAll) return;
    holding.sort((a, b) => b.bytes - a.bytes);
    for (const { socket, bytes } of holding) {
      if (total <= this.limits.maxUnsentBytesInAll / 2) break;
      this.close(socket, 'unread responses in all');
      total -= bytes;
    }
  }

  /** Bytes written for this connection and not yet taken by the kernel, queued responses too. */
  private unsentBytes(socket: Socket, tracked: Tracked): number {
    let bytes = socket.writableLength;
    for (const response of tracked.pending) {
      // A pipelined response waiting its turn holds its bytes until it gets the socket.
      if (response.socket !== socket) bytes += response.writableLength;
    }
    return bytes;
  }

  private close(socket: Socket, reason: ShedReason): false {
    this.forget(socket);
    socket.destroy();
    this.count(reason);
    return false;
  }

  private count(reason: ShedReason): void {
    this.shed.set(reason, (this.shed.get(reason) ?? 0) + 1);
    const now = this.now();
    if (now - this.lastLogAt >= LOG_EVERY_MS) {
      this.lastLogAt = now;
      this.log?.warn(
        { shed: Object.fromEntries(this.shed), open: this.sockets.size },
        `refusing connections or requests to stay answerable (${reason}); counts since start`,
      );
    }
  }

  private forget(socket: Socket): void {
    const tracked = this.sockets.get(socket);
    if (!tracked) return;
    this.sockets.delete(socket);
    this.idle.delete(socket);
    const sameAddress = this.perAddress.get(tracked.address);
    sameAddress?.delete(socket);
    if (sameAddress?.size === 0) this.perAddress.delete(tracked.address);
  }
}

const trafficOf = (socket: Socket) => ({
  read: socket.bytesRead,
  written: socket.bytesWritten,
  unsent: socket.writableLength,
});
