import { Type } from '@sinclair/typebox';
import { ErrorBody } from './common.js';

/** Response headers, as the OpenAPI document describes them. */
const HEADER = {
  'Cache-Control': {
    type: 'string',
    description: 'How long clients and shared caches may keep the response.',
  },
  ETag: {
    type: 'string',
    description:
      'Tag of this representation (it differs per Content-Encoding); send it in If-None-Match ' +
      'to get 304 while the data is unchanged.',
  },
  'RateLimit-Limit': {
    type: 'integer',
    description: 'Requests allowed per minute per client IP on the limited endpoints.',
  },
  'RateLimit-Remaining': {
    type: 'integer',
    description: 'Requests left in the current one-minute window.',
  },
  'RateLimit-Reset': {
    type: 'integer',
    description: 'Seconds until the current window ends.',
  },
  'Retry-After': { type: 'integer', description: 'Seconds to wait before trying again.' },
  'Content-Disposition': {
    type: 'string',
    description: '`attachment; filename="..."`: browsers save the export as a file.',
  },
  Link: {
    type: 'string',
    description:
      'Only on a truncated window: `<URL>; rel="next"` (RFC 8288), the same request with ' +
      '`from` set to the ts the note names, relative to the service root.',
  },
} as const;

type HeaderName = keyof typeof HEADER;
const headers = (...names: HeaderName[]) =>
  Object.fromEntries(names.map((name) => [name, HEADER[name]]));
const RATE_LIMIT_HEADERS: HeaderName[] = [
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
];

/**
 * A 200 response of a route: its body schema, what it means, and the headers it carries
 * (`limited`: the RateLimit-* headers; `etag`: a conditional response, with its 304).
 */
export function okResponses(
  body: string,
  description: string,
  options: { limited?: boolean; etag?: boolean; link?: boolean } = {},
) {
  const names: HeaderName[] = ['Cache-Control'];
  if (options.etag) names.push('ETag');
  if (options.limited) names.push(...RATE_LIMIT_HEADERS);
  if (options.link) names.push('Link');
  return {
    200: { $ref: `${body}#`, description, headers: headers(...names) },
    ...(options.etag && {
      304: {
        type: 'null',
        description: 'Not modified: the If-None-Match tag is still current. No body.',
        headers: headers('ETag', 'Cache-Control', ...(options.limited ? RATE_LIMIT_HEADERS : [])),
      },
    }),
  };
}

/**
 * The 200 of a route that streams a body which is not JSON (`/v1/export`, `/v1/stream`): one
 * media type per format, each a string, described in words; always rate-limited.
 */
export function streamedResponses(
  media: Readonly<Record<string, string>>,
  description: string,
  options: { disposition?: boolean } = {},
) {
  const names: HeaderName[] = ['Cache-Control', ...RATE_LIMIT_HEADERS];
  if (options.disposition) names.push('Content-Disposition');
  return {
    200: {
      description,
      headers: headers(...names),
      content: Object.fromEntries(
        Object.entries(media).map(([type, text]) => [
          type,
          { schema: { type: 'string', description: text } },
        ]),
      ),
    },
  };
}

/** Error responses, each an Error body with `Cache-Control: no-store` (and what else it sends). */
export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(
    [...statuses, ...TRANSPORT_ERRORS].map((status) => [
      status,
      {
        ...Type.Ref(ErrorBody),
        description: ERROR_DESCRIPTIONS[status] ?? 'Error',
        headers: headers('Cache-Control', ...(ERROR_HEADERS[status] ?? [])),
      },
    ]),
  );

/** errorResponses, some of them worded for the route (its caps, what its 404 means). */
export const errorResponsesWorded = (
  statuses: readonly number[],
  wording: Readonly<Record<number, string>>,
) =>
  Object.fromEntries(
    Object.entries(errorResponses(...statuses)).map(([status, response]) => [
      status,
      { ...response, description: wording[Number(status)] ?? response.description },
    ]),
  );

/** What any request can get, before any route sees it. */
const TRANSPORT_ERRORS = [408, 431];

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request: a parameter is missing, repeated or unparseable.',
  404: 'Unknown zone (or, for latest, a zone with no reading on the basis asked).',
  408: 'The request line and headers did not arrive in time.',
  429: 'Rate limit exceeded; retry after the seconds in retry-after.',
  431: 'The URL or the headers are larger than 16 KB.',
  503: 'The data store is unreachable; retry after the seconds in retry-after.',
};

const ERROR_HEADERS: Record<number, HeaderName[]> = {
  429: ['Retry-After', ...RATE_LIMIT_HEADERS],
  503: ['Retry-After'],
};
