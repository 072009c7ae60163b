/**
 * Re-solving every hour of a year of the European flow graph (issue 36: target under 30 s):
 * a SQLite store filled with a year of simulated mixes and flows through the real path (the
 * upstream simulator over HTTP, `runBackfill` and `runGraphBackfill` of europe-tso and NESO's
 * GB), then `updateConsumption(store, 'europe', { everything: true })` timed, as
 * `gridco2 recompute` runs it. Prints seconds and hours per second; a figure, not an assertion.
 *
 *   npx tsx bench/consumption.ts [--days 365] [--store file.db]
 *
 * With `--store`, a file already filled for the same days is traced again without refilling.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { updateConsumption } from '../src/consumption/update-consumption.js';
import { floorToHour, HOUR, type TimeWindow } from '../src/core/time.js';
import { runBackfill } from '../src/ingest/backfill.js';
import { runGraphBackfill } from '../src/ingest/backfill-graph.js';
import { createSourceAdapter } from '../src/ingest/sources.js';
import { startSimulator } from '../src/simulator/index.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';

const DAY = 24 * HOUR;

function parseDays(value: string): number {
  const days = Number(value);
  if (!Number.isInteger(days) || days < 1) throw new InvalidArgumentError('a whole number of days');
  return days;
}

const options = new Command()
  .option('--days <days>', 'days of history to fill and trace', parseDays, 365)
  .option('--store <file>', 'a SQLite file to fill, or to reuse when it exists')
  .parse()
  .opts<{ days: number; store?: string }>();

const logger = pino({ level: 'warn' });
const scratch = options.store ? undefined : mkdtempSync(join(tmpdir(), 'gridco2-bench-'));
const file = options.store ?? join(scratch!, 'consumption.db');
const nowMs = Date.UTC(2026, 0, 1);
// Whole days up to a midnight the simulator has published long before `nowMs`.
const window: TimeWindow = {
  fromTs: floorToHour(nowMs / 1000) - 2 * DAY - options.days * DAY,
  toTs: floorToHour(nowMs / 1000) - 2 * DAY,
};

try {
  if (!existsSync(file)) await fill(file);
  const store = new SqliteStore(file);
  try {
    const started = performance.now();
    const update = await updateConsumption(store, 'europe', { everything: true });
    const seconds = (performance.now() - started) / 1000;
    const hours = update.hours.length;
    process.stdout.write(
      `consumption europe: ${hours} hours traced in ${seconds.toFixed(1)} s ` +
        `(${Math.round(hours / seconds)} hours/s), ${update.changed} rows written, ` +
        `${options.days} days of simulated mixes and flows\n`,
    );
  } finally {
    await store.close();
  }
} finally {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}

/** A year of the European graph's mixes and flows, and GB's mix, as backfill stores them. */
async function fill(path: string): Promise<void> {
  const started = performance.now();
  const simulator = await startSimulator({ seed: 1, now: () => nowMs });
  const config = loadConfig({
    DATABASE_URL: `sqlite:${path}`,
    DEMO: 'on',
    FLOWS: 'on',
    ENTSOE_BASE_URL: simulator.baseUrls['europe-tso'],
    ENTSOE_TOKEN: 'simulated',
    NESO_BASE_URL: simulator.baseUrls['uk-operator'],
  });
  const store = new SqliteStore(path);
  try {
    for (const source of ['europe-tso', 'uk-operator'] as const) {
      const adapter = createSourceAdapter(config, source, { logger, localUpstream: true });
      await runBackfill({ store, adapter, logger, window, forecasts: false });
      await runGraphBackfill({ store, adapter, logger, window });
    }
  } finally {
    await store.close();
    await simulator.close();
  }
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`store filled in ${seconds.toFixed(0)} s: ${path}\n`);
}
