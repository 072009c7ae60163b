import { describe, expect, it } from 'vitest';
import { EncodedBody, ResponseCache } from './response-cache.js';

const body = (text: string) => new EncodedBody(Buffer.from(text));
/** Bodies of 100 bytes: a cache of 250 holds two. */
const sized = (tag: string) => body(tag.padEnd(100, '.'));

/** The cache holds the keys `kept` and none of `dropped`, in `bytes` bytes. */
function expectHeld(
  cache: ResponseCache,
  { kept = [], dropped = [], bytes }: { kept?: string[]; dropped?: string[]; bytes: number },
): void {
  for (const key of kept) expect(cache.get(key), key).toBeDefined();
  for (const key of dropped) expect(cache.get(key), key).toBeUndefined();
  expect(cache.heldBytes).toBe(bytes);
}

describe('ResponseCache', () => {
  it('drops the least recently used entry first, a hit counting as a use', () => {
    const cache = new ResponseCache(250);
    cache.admit('a', sized('a'));
    cache.admit('b', sized('b'));
    expect(cache.get('a')).toBeDefined();
    cache.admit('c', sized('c'));
    expectHeld(cache, { kept: ['a', 'c'], dropped: ['b'], bytes: 200 });
  });

  it('drops as many entries as it takes, and keeps the newest even when it alone is too large', () => {
    const cache = new ResponseCache(250);
    cache.admit('a', sized('a'));
    cache.admit('b', sized('b'));
    cache.admit('huge', body('h'.repeat(400)));
    expectHeld(cache, { kept: ['huge'], dropped: ['a', 'b'], bytes: 400 });
  });

  it('keeps an entry built with admitOnRepeat only from its second time on', () => {
    const cache = new ResponseCache(1000);
    const built = cache.getOrBuild('w', () => sized('w'), true);
    expect(cache.get('w')).toBeUndefined();
    expect(cache.getOrBuild('w', () => sized('w'), true)).not.toBe(built);
    expect(cache.get('w')).toBeDefined();
  });

  it('counts a compressed variant and evicts others to make room for it', () => {
    const noisy = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7919) % 251));
    const cache = new ResponseCache(3000 + 150);
    cache.admit('other', sized('o'));
    const large = new EncodedBody(noisy);
    cache.admit('large', large);
    expect(cache.get('other')).toBeDefined();
    large.compressed('gzip');
    expectHeld(cache, { dropped: ['other'], bytes: large.size });
  });

  it('replaces an entry under the same key without counting it twice', () => {
    const cache = new ResponseCache(1000);
    cache.admit('a', sized('a'));
    cache.admit('a', sized('b'));
    expect(cache.heldBytes).toBe(100);
    expect(cache.get('a')?.body.toString()).toMatch(/^b/);
  });
});
