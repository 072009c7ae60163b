import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { API_ERRORS, errorBody, ApiError } from '../contract/errors.js';
import { CACHE_CONTROL, CORS_HEADERS, JSON_TYPE } from '../contract/headers.js';

/** The one error handler of the framework routes: every error becomes the `{error, hint}` body. */
export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('cache-control', CACHE_CONTROL.error);
  if (error instanceof ApiError) return sendApiError(reply, error);
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return sendApiError(reply, API_ERRORS.framework(status, STATUS_CODES[status] ?? 'bad request'));
  }
  logUnhandled(request.log, error, request.url);
  return sendApiError(reply, API_ERRORS.internal());
}

/**
 * Logs an error no route meant to raise, with its cause: every 500 body says it has been logged.
 * ApiErrors are answers, not faults, and are not logged here.
 */
export function logUnhandled(log: FastifyBaseLogger | undefined, error: unknown, url: string) {
  if (error instanceof ApiError) return;
  log?.error({ err: error, url }, 'unhandled error');
}

function sendApiError(reply: FastifyReply, error: ApiError) {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.statusCode).send(errorBody(error));
}

/**
 * Unknown paths: 404, or 405 for a path the API serves with GET. The known paths come from the
 * router's own table (collected as routes are added), never from the raw URL read as a pattern.
 */
export function createNotFoundHandler(getPaths: ReadonlySet<string>) {
  return (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('cache-control', CACHE_CONTROL.error);
    const path = request.url.split('?')[0] ?? '';
    const normalized = path.length > 1 ? path.replace(/\/+$/, '') : path;
    const error = getPaths.has(normalized)
      ? API_ERRORS.methodNotAllowed(request.method)
      : API_ERRORS.notFound(path);
    return sendApiError(reply, error);
  };
}

/** Requests the router cannot even decode (malformed percent-encoding in the path). */
export function handleFrameworkError(
  _error: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
) {
  // Called before any hook, so the CORS headers are set here.
  reply.headers({ ...CORS_HEADERS, 'cache-control': CACHE_CONTROL.error });
  return sendApiError(reply, API_ERRORS.malformedUrl());
}

/** The headers of every error sent outside the framework: JSON, open CORS, never cached. */
function rawErrorHeaders(error: ApiError, body: string): Record<string, string> {
  return {
    'content-type': JSON_TYPE,
    'cache-control': CACHE_CONTROL.error,
    ...CORS_HEADERS,
    ...error.headers,
    'content-length': String(Buffer.byteLength(body)),
  };
}

/** Sends an ApiError on a response the framework never saw (fast path, connection guard). */
export function sendRawError(
  response: ServerResponse,
  error: ApiError,
  options: { head?: boolean; close?: boolean; headers?: Record<string, string> } = {},
): void {
  const body = JSON.stringify(errorBody(error));
  const headers = { ...options.headers, ...rawErrorHeaders(error, body) };
  if (options.close) headers.connection = 'close';
  response.writeHead(error.statusCode, headers);
  response.end(options.head ? undefined : body);
}

/**
 * Requests Node's HTTP parser rejects (headers or URL too large, a broken request line, headers
 * that never finish): answered on the bare socket, in the same JSON as every other error, with
 * `labels` (the demo's data label) as every response of the listener.
 */
export function handleClientError(
  error: Error & { code?: string },
  socket: Duplex,
  labels: Readonly<Record<string, string>> = {},
) {
  // As Node's own handler: never write into the middle of a response already under way.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent: boolean } })._httpMessage;
  if (!socket.writable || error.code === 'ECONNRESET' || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const apiError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? API_ERRORS.requestTooLarge()
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? API_ERRORS.requestTimeout()
        : API_ERRORS.badRequest();
  const body = JSON.stringify(errorBody(apiError));
  const headers = { ...labels, ...rawErrorHeaders(apiError, body), connection: 'close' };
  socket.end(
    `HTTP/1.1 ${apiError.statusCode} ${STATUS_CODES[apiError.statusCode]}\r\n` +
      Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      '\r\n' +
      body,
  );
}
