import { type IncomingMessage, request as httpRequest } from 'node:http';

/**
 * A server-sent events client for black-box suites, over real HTTP: it parses the stream as the
 * HTML standard's EventSource does (fields, comments, the sticky last event id) and lets a test
 * wait for what it expects with a deadline. It uses node:http on a connection of its own, not
 * fetch: after an aborted request undici opens a spare connection that sends nothing, and such a
 * connection holds `server.close()` until its idle timeout.
 */

export interface ServerSentEvent {
  readonly event: string;
  readonly data: string;
  /** The last event id after this event was dispatched (SSE keeps the previous one). */
  readonly lastEventId: string;
  /** Whether this event's own block had an `id:` field. */
  readonly hasId: boolean;
  /** Milliseconds since the epoch at which it was parsed. */
  readonly receivedAt: number;
}

export class EventStreamClient {
  readonly events: ServerSentEvent[] = [];
  readonly comments: string[] = [];
  /** `retry:` values received. */
  readonly retries: number[] = [];
  /** The id the client would send back as Last-Event-ID now. */
  lastEventId = '';
  /** Every byte received, as text. */
  raw = '';
  ended = false;
  private buffer = '';
  private block: { event: string; data: string[]; hasId: boolean } = {
    event: '',
    data: [],
    hasId: false,
  };
  private readonly waiters = new Set<() => void>();

  private constructor(
    readonly status: number,
    readonly headers: Headers,
    private readonly response: IncomingMessage,
  ) {}

  /** Opens `url`; the body is read in the background until `close` or the server ends it. */
  static async open(url: string, headers: Record<string, string> = {}): Promise<EventStreamClient> {
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      httpRequest(url, { headers, agent: false }, resolve).on('error', reject).end();
    });
    const received = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined) received.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const client = new EventStreamClient(response.statusCode ?? 0, received, response);
    void client.read();
    if (client.status !== 200) await client.until('the whole body', () => client.ended);
    return client;
  }

  /** The body of a refused request, as JSON. */
  json<T>(): T {
    return JSON.parse(this.raw) as T;
  }

  close(): void {
    this.response.destroy();
  }

  /** Resolves once `done()` holds; rejects after `timeoutMs`, naming `what`. */
  async until(what: string, done: () => boolean, timeoutMs = 60_000): Promise<void> {
    if (done()) return;
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`${what}: not within ${timeoutMs} ms (received ${this.events.length})`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
    });
  }

  /** Waits until `count` events have arrived in all. */
  untilEvents(count: number, timeoutMs?: number): Promise<void> {
    return this.until(`${count} events`, () => this.events.length >= count, timeoutMs);
  }

  /** The `data` of every `reading` event, parsed. */
  readings<T = Record<string, unknown>>(): T[] {
    return this.events
      .filter((event) => event.event === 'reading')
      .map((event) => JSON.parse(event.data) as T);
  }

  private async read(): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of this.response) {
        const text = decoder.decode(chunk as Buffer, { stream: true });
        this.raw += text;
        this.parse(text);
        for (const waiter of [...this.waiters]) waiter();
      }
    } catch {
      // Aborted by `close`, or the connection was cut: either ends the stream.
    }
    this.ended = true;
    for (const waiter of [...this.waiters]) waiter();
  }

  private parse(text: string): void {
    this.buffer += text;
    for (;;) {
      const end = this.buffer.indexOf('\n');
      if (end < 0) return;
      const line = this.buffer.slice(0, end).replace(/\r$/, '');
      this.buffer = this.buffer.slice(end + 1);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      const { event, data, hasId } = this.block;
      this.block = { event: '', data: [], hasId: false };
      // As EventSource: an empty data buffer dispatches nothing (the id still moves on).
      if (data.length === 0) return;
      this.events.push({
        event: event || 'message',
        data: data.join('\n'),
        lastEventId: this.lastEventId,
        hasId,
        receivedAt: Date.now(),
      });
      return;
    }
    if (line.startsWith(':')) {
      this.comments.push(line.slice(1).trim());
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') this.block.event = value;
    else if (field === 'data') this.block.data.push(value);
    else if (field === 'id') {
      this.lastEventId = value;
      this.block.hasId = true;
    } else if (field === 'retry' && /^\d+$/.test(value)) this.retries.push(Number(value));
  }
}
