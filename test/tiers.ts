/**
 * The two test tiers (vitest.config.ts). `unit` is every suite not named here: pure, or
 * in-process and quick (Fastify on a loopback port, SQLite, the upstream simulator in the same
 * process), with no build needed; `npm run test:unit` is the fast loop. `integration` is the
 * suites below: those that start child processes (the CLI, `dist/`, Prometheus, Chromium) or
 * need PostgreSQL or Redis, and in-process ones that spend tens of seconds of CPU each. A new
 * suite lands in `unit` unless it is listed here; `test/tiers.test.ts` fails if a unit suite
 * imports what only the integration tier may.
 */
const NEEDS_PROCESSES_OR_SERVICES = [
  'src/config.shell.test.ts',
  'src/read/served-zones.test.ts',
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

/**
 * In-process, but tens of seconds of CPU each: fuzzing, brute force, backfills, backtests, the
 * type-aware lint of the whole program.
 */
const HEAVY_IN_PROCESS = [
  'test/backfill-resume.test.ts',
  'test/consumption-loop.test.ts',
  'test/export-slots.test.ts',
  'test/forecast-api.test.ts',
  'test/forecast-ingest-e2e.test.ts',
  'test/hostile.test.ts',
  'test/http-api.test.ts',
  'test/level-brute-force.test.ts',
  'test/lint-promises.test.ts',
  'test/rate-limit-cost.test.ts',
  'test/simulator-e2e.test.ts',
  'test/stream-admission.test.ts',
  'test/zones-all.test.ts',
  'test/webhooks-caps.test.ts',
];

export const INTEGRATION_SUITES: readonly string[] = [
  ...NEEDS_PROCESSES_OR_SERVICES,
  ...HEAVY_IN_PROCESS,
];

export const ALL_SUITES = ['src/**/*.test.ts', 'test/**/*.test.ts'];

/**
 * The unit suites that take longest, longest first (CPU measured one by one): the unit tier
 * starts them first (vitest.config.ts), so that its two workers end together rather than one
 * running a heavy suite alone at the end. Without this, a clean clone (no vitest cache) starts
 * the largest files first, whatever their time.
 */
export const HEAVIEST_UNIT_SUITES: readonly string[] = [
  'src/ingest/ingest-graph.test.ts',
  'src/simulator/entsoe.test.ts',
  'src/core/forecast/backtest.test.ts',
  'test/compat.test.ts',
  'test/request-cost.test.ts',
  'test/lint-boundaries.test.ts',
  'src/core/forecast/departure-regression.test.ts',
  'src/simulator/eia.test.ts',
  'src/core/units.test.ts',
  'test/golden.test.ts',
  'src/ingest/ingest.test.ts',
  'test/gridcarbon-compat.test.ts',
  'src/core/forecast/prepare.test.ts',
];

/**
 * The integration suites that take longest, longest first: started first for the same reason.
 * On a clean clone vitest starts the largest files first, and several of these are small files
 * that start the demo, the CLI or a backfill (a 30-day demo twice is a 150-line file). Ranked by
 * each file's time in one run of `npm test` on a clean clone on 2026-12-03 (four files at once,
 * beside the checks; the files of 15 s or more): their order, not their seconds, is what this
 * list keeps.
 */
export const HEAVIEST_INTEGRATION_SUITES: readonly string[] = [
  'test/stream.test.ts',
  'test/ingest-e2e.test.ts',
  'test/export.test.ts',
  'test/dashboard.browser.test.ts',
  'test/demo-forecasts-e2e.test.ts',
  'test/scale-out.test.ts',
  'test/metrics.test.ts',
  'test/forecast-api.test.ts',
  'test/webhooks-kill.test.ts',
  'test/hostile.test.ts',
  'test/webhooks-postgres.test.ts',
  'test/level-brute-force.test.ts',
  'test/demo-e2e.test.ts',
  'test/export-slots.test.ts',
  'test/container.test.ts',
  'test/simulator-e2e.test.ts',
  'test/backfill-kill.test.ts',
  'test/store.test.ts',
  'test/consumption-loop.test.ts',
  'test/forecast-worker.test.ts',
  'test/backfill-resume.test.ts',
  'test/webhooks-caps.test.ts',
  'test/pipelining.test.ts',
  'test/bases-api.test.ts',
  'test/cli.test.ts',
];
