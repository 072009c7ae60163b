import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { ForecastBook } from '../forecast/book.js';
import type { ReadingCache } from '../serving/reading-cache.js';
import type { Store } from '../storage/store.js';
import type { DataResponder } from './data-responder.js';
import { registerLevel } from './level.js';
import { readLatestOf, readPointsOf, readVersionOf } from './signal-reads.js';
import { registerStats } from './stats.js';
import { registerSubscriptions } from './subscriptions.js';

/**
 * Levels, statistics and webhook subscriptions (extensions §11-13): the routes, on the reads of signal-reads.ts built
 * from the current responder, store and cache.
 */
export interface SignalsDeps {
  readonly store: Store;
  readonly responder: DataResponder;
  readonly cache: ReadingCache | undefined;
  readonly clock: () => number;
  readonly limit: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  readonly forecasts: () => ForecastBook;
  readonly clientAddress: (request: FastifyRequest['raw']) => string;
  readonly webhooks: Config['webhooks'];
}

export function registerSignals(app: FastifyInstance, deps: SignalsDeps): void {
  const points = readPointsOf(deps.responder, deps.store);
  registerLevel(app, {
    limit: deps.limit,
    points,
    latest: readLatestOf(deps.responder, deps.store, deps.cache),
    version: readVersionOf(deps.responder, deps.cache),
    forecasts: deps.forecasts,
  });
  registerStats(app, { limit: deps.limit, points, clock: deps.clock });
  if (deps.webhooks.enabled) {
    registerSubscriptions(app, {
      limit: deps.limit,
      store: deps.store.webhooks,
      clientAddress: deps.clientAddress,
      clock: deps.clock,
      allow: deps.webhooks.allow,
      max: deps.webhooks.max,
    });
  }
}
