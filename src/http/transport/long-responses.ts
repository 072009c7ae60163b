import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from '../contract/errors.js';

/**
 * What the long responses (`/v1/export`, `/v1/stream`) share: a cap on how many one client and
 * all clients together may hold open, and how one is started. Waiting for a slow client instead of buffering for it is
 * `stream/pacing.ts`.
 */

/**
 * Open responses counted per client address and in all, each up to its cap. Counts are of this
 * process only: behind a load balancer each instance applies the caps to what it serves.
 */
export class SlotCounter {
  private readonly perAddress = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly maxPerAddress: number,
    private readonly maxInAll: number,
  ) {}

  /** Responses open now. */
  get open(): number {
    return this.total;
  }

  /**
   * Takes a slot for `address`, or throws the error of the cap it would pass. Returns the
   * release, which may be called any number of times.
   */
  take(
    address: string,
    refusal: { perAddress: () => ApiError; inAll: () => ApiError },
  ): () => void {
    const held = this.perAddress.get(address) ?? 0;
    if (held >= this.maxPerAddress) throw refusal.perAddress();
    if (this.total >= this.maxInAll) throw refusal.inAll();
    this.perAddress.set(address, held + 1);
    this.total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const left = (this.perAddress.get(address) ?? 1) - 1;
      if (left > 0) this.perAddress.set(address, left);
      else this.perAddress.delete(address);
    };
  }
}

/**
 * Starts a long response that holds the place `release` gives back: given back when the client
 * goes (even before the headers) and when `beforeHeaders` throws (a store failure is a 503 now,
 * not a cut after the status is sent). Then the response is the route's: its headers are written
 * after the reply's own. Returns what `beforeHeaders` found, or undefined when there is nothing
 * more to write (the client is gone, or the request is a HEAD).
 */
export async function startLongResponse<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  release: () => void,
  beforeHeaders: () => Promise<T>,
  headers: Readonly<Record<string, string>>,
): Promise<{ readonly found: T } | undefined> {
  const response = reply.raw;
  // Before any wait: a client gone meanwhile must give its place back too.
  response.once('close', release);
  let found: T;
  try {
    found = await beforeHeaders();
  } catch (error) {
    release();
    throw error;
  }
  reply.hijack();
  if (response.destroyed) return undefined;
  response.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), ...headers });
  if (request.method === 'HEAD') {
    response.end();
    return undefined;
  }
  return { found };
}
