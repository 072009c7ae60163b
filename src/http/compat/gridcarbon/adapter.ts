import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import {
  brotliCompressSync,
  brotliDecompressSync,
  deflateSync,
  gzipSync,
  inflateSync,
  gunzipSync,
} from 'node:zlib';
import { isGridcarbonTarget, renameCsv, renameJson, renameLinkHeader, v1Target } from './names.js';

/**
 * `/compat/gridcarbon/v1` (extensions §14): the whole /v1 contract under the replaced service's
 * names. One mechanism for every route: before the fast path and Fastify see the request, its
 * target becomes the /v1 one, and the response is renamed on its way out (names.ts), whoever
 * writes it: a Fastify route, the fast path, a raw error, or the streamed export and events.
 * So every endpoint, parameter, header, limit and error of /v1 holds here by construction.
 *
 * A response with a Content-Length is held until it ends, renamed whole (decoded and encoded
 * again if it was compressed and anything changed) and sent with its new length; a response
 * without one (export, stream) is renamed line by line as it is written, with the same
 * backpressure. HEAD is answered as GET with the body dropped by Node, so that its
 * Content-Length is the renamed body's; except where a GET would open a long response.
 */

/** Paths whose GET opens a long response: a HEAD stays a HEAD there. */
const LONG_RESPONSES = new Set(['/v1/export', '/v1/stream']);

type Rename = (text: string) => string;

/** How a body of this content type is renamed, or undefined to pass it on untouched. */
function renameFor(contentType: string | undefined): Rename | undefined {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  if (type === 'application/json' || type === 'application/x-ndjson') return renameJson;
  if (type === 'text/event-stream') return renameJson;
  if (type === 'text/csv') return renameCsv;
  return undefined;
}

/**
 * Adapts a request under `/compat/gridcarbon/v1` to /v1 and its response back; leaves any other
 * request alone. Called first for every request the server accepts.
 */
export function adaptGridcarbon(request: IncomingMessage, response: ServerResponse): void {
  const target = request.url ?? '';
  if (!isGridcarbonTarget(target)) return;
  request.url = v1Target(target);
  const path = request.url.split('?')[0] ?? '';
  if (request.method === 'HEAD' && !LONG_RESPONSES.has(path.replace(/\/+$/, ''))) {
    // Node still sends no body: the response knows it answers a HEAD.
    request.method = 'GET';
  }
  renameResponse(response);
}

type Headers = OutgoingHttpHeaders | (string | string[] | number)[];

function renameResponse(response: ServerResponse): void {
  const writeHead = response.writeHead.bind(response) as (
    status: number,
    message: string | undefined,
    headers?: Headers,
  ) => ServerResponse;
  const write = response.write.bind(response) as (
    chunk: string | Buffer,
    callback?: (error?: Error | null) => void,
  ) => boolean;
  const end = response.end.bind(response) as (
    chunk?: string | Buffer,
    callback?: () => void,
  ) => ServerResponse;
  // As they are, for what is passed on untouched (with whatever arguments it was given).
  const passWrite = response.write.bind(response);
  const passEnd = response.end.bind(response);

  /** Set when the body is held whole until end; else lines are renamed as written. */
  let held:
    { status: number; message: string | undefined; headers: Headers; chunks: Buffer[] } | undefined;
  let rename: Rename | undefined;
  /** An unfinished line of a renamed stream, kept until its end arrives. */
  let tail = '';
  let started = false;

  const start = (status: number, statusMessageOrHeaders?: string | Headers, more?: Headers) => {
    started = true;
    const message = typeof statusMessageOrHeaders === 'string' ? statusMessageOrHeaders : undefined;
    const given = message === undefined ? (statusMessageOrHeaders as Headers | undefined) : more;
    const headers = renameHeaders(given ?? {});
    renameSetHeaders(response);
    rename = renameFor(headerOf(headers, 'content-type') ?? stringHeader(response, 'content-type'));
    const length = headerOf(headers, 'content-length') ?? stringHeader(response, 'content-length');
    if (rename && length !== undefined && status !== 304) {
      held = { status, message, headers, chunks: [] };
      return response;
    }
    return writeHead(status, message, headers);
  };

  const renameLines = (text: string, last: boolean): string => {
    if (!rename) return text;
    const all = tail + text;
    const cut = last ? all.length : all.lastIndexOf('\n') + 1;
    tail = all.slice(cut);
    return rename(all.slice(0, cut));
  };

  // Bytes of a character may arrive in two chunks: decoded across them.
  const decoder = new StringDecoder('utf8');
  const chunkText = (chunk: unknown, last = false): string => {
    const text =
      typeof chunk === 'string' ? chunk : chunk == null ? '' : decoder.write(toBuffer(chunk));
    return last ? text + decoder.end() : text;
  };

  response.writeHead = start as ServerResponse['writeHead'];

  response.write = ((chunk: unknown, encodingOrCallback?: unknown, callback?: unknown) => {
    const done = (typeof encodingOrCallback === 'function' ? encodingOrCallback : callback) as
      ((error?: Error | null) => void) | undefined;
    if (!started) implicitHead();
    if (held) {
      held.chunks.push(toBuffer(chunk));
      if (done) process.nextTick(done);
      return true;
    }
    if (!rename) {
      return passWrite(...([chunk, encodingOrCallback, callback] as Parameters<typeof passWrite>));
    }
    return write(renameLines(chunkText(chunk), false), done);
  }) as ServerResponse['write'];

  response.end = ((chunk?: unknown, encodingOrCallback?: unknown, callback?: unknown) => {
    const done = [chunk, encodingOrCallback, callback].find(
      (argument) => typeof argument === 'function',
    ) as (() => void) | undefined;
    const body = typeof chunk === 'function' || chunk === null ? undefined : chunk;
    if (!started) implicitHead();
    if (held) {
      if (body !== undefined) held.chunks.push(toBuffer(body));
      const { status, message, headers, chunks } = held;
      held = undefined;
      const renamed = renameBody(Buffer.concat(chunks), headers, rename!);
      const length = String(renamed.length);
      if (response.hasHeader('content-length')) response.setHeader('content-length', length);
      writeHead(status, message, setHeader(headers, 'content-length', length));
      return end(renamed, done);
    }
    if (!rename || (body === undefined && tail === '')) {
      return passEnd(...([chunk, encodingOrCallback, callback] as Parameters<typeof passEnd>));
    }
    return end(renameLines(chunkText(body, true), true), done);
  }) as ServerResponse['end'];

  /** A body written without writeHead: its headers are the ones set on the response. */
  function implicitHead() {
    start(response.statusCode, {});
  }
}

