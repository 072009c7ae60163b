import { isIPv4, isIPv6 } from 'node:net';
import type { ServerResponse } from 'node:http';
import type { ApiError } from '../contract/errors.js';

/**
 * Who may hold an event stream. A peer that reads nothing cannot be told from an idle one while
 * heartbeats are tiny, so what one party can hold is bounded instead: streams per address and
 * per address prefix (IPv4 /24, IPv6 /64: one host rarely owns more), a cap in all, and, at the
 * cap, the oldest stream of the most-represented prefix gives way to a newcomer from another
 * prefix, so that one network filling every slot cannot lock the others out. Every stream also
 * ends after a maximum age (`endAtAge`); its client resumes with Last-Event-ID.
 */

export interface AdmissionLimits {
  readonly maxPerAddress: number;
  readonly maxPerPrefix: number;
  readonly maxInAll: number;
}

export interface Refusals {
  readonly perAddress: () => ApiError;
  readonly perPrefix: () => ApiError;
  readonly inAll: () => ApiError;
}

interface Held {
  readonly address: string;
  readonly evict: () => void;
  released: boolean;
}

/** The network an address belongs to for the prefix cap: its /24 (IPv4) or /64 (IPv6). */
export function addressPrefix(address: string): string {
  if (isIPv4(address)) return address.slice(0, address.lastIndexOf('.'));
  if (!isIPv6(address)) return address;
  const [head = '', tail] = address.toLowerCase().split('::');
  const front = head === '' ? [] : head.split(':');
  const back = tail === undefined || tail === '' ? [] : tail.split(':');
  // A trailing dotted quad stands for the last two groups, which lie beyond the /64 anyway.
  const missing = 8 - front.length - back.length - (back.at(-1)?.includes('.') ? 1 : 0);
  const groups = [...front, ...Array<string>(Math.max(0, missing)).fill('0'), ...back];
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

export class StreamAdmission {
  private readonly perAddress = new Map<string, number>();
  /** The streams of each prefix, oldest first (a Set keeps insertion order). */
  private readonly perPrefix = new Map<string, Set<Held>>();
  private total = 0;

  constructor(private readonly limits: AdmissionLimits) {}

  /** Streams held now. */
  get open(): number {
    return this.total;
  }

  /**
   * Admits a stream of `address`, evicting another one if the cap in all is reached and a larger
   * prefix holds slots, or throws the error of the cap it would pass. `evict` ends the stream
   * when it must give way. Returns the release, which may be called any number of times.
   */
  admit(address: string, evict: () => void, refusals: Refusals): () => void {
    const prefix = addressPrefix(address);
    const ofAddress = this.perAddress.get(address) ?? 0;
    if (ofAddress >= this.limits.maxPerAddress) throw refusals.perAddress();
    const ofPrefix = this.perPrefix.get(prefix)?.size ?? 0;
    if (ofPrefix >= this.limits.maxPerPrefix) throw refusals.perPrefix();
    if (this.total >= this.limits.maxInAll) {
      const oldest = this.oldestOfLargestPrefix(ofPrefix + 1);
      if (!oldest) throw refusals.inAll();
      this.release(oldest);
      oldest.evict();
    }
    const held: Held = { address, evict, released: false };
    this.perAddress.set(address, ofAddress + 1);
    let streams = this.perPrefix.get(prefix);
    if (!streams) this.perPrefix.set(prefix, (streams = new Set()));
    streams.add(held);
    this.total++;
    return () => this.release(held);
  }

  /** The oldest stream of the prefix holding the most, if it holds more than `than`. */
  private oldestOfLargestPrefix(than: number): Held | undefined {
    let largest: Set<Held> | undefined;
    for (const streams of this.perPrefix.values()) {
      if (streams.size > (largest?.size ?? than)) largest = streams;
    }
    return largest?.values().next().value;
  }

  private release(held: Held): void {
    if (held.released) return;
    held.released = true;
    this.total--;
    const left = (this.perAddress.get(held.address) ?? 1) - 1;
    if (left > 0) this.perAddress.set(held.address, left);
    else this.perAddress.delete(held.address);
    const prefix = addressPrefix(held.address);
    const streams = this.perPrefix.get(prefix);
    streams?.delete(held);
    if (streams?.size === 0) this.perPrefix.delete(prefix);
  }
}

/**
 * Calls `end` (which ends `response`) after `maxAgeMs` less up to a quarter, at random, so that
 * streams opened together do not all reconnect together.
 */
export function endAtAge(response: ServerResponse, maxAgeMs: number, end: () => void): void {
  const age = maxAgeMs * (0.75 + Math.random() * 0.25);
  const timer = setTimeout(end, age);
  timer.unref();
  response.once('close', () => clearTimeout(timer));
}
