/**
 * The two test tiers (vitest.config.ts): `unit` is every suite not named here, pure or
 * in-process (Fastify on a loopback port, SQLite files, the upstream simulator in the same
 * process), and needs no build; `integration` is the suites below, which start child processes
 * (the CLI, `dist/`, Prometheus, Chromium) or need PostgreSQL or Redis. A new suite lands in
 * `unit` unless it is listed here; `test/tiers.test.ts` fails if a unit suite imports what only
 * this list may.
 */
export const INTEGRATION_SUITES: readonly string[] = [
  'src/config.shell.test.ts',
  'src/storage/migrate-store.test.ts',
  'test/backfill-kill.test.ts',
  'test/bases-api.test.ts',
  'test/cli.test.ts',
  'test/container.test.ts',
  'test/dashboard.browser.test.ts',
  'test/demo-e2e.test.ts',
  'test/demo-forecasts-e2e.test.ts',
  'test/export.test.ts',
  'test/forecast-worker.test.ts',
  'test/ingest-e2e.test.ts',
  'test/keep-tick-shape.test.ts',
  'test/metrics.test.ts',
  'test/openapi-lint.test.ts',
  'test/pipelining.test.ts',
  'test/postgres-logging.test.ts',
  'test/postgres-store.test.ts',
  'test/redis-partition.test.ts',
  'test/redis-rate-limit.test.ts',
  'test/scale-out.test.ts',
  'test/schedule-api.test.ts',
  'test/signals-api.test.ts',
  'test/store-problems.test.ts',
  'test/store.test.ts',
  'test/stream.test.ts',
  'test/subscriptions-methods.test.ts',
  'test/upgrade.test.ts',
  'test/webhooks-demo.test.ts',
  'test/webhooks-kill.test.ts',
  'test/webhooks-postgres.test.ts',
];

export const ALL_SUITES = ['src/**/*.test.ts', 'test/**/*.test.ts'];
