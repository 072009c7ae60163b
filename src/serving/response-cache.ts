import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** A response body encoded once, with its ETag and its compressed variants made on demand. */
export class EncodedBody {
  readonly etag: string;
  private gzipped: Buffer | undefined;
  private brotli: Buffer | undefined;

  constructor(readonly body: Buffer) {
    this.etag = `"${createHash('sha1').update(body).digest('base64url')}"`;
  }

  gzip(): Buffer {
    return (this.gzipped ??= gzipSync(this.body, { level: 6 }));
  }

  br(): Buffer {
    // Quality 5: most of brotli's gain at a fraction of the default (11) cost.
    return (this.brotli ??= brotliCompressSync(this.body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 5,
        [constants.BROTLI_PARAM_SIZE_HINT]: this.body.length,
      },
    }));
  }
}

/**
 * Encoded bodies by key, least recently used dropped first once over `maxBytes`. Emptied whenever
 * the data changes, so an entry never outlives the data it was built from.
 */
export class ResponseCache {
  private readonly entries = new Map<string, EncodedBody>();
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

  getOrBuild(key: string, build: () => string): EncodedBody {
    const cached = this.get(key);
    if (cached) return cached;
    const entry = new EncodedBody(Buffer.from(build()));
    this.entries.set(key, entry);
    this.bytes += entry.body.length;
    for (const [oldest, value] of this.entries) {
      if (this.bytes <= this.maxBytes || oldest === key) break;
      this.entries.delete(oldest);
      this.bytes -= value.body.length;
    }
    return entry;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}
