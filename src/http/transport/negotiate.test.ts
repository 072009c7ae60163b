import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { chooseEncoding, representationHeaders, representationReady } from './negotiate.js';
import { EncodedBody } from './response-cache.js';

describe('chooseEncoding (RFC 9110 §12.5.3)', () => {
  it.each([
    [undefined, ['br', 'gzip'], undefined],
    ['', ['br', 'gzip'], undefined],
    ['identity', ['br', 'gzip'], undefined],
    ['deflate', ['br', 'gzip'], undefined],
    ['br', ['br', 'gzip'], 'br'],
    ['gzip', ['br', 'gzip'], 'gzip'],
    ['gzip, br', ['br', 'gzip'], 'br'],
    ['gzip, br', ['gzip'], 'gzip'],
    ['br, gzip, deflate', ['br', 'gzip'], 'br'],
    ['BR;Q=0.1', ['br', 'gzip'], 'br'],
    ['br;q=0.5, gzip;q=1', ['br', 'gzip'], 'br'],
    ['br;q=0', ['br', 'gzip'], undefined],
    ['br;q=0.000, gzip', ['br', 'gzip'], 'gzip'],
    ['br;q=0, gzip;q=0', ['br', 'gzip'], undefined],
    ['br ; q=0 , gzip', ['br', 'gzip'], 'gzip'],
    // `*` is every coding not listed: the server's first choice, unless that one is refused.
    ['*', ['br', 'gzip'], 'br'],
    ['*', ['gzip'], 'gzip'],
    ['br;q=0, *', ['br', 'gzip'], 'gzip'],
    ['*;q=0', ['br', 'gzip'], undefined],
    ['*;q=0, gzip', ['br', 'gzip'], 'gzip'],
    ['x,'.repeat(200), ['br', 'gzip'], undefined],
  ] as const)('%j among %j -> %s', (header, available, expected) => {
    expect(chooseEncoding(header, available)).toBe(expected);
  });
});

describe('representationReady, for bodies small enough to compress at once', () => {
  const large = new EncodedBody(Buffer.from(`{"data":"${'a'.repeat(2000)}"}`));
  const small = new EncodedBody(Buffer.from('{"data":"a"}'));

  it.each([
    [large, 'br', 'br', brotliDecompressSync],
    [large, 'gzip', 'gzip', gunzipSync],
    [large, '*', 'br', brotliDecompressSync],
    [large, undefined, undefined, (body: Buffer) => body],
    [small, 'br', undefined, (body: Buffer) => body],
  ] as const)('%#: Accept-Encoding %j sends %s', (encoded, accept, encoding, decode) => {
    const representation = representationReady(encoded, accept);
    if (representation instanceof Promise) throw new Error('a small body is answered at once');
    expect(representation.encoding).toBe(encoding);
    expect(decode(representation.body).equals(encoded.body)).toBe(true);
    expect(representation.varies).toBe(encoded === large);
    const expectedEtag =
      encoding === undefined ? encoded.etag : `${encoded.etag.slice(0, -1)}-${encoding}"`;
    expect(representation.etag).toBe(expectedEtag);
    expect(representationHeaders(representation)).toEqual([
      ['etag', expectedEtag],
      ...(encoded === large ? [['vary', 'accept-encoding']] : []),
      ...(encoding === undefined ? [] : [['content-encoding', encoding]]),
    ]);
  });
});

describe('representationReady', () => {
  // Above the size compressed off the event loop (64 KiB); not random, so it compresses.
  const page = () =>
    new EncodedBody(
      Buffer.from(JSON.stringify({ data: Array.from({ length: 20_000 }, (_, i) => i) })),
    );

  it.each(['br', 'gzip'] as const)(
    "makes a large body's %s variant off the loop once, then answers at once with the same bytes",
    async (coding) => {
      const encoded = page();
      const grown: number[] = [];
      encoded.onGrow = (bytes) => grown.push(bytes);
      const first = representationReady(encoded, coding);
      const second = representationReady(encoded, coding);
      expect(first).toBeInstanceOf(Promise);
      const [made, again] = await Promise.all([first, second]);
      const decode = coding === 'br' ? brotliDecompressSync : gunzipSync;
      expect(decode(made.body).equals(encoded.body)).toBe(true);
      expect(again.body).toBe(made.body);
      // Made once although asked twice while it was being made.
      expect(grown).toEqual([made.body.length]);
      const later = representationReady(encoded, coding);
      expect(later).not.toBeInstanceOf(Promise);
      expect(later).toEqual(made);
    },
  );

  it('answers at once for a small body and for identity', () => {
    expect(representationReady(new EncodedBody(Buffer.from('{"a":1}')), 'br')).not.toBeInstanceOf(
      Promise,
    );
    expect(representationReady(page(), undefined)).not.toBeInstanceOf(Promise);
  });
});
