import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ContentCoding, EncodedBody } from './response-cache.js';
import { CORS_HEADERS } from '../contract/headers.js';
import { nextPageLink } from '../contract/params.js';

/**
 * Content negotiation, in one place for every sender: the Fastify routes, the forecast route,
 * the fast path and the dashboard. One Accept-Encoding parser (RFC 9110 §12.5.3) and one way to
 * turn a chosen representation into headers, so the two paths send the same bytes.
 */

/** The content codings the server can send, in the order it prefers them. */
const SERVER_PREFERENCE: readonly ContentCoding[] = ['br', 'gzip'];
/** Bodies shorter than this are sent as they are: compressing them saves nothing worth a CPU. */
const MIN_COMPRESS_BYTES = 1024;

/**
 * The coding to send among `available`, or undefined for identity. A coding is acceptable when
 * its own q (else the q of `*`) is above 0: `*` stands for every coding not listed, so
 * `Accept-Encoding: *` gets the server's first choice, and `*;q=0` refuses the unlisted ones.
 * Among acceptable codings the server's preference decides, not the client's q.
 */
export function chooseEncoding(
  header: string | undefined,
  available: readonly ContentCoding[] = SERVER_PREFERENCE,
): ContentCoding | undefined {
  if (available !== SERVER_PREFERENCE) return parseChoice(header, available);
  const key = header ?? '';
  let choice = CHOICES.get(key);
  if (choice === undefined) {
    if (CHOICES.size >= MAX_CHOICES) CHOICES.clear();
    choice = parseChoice(header, available) ?? 'identity';
    CHOICES.set(key, choice);
  }
  return choice === 'identity' ? undefined : choice;
}

/**
 * The server's choice for each Accept-Encoding seen lately: clients send a handful of distinct
 * headers, and parsing one costs more than the rest of a cached response's negotiation.
 */
const CHOICES = new Map<string, ContentCoding | 'identity'>();
const MAX_CHOICES = 256;

function parseChoice(
  header: string | undefined,
  available: readonly ContentCoding[],
): ContentCoding | undefined {
  const weights = new Map<string, number>();
  for (const part of (header ?? '').split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    weights.set(name.trim(), q === undefined ? 1 : Number(q));
  }
  const accepts = (coding: string) => (weights.get(coding) ?? weights.get('*') ?? 0) > 0;
  return SERVER_PREFERENCE.find((coding) => available.includes(coding) && accepts(coding));
}

/** One representation of a body, ready to send: the bytes, its own ETag and its encoding. */
export interface Representation {
  readonly body: Buffer;
  readonly etag: string;
  readonly encoding: ContentCoding | undefined;
  /** Whether the body could have been compressed, so caches must vary on Accept-Encoding. */
  readonly varies: boolean;
}

/**
 * The representation of an encoded body for a client's Accept-Encoding; a promise only while a
 * large body's compressed variant is made off the event loop.
 */
export function representationReady(
  encoded: EncodedBody,
  acceptEncoding: string | undefined,
): Representation | Promise<Representation> {
  const encoding = codingFor(encoded, acceptEncoding);
  const preparing = encoding === undefined ? undefined : encoded.prepare(encoding);
  return preparing
    ? preparing.then(() => representationIn(encoded, encoding))
    : representationIn(encoded, encoding);
}

function codingFor(encoded: EncodedBody, acceptEncoding: string | undefined) {
  return encoded.body.length >= MIN_COMPRESS_BYTES ? chooseEncoding(acceptEncoding) : undefined;
}

/** Each body's representations, made once: a cached body is sent many times. */
const REPRESENTATIONS = new WeakMap<EncodedBody, Partial<Record<string, Representation>>>();

function representationIn(
  encoded: EncodedBody,
  encoding: ContentCoding | undefined,
): Representation {
  let made = REPRESENTATIONS.get(encoded);
  if (!made) REPRESENTATIONS.set(encoded, (made = {}));
  return (made[encoding ?? 'identity'] ??= makeRepresentation(encoded, encoding));
}

function makeRepresentation(
  encoded: EncodedBody,
  encoding: ContentCoding | undefined,
): Representation {
  const varies = encoded.body.length >= MIN_COMPRESS_BYTES;
  if (encoding === undefined) return { body: encoded.body, etag: encoded.etag, encoding, varies };
  return {
    body: encoded.compressed(encoding),
    etag: `${encoded.etag.slice(0, -1)}-${encoding}"`,
    encoding,
    varies,
  };
}

/** The headers that describe a representation, in the order both paths send them. */
export function representationHeaders(representation: Representation): [string, string][] {
  const headers: [string, string][] = [['etag', representation.etag]];
  if (representation.varies) headers.push(['vary', 'accept-encoding']);
  if (representation.encoding) headers.push(['content-encoding', representation.encoding]);
  return headers;
}

/**
 * Sends an encoded body through Fastify in the representation the client accepts, with its own
 * ETag, and the Link to the next page when the body was truncated.
 */
export async function sendEncoded(
  request: FastifyRequest,
  reply: FastifyReply,
  encoded: EncodedBody,
): Promise<Buffer> {
  const representation = await representationReady(encoded, request.headers['accept-encoding']);
  if (encoded.nextFrom !== undefined) {
    reply.header('link', nextPageLink(request.url, encoded.nextFrom));
    reply.header(
      'access-control-expose-headers',
      `${CORS_HEADERS['access-control-expose-headers']}, Link`,
    );
  }
  for (const [name, value] of representationHeaders(representation)) reply.header(name, value);
  return representation.body;
}
