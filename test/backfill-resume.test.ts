import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { HOUR, type TimeWindow } from '../src/core/time.js';
import { findZone, type Zone } from '../src/core/zones.js';
import { historyWindow } from '../src/demo/start-demo.js';
import { runBackfill } from '../src/ingest/backfill.js';
import { createSourceAdapter } from '../src/ingest/sources.js';
import { startSimulator, type Simulator } from '../src/simulator/index.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { SOURCES, type SourceId } from '../src/core/sources.js';

/**
 * The demo's history resumed at a larger `--days` (issue 23): after a 30-day backfill, a
 * 100-day one a few hours later fetches the 70 days missing and the hours since, not the 30
 * days again. Counted twice: the requests the upstream simulator received, against those of a
 * backfill of only the missing days on an empty store; and the hours each zone was asked for.
 */

const DAY = 24 * HOUR;
const ZONES_OF: Record<SourceId, string[]> = {
  'europe-tso': ['DE', 'FR'],
  'us-agency': ['US-CAISO', 'US-MISO'],
  'uk-operator': ['GB'],
};
const logger = pino({ level: 'silent' });
const dir = mkdtempSync(join(tmpdir(), 'gridco2-resume-'));
let simulator: Simulator;
let nowMs = Date.UTC(2026, 10, 21, 13, 20);

beforeAll(async () => {
  simulator = await startSimulator({ seed: 5, now: () => nowMs });
});
afterAll(async () => {
  await simulator.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Backfills every source's zones over `window`; the requests and the hours asked, per source. */
async function backfillAll(file: string, window: TimeWindow) {
  const config = loadConfig({
    DATABASE_URL: `sqlite:${file}`,
    // The simulator signs its answers: only a demo ingests them.
    DEMO: 'on',
    ENTSOE_BASE_URL: simulator.baseUrls['europe-tso'],
    EIA_BASE_URL: simulator.baseUrls['us-agency'],
    NESO_BASE_URL: simulator.baseUrls['uk-operator'],
    ENTSOE_TOKEN: 'simulated',
    EIA_API_KEY: 'simulated',
    // The zones' suite: the flow graphs (on by default) have theirs.
    FLOWS: 'off',
  });
  const store = new SqliteStore(file);
  const requests = {} as Record<SourceId, number>;
  const hoursAsked: Record<string, number> = {};
  try {
    for (const source of SOURCES) {
      const adapter = createSourceAdapter(config, source, { logger, localUpstream: true });
      const observed = {
        ...adapter,
        fetch: (zones: readonly Zone[], asked: TimeWindow, ...rest: unknown[]) => {
          for (const { code } of zones) {
            hoursAsked[code] = (hoursAsked[code] ?? 0) + (asked.toTs - asked.fromTs) / HOUR;
          }
          return adapter.fetch(zones, asked, ...(rest as []));
        },
      };
      const before = simulator.state().requests[source];
      const result = await runBackfill({
        store,
        adapter: observed,
        logger,
        zones: ZONES_OF[source].map((code) => findZone(code)!),
        window,
      });
      expect(result.errors).toEqual([]);
      requests[source] = simulator.state().requests[source] - before;
    }
  } finally {
    await store.close();
  }
  return { requests, hoursAsked };
}

describe('the demo history resumed at a larger --days', () => {
  it('fetches only the missing days and the hours since the last run', async () => {
    const file = join(dir, 'demo.db');
    await backfillAll(file, historyWindow(30, nowMs));
    const firstEndTs = historyWindow(30, nowMs).toTs;

    nowMs += 3 * HOUR;
    const resumed = await backfillAll(file, historyWindow(100, nowMs));
    const missing = { fromTs: historyWindow(100, nowMs).fromTs, toTs: firstEndTs - 30 * DAY };
    const fresh = await backfillAll(join(dir, 'missing-only.db'), missing);
    // The hours since the first run, from as far back as a zone publishes late (US: 30 h).
    const since = { fromTs: firstEndTs - 2 * DAY, toTs: historyWindow(100, nowMs).toTs };
    const recent = await backfillAll(join(dir, 'recent-only.db'), since);

    for (const source of SOURCES) {
      expect(resumed.requests[source]).toBeGreaterThan(0);
      expect(resumed.requests[source]).toBeLessThanOrEqual(
        fresh.requests[source] + recent.requests[source],
      );
    }
    const missingHours = (missing.toTs - missing.fromTs) / HOUR;
    const recentHours = (since.toTs - since.fromTs) / HOUR;
    for (const code of Object.values(ZONES_OF).flat()) {
      // All of the missing 70 days, none of the 30 stored, at most the recent hours again.
      expect(resumed.hoursAsked[code]).toBeGreaterThanOrEqual(missingHours);
      expect(resumed.hoursAsked[code]).toBeLessThanOrEqual(missingHours + recentHours);
    }
  });
});
