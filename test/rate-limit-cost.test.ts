import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { fillFixedStoreWithBacktest } from './support/fixed-backtest.js';
import { FR_FIRST, HOUR_NOW, NOW, iso } from './support/fixed-store.js';

/**
 * A request refused by the rate limit must cost next to nothing (issue 10): the limiter is asked
 * before any body is built. Counted in bodies encoded, not in time.
 */

const LIMIT = 5;
const REFUSED = 300;
const dir = mkdtempSync(join(tmpdir(), 'gridco2-limit-cost-'));
const file = join(dir, 'fixed.db');
beforeAll(async () => {
  const store = new SqliteStore(file);
  await fillFixedStoreWithBacktest(store);
  await store.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A distinct 5000-point window per index: the most expensive body there is. */
const uniqueWindow = (index: number) =>
  `/v1/intensity?zone=FR&from=${iso(FR_FIRST + index)}&to=${iso(HOUR_NOW)}`;

describe.each(['ready', 'off'] as const)('a spent rate limit, reading cache %s', (cache) => {
  it('answers 429 without encoding any body', async () => {
    const config = loadConfig({
      PORT: '0',
      DATABASE_URL: `sqlite:${file}`,
      INGEST: 'off',
      LOG_LEVEL: 'silent',
      RATE_LIMIT_PER_MINUTE: String(LIMIT),
    });
    const server = await startServer(config, { clock: () => NOW, cache });
    try {
      const served = await Promise.all(
        Array.from({ length: LIMIT }, (_, i) => fetch(`${server.url}${uniqueWindow(i)}`)),
      );
      expect(served.map((response) => response.status)).toEqual(Array(LIMIT).fill(200));
      await Promise.all(served.map((response) => response.arrayBuffer()));
      const afterServed = server.app.servingStats();
      expect(afterServed.bodiesEncoded).toBe(LIMIT);
      expect(afterServed.bytesEncoded).toBeGreaterThan(LIMIT * 300_000);

      const refused = await Promise.all(
        Array.from({ length: REFUSED }, (_, i) =>
          fetch(`${server.url}${uniqueWindow(LIMIT + i)}`).then(async (response) => {
            await response.arrayBuffer();
            return response.status;
          }),
        ),
      );
      expect(refused).toEqual(Array(REFUSED).fill(429));
      const afterRefused = server.app.servingStats();
      expect(afterRefused.bodiesEncoded).toBe(afterServed.bodiesEncoded);
      expect(afterRefused.bytesEncoded).toBe(afterServed.bytesEncoded);
      // Nor do unique windows asked once fill the response cache.
      expect(afterRefused.cachedBodyBytes).toBe(0);
    } finally {
      await server.close();
    }
  });
});
