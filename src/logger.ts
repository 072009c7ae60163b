import { pino, type Logger } from 'pino';
import type { Config } from './config.js';

/**
 * The service's JSON log. A module of its own, not server.ts: the commands that only write to
 * the store (ingest, backfill, recompute, migrate-store) and the demo's backfill workers log too,
 * and would otherwise load Fastify and the whole server for it.
 */
export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({ level: config.logLevel, base: { service: 'gridco2' } });
}
