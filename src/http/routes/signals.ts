import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import type { ForecastBook } from '../../forecast/book.js';
import type { ReadingCache } from '../../read/reading-cache.js';
import type { Offered } from '../contract/params.js';
import type { Reads } from '../../read/reads.js';
import type { WebhookStore } from '../../storage/webhook-store.js';
import { registerLevel } from './level.js';
import { readLatestOf, readPointsOf, readVersionOf } from '../../queries/signal-reads.js';
import { registerStats } from './stats.js';
import { registerSubscriptions } from './subscriptions.js';
import type { LimitHook } from './route-options.js';

/**
 * Levels, statistics and webhook subscriptions (extensions §11-13): the routes, on the reads of signal-reads.ts built
 * on the read layer.
 */
export interface SignalsDeps {
  readonly reads: Reads;
  readonly subscriptions: WebhookStore;
  readonly cache: ReadingCache | undefined;
  readonly clock: () => number;
  readonly limit: LimitHook;
  readonly forecasts: () => ForecastBook;
  readonly clientAddress: (request: FastifyRequest['raw']) => string;
  readonly webhooks: Config['webhooks'];
  readonly offered: Offered;
}

export function registerSignals(app: FastifyInstance, deps: SignalsDeps): void {
  const points = readPointsOf(deps.reads);
  registerLevel(app, {
    limit: deps.limit,
    offered: deps.offered,
    points,
    latest: readLatestOf(deps.reads),
    version: readVersionOf(deps.reads, deps.cache),
    forecasts: deps.forecasts,
  });
  registerStats(app, { limit: deps.limit, points, clock: deps.clock, offered: deps.offered });
  if (deps.webhooks.enabled) {
    registerSubscriptions(app, {
      limit: deps.limit,
      store: deps.subscriptions,
      clientAddress: deps.clientAddress,
      clock: deps.clock,
      allow: deps.webhooks.allow,
      max: deps.webhooks.max,
      zones: () => deps.reads.zones,
    });
  }
}
