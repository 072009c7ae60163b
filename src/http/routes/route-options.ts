import type { TSchema } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorResponsesWorded, okResponses } from '../contract/schemas.js';

/** The hook that counts a request against its client's rate limit, and refuses it past the limit. */
export type LimitHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/** A route that answers JSON, as its file declares it: each fact of it stated once. */
export interface JsonRoute {
  readonly summary: string;
  readonly description?: string;
  readonly operationId: string;
  readonly querystring?: TSchema;
  /** The 200: the `$id` of its body's schema, and what it means. */
  readonly ok: readonly [body: string, meaning: string];
  /** The error statuses it answers besides 429, which `limit` brings (none by default). */
  readonly errors?: readonly number[];
  /** Route-specific wording of some of those errors (its caps, what its 404 means). */
  readonly wording?: Readonly<Record<number, string>>;
  readonly cacheControl: string;
  /** Conditional: an ETag on each 200, and 304 while If-None-Match names it. */
  readonly etag?: boolean;
  /** Rate-limited by this hook: the RateLimit-* headers, and 429 past the limit. */
  readonly limit?: LimitHook;
  /** A truncated page names the next one in a Link header. */
  readonly link?: boolean;
  /** Responses of other statuses that are not an Error body (the 503 of /v1/status). */
  readonly otherResponses?: Readonly<Record<number, object>>;
}

/**
 * What every read of zones' published values states alike: 400 for a bad parameter, 404 for an
 * unknown zone, 503 while the store is unreachable; conditional (ETag) and rate-limited.
 */
export const publishedValuesRead = (cacheControl: string, limit: LimitHook) =>
  ({ errors: [400, 404, 503], cacheControl, etag: true, limit }) as const;

/**
 * The Fastify options of a JSON route. Its ETag and rate-limit flags shape both the OpenAPI
 * document (headers, the 304, the 429) and what serves them (the `etag` config the onSend hook
 * reads, the limit hook), so they are taken once here and never restated by a route.
 */
export function jsonRoute(route: JsonRoute) {
  const {
    ok,
    errors = [],
    wording = {},
    cacheControl,
    etag,
    limit,
    link,
    otherResponses,
    ...schema
  } = route;
  const limited = limit !== undefined;
  return {
    schema: {
      ...schema,
      response: {
        ...okResponses(ok[0], ok[1], { etag, limited, link }),
        ...errorResponsesWorded(limited ? [...errors, 429] : errors, wording),
        ...otherResponses,
      },
    },
    config: { cacheControl, etag },
    ...(limited && { onRequest: limit }),
  };
}
