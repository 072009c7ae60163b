import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';

/** The content codings a body can be compressed in. */
export type ContentCoding = 'br' | 'gzip';

/**
 * Bodies from this size on are compressed on libuv's thread pool, not on the event loop, before
 * they are sent (`prepare`): a 1.2 MB mix page costs 8 ms in brotli and 16 ms in gzip (measured).
 */
const COMPRESS_OFF_LOOP_BYTES = 64 * 1024;

const brotliOptions = (body: Buffer) => ({
  // Quality 5: most of brotli's gain at a fraction of the default (11) cost.
  params: {
    [constants.BROTLI_PARAM_QUALITY]: 5,
    [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
  },
});
const GZIP_OPTIONS = { level: 6 };
const brotliOffLoop = promisify(brotliCompress);
const gzipOffLoop = promisify(gzip);

/** A response body encoded once, with its ETag and its compressed variants made on demand. */
export class EncodedBody {
  readonly etag: string;
  private readonly variants: { br?: Buffer; gzip?: Buffer } = {};
  private readonly compressing: {
    br?: Promise<void> | undefined;
    gzip?: Promise<void> | undefined;
  } = {};
  /** Told the size of each compressed variant once it is made, so a cache can count it. */
  onGrow: ((bytes: number) => void) | undefined;

  constructor(
    readonly body: Buffer,
    /** For a truncated history: the ts where the next page starts (the `Link: rel="next"`). */
    readonly nextFrom?: number,
  ) {
    this.etag = `"${createHash('sha1').update(body).digest('base64url')}"`;
  }

  /** The bytes held: the body and every compressed variant made so far. */
  get size(): number {
    return this.body.length + (this.variants.br?.length ?? 0) + (this.variants.gzip?.length ?? 0);
  }

  /** The body in `coding`, compressed now (on the event loop) unless `prepare` made it. */
  compressed(coding: ContentCoding): Buffer {
    return (this.variants[coding] ??= this.grown(
      coding === 'br'
        ? brotliCompressSync(this.body, brotliOptions(this.body))
        : gzipSync(this.body, GZIP_OPTIONS),
    ));
  }

  /**
   * Makes the `coding` variant of a large body off the event loop; resolves once `compressed`
   * returns it at once. Undefined when there is nothing to wait for (made, or small enough).
   */
  prepare(coding: ContentCoding): Promise<void> | undefined {
    if (this.body.length < COMPRESS_OFF_LOOP_BYTES || this.variants[coding]) return undefined;
    return (this.compressing[coding] ??= (
      coding === 'br'
        ? brotliOffLoop(this.body, brotliOptions(this.body))
        : gzipOffLoop(this.body, GZIP_OPTIONS)
    ).then(
      (variant) => {
        this.variants[coding] ??= this.grown(variant);
      },
      // Not made: `compressed` makes it on the loop, and a later request tries again.
      () => {
        this.compressing[coding] = undefined;
      },
    ));
  }

  private grown(variant: Buffer): Buffer {
    this.onGrow?.(variant.length);
    return variant;
  }
}

/** How many keys asked only once are remembered, to admit them when asked again. */
const SEEN_ONCE_KEYS = 4096;

/** An entry and when it was last asked for (a count of the cache's uses). */
interface Slot {
  readonly body: EncodedBody;
  usedAt: number;
}

/**
 * Encoded bodies by key, least recently used dropped first once their bytes (compressed variants
 * included) pass `maxBytes`. Emptied whenever the data changes, so an entry never outlives the
 * data it was built from. An entry built with `admitOnRepeat` is kept only from its second
 * request on, so that one client's stream of unique windows cannot flush everybody's entries.
 *
 * A hit only stamps its entry: hits are most of the traffic, and reordering a Map on each one
 * (delete and set) costs more than the rest of the lookup. Eviction, which follows building a
 * body and costs far less than that, searches the stamps for the oldest.
 */
export class ResponseCache {
  private readonly entries = new Map<string, Slot>();
  private readonly seenOnce = new Set<string>();
  private bytes = 0;
  private uses = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): EncodedBody | undefined {
    const slot = this.entries.get(key);
    if (!slot) return undefined;
    slot.usedAt = ++this.uses;
    return slot.body;
  }

  getOrBuild(key: string, build: () => EncodedBody, admitOnRepeat = false): EncodedBody {
    return this.get(key) ?? this.admit(key, build(), admitOnRepeat);
  }

  /** Keeps `entry` under `key` (with `admitOnRepeat`, only from the key's second time on). */
  admit(key: string, entry: EncodedBody, admitOnRepeat = false): EncodedBody {
    if (admitOnRepeat && !this.seenBefore(key)) return entry;
    const previous = this.entries.get(key);
    if (previous) this.bytes -= previous.body.size;
    const slot: Slot = { body: entry, usedAt: ++this.uses };
    this.entries.set(key, slot);
    entry.onGrow = (bytes) => {
      if (this.entries.get(key) !== slot) return;
      this.bytes += bytes;
      this.evict(key);
    };
    this.bytes += entry.size;
    this.evict(key);
    return entry;
  }

  /** Byte size of what is held, compressed variants included. */
  get heldBytes(): number {
    return this.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.seenOnce.clear();
    this.bytes = 0;
  }

  private seenBefore(key: string): boolean {
    if (this.seenOnce.delete(key)) return true;
    if (this.seenOnce.size >= SEEN_ONCE_KEYS) {
      const oldest = this.seenOnce.values().next().value;
      if (oldest !== undefined) this.seenOnce.delete(oldest);
    }
    this.seenOnce.add(key);
    return false;
  }

  /** Drops the least recently used entries but `keep` until the bytes fit. */
  private evict(keep: string): void {
    while (this.bytes > this.maxBytes) {
      let oldest: string | undefined;
      let oldestAt = Infinity;
      for (const [key, slot] of this.entries) {
        if (key !== keep && slot.usedAt < oldestAt) {
          oldest = key;
          oldestAt = slot.usedAt;
        }
      }
      if (oldest === undefined) return;
      this.bytes -= this.entries.get(oldest)!.body.size;
      this.entries.delete(oldest);
    }
  }
}
