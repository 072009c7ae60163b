import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Writing a long response (`/v1/stream`, `/v1/export`) at the pace its client reads, instead of
 * buffering for it, without holding the event loop while the client keeps up.
 */

/** The client closed the connection: stop producing for it. */
export class ClientGone extends Error {
  override readonly name = 'ClientGone';
  constructor() {
    super('client closed the connection');
  }
}

/** Resolves when `response` can take more (`drain`); rejects with ClientGone if it closes first. */
export function drained(response: ServerResponse): Promise<void> {
  if (response.destroyed) return Promise.reject(new ClientGone());
  return new Promise((resolve, reject) => {
    const settle = (gone: boolean) => {
      response.off('drain', onDrain);
      response.off('close', onClose);
      if (gone) reject(new ClientGone());
      else resolve();
    };
    const onDrain = () => settle(false);
    const onClose = () => settle(true);
    response.on('drain', onDrain);
    response.on('close', onClose);
  });
}

/**
 * Gives the event loop a turn once a long response has worked for `budgetMs` since its last one.
 * A socket that takes each chunk at once resolves 'drain' on the next tick, not on a later turn,
 * so without this an export or a replay read as fast as it is written holds the loop to its
 * end. Yielding on time rather than on every chunk keeps the cost of a turn (tens of ms on a
 * starved machine) from being paid per chunk.
 */
export class LoopTurns {
  private since = performance.now();

  constructor(private readonly budgetMs = 10) {}

  async yieldIfDue(): Promise<void> {
    if (performance.now() - this.since < this.budgetMs) return;
    await nextTurn();
    this.since = performance.now();
  }
}
