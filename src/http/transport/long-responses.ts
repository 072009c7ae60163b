import type { ApiError } from '../contract/errors.js';

/**
 * What the long responses (`/v1/export`, `/v1/stream`) share: a cap on how many one client and
 * all clients together may hold open. Waiting for a slow client instead of buffering for it is
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
