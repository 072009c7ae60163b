import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';

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
