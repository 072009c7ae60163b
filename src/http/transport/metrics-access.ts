import { timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { API_ERRORS } from '../contract/errors.js';
import { handleClientError } from './error-handler.js';

/**
 * Who may read `GET /metrics` (extensions §8). Not the public by default: it is served on a
 * listener of its own (METRICS_ADDR, default 127.0.0.1:9464, where only the scraper reaches it).
 * METRICS_ADDR=public serves it on the service's port instead, for deployments that protect the
 * path at their edge; METRICS_TOKEN serves it there too, to requests carrying
 * `Authorization: Bearer <METRICS_TOKEN>` only (with `public` as well: the token is required).
 */
export interface MetricsAccess {
  readonly addr: { readonly host: string; readonly port: number } | 'public';
  readonly token: string | null;
  readonly logger?: Logger | undefined;
  /** Headers on every response of the listener, as on the service's (the demo's data label). */
  readonly labels?: Readonly<Record<string, string>>;
}

const ROUTE_CONFIG = (registry: Registry) => ({
  // A scrape must read this instance now, never a copy kept by a cache on the way.
  cacheControl: 'no-store',
  contentType: registry.contentType,
});

export function serveMetrics(
  app: FastifyInstance,
  registry: Registry,
  access: MetricsAccess,
): void {
  if (access.token !== null) {
    const expected = Buffer.from(`Bearer ${access.token}`);
    app.get(
      '/metrics',
      {
        schema: { hide: true },
        config: ROUTE_CONFIG(registry),
        onRequest: async (request) => {
          const given = Buffer.from(request.headers.authorization ?? '');
          if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
            throw API_ERRORS.metricsUnauthorized();
          }
        },
      },
      async () => registry.metrics(),
    );
  } else if (access.addr === 'public') {
    app.get('/metrics', { schema: { hide: true }, config: ROUTE_CONFIG(registry) }, async () =>
      registry.metrics(),
    );
  }
  if (access.addr !== 'public') {
    const { host, port } = access.addr;
    let server: Server | undefined;
    const labels = access.labels ?? {};
    app.addHook('onReady', async () => {
      server = createServer((request, response) => {
        for (const [name, value] of Object.entries(labels)) response.setHeader(name, value);
        const path = (request.url ?? '').split('?')[0];
        if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
          response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
          return;
        }
        registry.metrics().then(
          (text) => {
            response.writeHead(200, {
              'content-type': registry.contentType,
              'cache-control': 'no-store',
            });
            response.end(request.method === 'HEAD' ? undefined : text);
          },
          () => response.writeHead(500).end(),
        );
      });
      server.on('clientError', (error, socket) => handleClientError(error, socket, labels));
      // A port taken (another instance on the host) costs the metrics, never the service.
      await new Promise<void>((resolve) => {
        server!.once('error', (error) => {
          access.logger?.warn(
            { err: error.message, metricsAddr: `${host}:${port}` },
            'metrics listener not started: GET /metrics is not served (set METRICS_ADDR)',
          );
          server = undefined;
          resolve();
        });
        server!.listen(port, host, () => {
          // The port actually bound: METRICS_ADDR may ask for port 0.
          const bound = server!.address() as AddressInfo;
          const at = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
          access.logger?.info(
            { metricsUrl: `http://${at}:${bound.port}/metrics` },
            'metrics listening',
          );
          resolve();
        });
      });
    });
    app.addHook('onClose', async () => {
      server?.closeAllConnections();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    });
  }
}