/** A whole body renamed, in the encoding it was sent in; the same bytes when nothing changed. */
function renameBody(body: Buffer, headers: Headers, rename: Rename): Buffer {
  const encoding = headerOf(headers, 'content-encoding')?.trim().toLowerCase();
  const codec = encoding === undefined ? IDENTITY : CODECS[encoding];
  if (!codec) return body;
  let text: string;
  try {
    text = codec.decode(body).toString('utf8');
  } catch {
    // Not what its Content-Encoding says: sent as it is rather than failing the response.
    return body;
  }
  const renamed = rename(text);
  return renamed === text ? body : codec.encode(Buffer.from(renamed, 'utf8'));
}

interface Codec {
  readonly decode: (body: Buffer) => Buffer;
  readonly encode: (body: Buffer) => Buffer;
}

const IDENTITY: Codec = { decode: (body) => body, encode: (body) => body };
const CODECS: Readonly<Record<string, Codec>> = {
  gzip: { decode: gunzipSync, encode: gzipSync },
  br: { decode: brotliDecompressSync, encode: brotliCompressSync },
  deflate: { decode: inflateSync, encode: deflateSync },
};

function toBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk);
  return Buffer.from(String(chunk ?? ''), 'utf8');
}

function stringHeader(response: ServerResponse, name: string): string | undefined {
  const value = response.getHeader(name);
  return value === undefined ? undefined : String(value);
}

/** A header of a writeHead argument (an object, or Node's flat [name, value, ...] list). */
function headerOf(headers: Headers, name: string): string | undefined {
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) {
      if (String(headers[i]).toLowerCase() === name) return String(headers[i + 1]);
    }
    return undefined;
  }
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name && value !== undefined) return String(value);
  }
  return undefined;
}

function setHeader(headers: Headers, name: string, value: string): Headers {
  if (Array.isArray(headers)) {
    const copy = [...headers];
    for (let i = 0; i + 1 < copy.length; i += 2) {
      if (String(copy[i]).toLowerCase() === name) copy[i + 1] = value;
    }
    return copy;
  }
  const copy: OutgoingHttpHeaders = {};
  for (const [key, current] of Object.entries(headers)) {
    copy[key] = key.toLowerCase() === name ? value : current;
  }
  return copy;
}

/** Link and Location point within the prefix (extensions §14); other headers are kept. */
function renameHeaderValue(name: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const lower = name.toLowerCase();
  if (lower === 'link') return renameLinkHeader(value);
  if (lower === 'location') return renameLinkHeader(`<${value}>`).slice(1, -1);
  return value;
}

function renameHeaders(headers: Headers): Headers {
  if (Array.isArray(headers)) {
    return headers.map((value, index) =>
      index % 2 === 1 ? renameHeaderValue(String(headers[index - 1]), value) : value,
    ) as Headers;
  }
  const copy: OutgoingHttpHeaders = {};
  for (const [key, value] of Object.entries(headers)) {
    copy[key] = renameHeaderValue(key, value) as OutgoingHttpHeaders[string];
  }
  return copy;
}

/** The same for headers set on the response itself (they join writeHead's). */
function renameSetHeaders(response: ServerResponse): void {
  for (const name of ['link', 'location']) {
    const value = response.getHeader(name);
    if (typeof value === 'string')
      response.setHeader(name, renameHeaderValue(name, value) as string);
  }
}
