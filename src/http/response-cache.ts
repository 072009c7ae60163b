import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** A response body encoded once, with its ETag and its compressed variants made on demand. */
export class EncodedBody {
  readonly etag: string;
  private gzipped: Buffer | undefined;
  private brotli: Buffer | undefined;
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
    return this.body.length + (this.gzipped?.length ?? 0) + (this.brotli?.length ?? 0);
  }

  gzip(): Buffer {
    return (this.gzipped ??= this.grown(gzipSync(this.body, { level: 6 })));
  }

  br(): Buffer {
    // Quality 5: most of brotli's gain at a fraction of the default (11) cost.
    return (this.brotli ??= this.grown(
      brotliCompressSync(this.body, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: 5,
          [constants.BROTLI_PARAM_SIZE_HINT]: this.body.length,
        },
      }),
    ));
  }

  private grown(variant: Buffer): Buffer {
    this.onGrow?.(variant.length);
    return variant;
  }
}

/** How many keys asked only once are remembered, to admit them when asked again. */
const SEEN_ONCE_KEYS = 4096;

/**
 * Encoded bodies by key, least recently used dropped first once their bytes (compressed variants
 * included) pass `maxBytes`. Emptied whenever the data changes, so an entry never outlives the
 * data it was built from. An entry built with `admitOnRepeat` is kept only from its second
 * request on, so that one client's stream of unique windows cannot flush everybody's entries.
 */
export class ResponseCache {
  private readonly entries = new Map<string, EncodedBody>();
  private readonly seenOnce = new Set<string>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): EncodedBody | undefined {
    const entry = this.entries.get(key);
    if (entry) {
      // Re-inserting moves the key to the back of Map's insertion order: most recently used.
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  getOrBuild(key: string, build: () => EncodedBody, admitOnRepeat = false): EncodedBody {
    return this.get(key) ?? this.admit(key, build(), admitOnRepeat);
  }

  /** Keeps `entry` under `key` (with `admitOnRepeat`, only from the key's second time on). */
  admit(key: string, entry: EncodedBody, admitOnRepeat = false): EncodedBody {
    if (admitOnRepeat && !this.seenBefore(key)) return entry;
    const previous = this.entries.get(key);
    if (previous) this.bytes -= previous.size;
    this.entries.set(key, entry);
    entry.onGrow = (bytes) => {
      if (this.entries.get(key) !== entry) return;
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

  private evict(keep: string): void {
    for (const [oldest, value] of this.entries) {
      if (this.bytes <= this.maxBytes || oldest === keep) break;
      this.entries.delete(oldest);
      this.bytes -= value.size;
    }
  }
}
