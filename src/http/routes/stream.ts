import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Reads } from '../../read/reads.js';
import { StreamHub, type StreamLimits, type StreamStats } from '../../stream/hub.js';
import { API_ERRORS } from '../contract/errors.js';
import { CACHE_CONTROL } from '../contract/headers.js';
import { interpretStream, readParams, STREAM_PARAMS } from '../contract/params.js';
import { errorResponsesWorded, StreamQuery, streamedResponses } from '../contract/schemas.js';
import { startLongResponse } from '../transport/long-responses.js';
import { endAtAge, StreamAdmission } from '../transport/stream-admission.js';
import type { LimitHook } from './route-options.js';

/**
 * `GET /v1/stream` (extensions §7): server-sent events, one `reading` event per reading
 * published or revised on the chosen zones and basis, `id` the store's data version. This file
 * is the transport: the query, Last-Event-ID, admission, headers and the stream's age; what each
 * stream is sent is the engine's (`stream/hub.ts`).
 */

export interface StreamDeps {
  readonly reads: Reads;
  readonly clientAddress: (request: IncomingMessage) => string;
  /** The per-IP rate limit, counted once when a stream opens. */
  readonly limit: LimitHook;
  readonly limits: StreamLimits;
  readonly logger?: Logger;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's open streams, and of them those replaying (not sent live changes). */
    streamStats(): StreamStats;
  }
}

export function registerStream(app: FastifyInstance, deps: StreamDeps): void {
  const { reads, clientAddress, limit, limits } = deps;
  const hub = new StreamHub(reads, limits, deps.logger);
  app.decorate('streamStats', () => hub.stats());
  const admission = new StreamAdmission(limits);
  // Open streams never end by themselves: close them first, or the server would wait for them.
  app.addHook('preClose', async () => hub.close());

  app.get(
    '/v1/stream',
    {
      schema: {
        summary: 'Readings as they are published or revised, as server-sent events',
        description:
          'A `text/event-stream` (use EventSource, or `curl -N`). First `retry: 5000` and the ' +
          'current `id`; then one `reading` event per reading published or revised on the ' +
          'zones and basis asked, `data` `{zone, ts, gco2eq_kwh, method}`, `id` the data ' +
          'version (on the last event of each write); a `: heartbeat` comment every 15 s. ' +
          'Send `Last-Event-ID` (EventSource does) to get everything written since that id ' +
          'before the stream goes live. Counts once against the rate limit when opened; at most ' +
          `${limits.maxPerAddress} open streams per client IP.`,
        operationId: 'streamReadings',
        querystring: StreamQuery,
        headers: {
          type: 'object',
          properties: {
            'last-event-id': {
              type: 'string',
              description:
                'The id of the last event received: the stream first replays every reading ' +
                'written after it.',
            },
          },
        },
        response: {
          ...streamedResponses(
            {
              'text/event-stream':
                'Server-sent events: `event: reading`, `data: {"zone":"DE","ts":"...",' +
                '"gco2eq_kwh":301.2,"method":"computed:v1"}`, `id: <data version>`.',
            },
            'The stream; it stays open until the client closes it (or reads too slowly: then it ' +
              'is closed and the client resumes with Last-Event-ID).',
          ),
          ...errorResponsesWorded([400, 404, 429, 503], {
            400:
              'Bad request: a parameter is missing, repeated or unparseable, or Last-Event-ID ' +
              'is not a whole number.',
            429:
              `Rate limit exceeded, or this client IP has ${limits.maxPerAddress} streams ` +
              'open; retry after the seconds in retry-after.',
            503:
              'The data store is unreachable, or this server has as many streams open as it ' +
              'allows; retry after the seconds in retry-after.',
          }),
        },
      },
      onRequest: limit,
    },
    async (request, reply) => {
      const asked = interpretStream(readParams(request.url, STREAM_PARAMS), reads);
      const lastEventId = interpretLastEventId(request.headers['last-event-id']);
      reads.refuseWhenStoreLost();
      const response = reply.raw;
      // At the cap, the oldest stream of the network holding the most may give way to this one.
      const release = admission.admit(clientAddress(request.raw), () => response.destroy(), {
        perAddress: () => API_ERRORS.tooManyStreams(limits.maxPerAddress),
        perPrefix: () => API_ERRORS.tooManyStreamsFromNetwork(limits.maxPerPrefix),
        inAll: () => API_ERRORS.serverBusy('streams'),
      });
      const started = await startLongResponse(
        request,
        reply,
        release,
        async () => {
          await hub.follow();
          return reads.dataVersion();
        },
        {
          'content-type': 'text/event-stream',
          'cache-control': CACHE_CONTROL.stream,
          // Proxies that buffer responses (nginx) would hold the events back.
          'x-accel-buffering': 'no',
        },
      );
      if (!started) return;
      const storeVersion = started.found;
      // An id from another deployment, beyond this store's version, cannot be resumed: start now.
      const since = lastEventId === undefined ? undefined : Math.min(lastEventId, storeVersion);
      // Every zone: those served at each event, a node that comes or goes with ZONES=all too.
      const zones = asked.zones.length === reads.zones.zones.length ? undefined : asked.zones;
      endAtAge(response, limits.maxAgeMs, hub.open(response, zones, asked.basis, since));
    },
  );
}

/** `Last-Event-ID`: a data version this server sent, or absent. */
function interpretLastEventId(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const text = (Array.isArray(header) ? header.join(',') : header).trim();
  if (text === '') return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value)) throw API_ERRORS.invalidLastEventId();
  return value;
}
