import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import type { ErrorBody } from './schemas.js';

const ALLOW = 'GET, HEAD, OPTIONS';
const MAX_ECHO = 200;

const PARAM_HINTS: Record<string, string> = {
  zone: 'give zone once, as a code from /v1/zones, e.g. zone=DE',
  from: 'give from once, e.g. from=2026-11-21T13:00:00Z',
  to: 'give to once, e.g. to=2026-11-21T13:00:00Z',
};

/** The one error handler: every error becomes the contract's `{error, hint}` body. */
export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('cache-control', 'no-store');
  if (error instanceof ApiError) {
    for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
    return reply.code(error.statusCode).send(body(error.message, error.hint));
  }
  if (error.validation) {
    const [first] = error.validation;
    const missing = first?.keyword === 'required' ? String(first.params.missingProperty) : '';
    if (missing) {
      return reply.code(400).send(body(`missing required param: ${missing}`, PARAM_HINTS[missing]));
    }
    const param = first?.instancePath.replace(/^\//, '') ?? '';
    return reply.code(400).send(body(`invalid param: ${param}`, PARAM_HINTS[param]));
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    const message = (STATUS_CODES[status] ?? 'bad request').toLowerCase();
    return reply.code(status).send(body(message, 'see /v1 for the endpoints and their parameters'));
  }
  request.log.error({ err: error, url: request.url }, 'unhandled error');
  return reply.code(500).send(body('internal error', 'retry later; the error has been logged'));
}

export function handleNotFound(request: FastifyRequest, reply: FastifyReply) {
  reply.header('cache-control', 'no-store');
  const path = request.url.split('?')[0] ?? '';
  const normalized = path.length > 1 ? path.replace(/\/+$/, '') : path;
  // A path the API serves (asked with another method) gets 405 rather than 404.
  if (request.server.hasRoute({ method: 'GET', url: normalized })) {
    return reply
      .code(405)
      .header('allow', ALLOW)
      .send(body(`method not allowed: ${request.method}`, `use one of ${ALLOW}`));
  }
  return reply.code(404).send(body(`not found: ${echo(path)}`, 'see /v1 for the endpoints'));
}

/** Requests the router cannot even decode (malformed percent-encoding in the path). */
export function handleFrameworkError(
  _error: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
) {
  return reply
    .code(400)
    .send(body('bad request: malformed URL', 'percent-encode the URL correctly'));
}

/** Requests Node's HTTP parser rejects (headers or URL too large, broken request line). */
export function handleClientError(error: Error & { code?: string }, socket: Socket) {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const payload = JSON.stringify(
    status === 431
      ? body('request too large', 'shorten the URL and headers')
      : body('bad request', 'send a valid HTTP/1.1 GET request'),
  );
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      'cache-control: no-store\r\n' +
      'access-control-allow-origin: *\r\n' +
      `content-length: ${Buffer.byteLength(payload)}\r\n` +
      'connection: close\r\n\r\n' +
      payload,
  );
}

function body(error: string, hint: string | undefined): ErrorBody {
  return hint === undefined ? { error } : { error, hint };
}

function echo(text: string): string {
  return text.length > MAX_ECHO ? `${text.slice(0, MAX_ECHO)}...` : text;
}
