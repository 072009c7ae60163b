import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';
import { isRedisAvailable, REDIS_URL, throwawayPrefix } from './support/redis.js';

const dir = mkdtempSync(join(tmpdir(), 'gridco2-redis-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!(await isRedisAvailable('redis rate-limit suite')))(
  'rate limit shared in Redis',
  () => {
    it('counts one IP across instances as one', async () => {
      const keys = throwawayPrefix();
      const env = {
        PORT: '0',
        LOG_LEVEL: 'silent',
        INGEST: 'off',
        RATE_LIMIT_PER_MINUTE: '10',
        REDIS_URL,
        REDIS_PREFIX: keys.prefix,
      };
      const a = await startServer(
        loadConfig({ ...env, DATABASE_URL: `sqlite:${join(dir, 'a.db')}` }),
      );
      const b = await startServer(
        loadConfig({ ...env, DATABASE_URL: `sqlite:${join(dir, 'b.db')}` }),
      );
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 12; i++) {
          const server = i % 2 === 0 ? a : b;
          statuses.push((await fetch(`${server.url}/v1/zones`)).status);
        }
        // Ten in all pass, whichever instance answers; a per-instance count would allow twenty.
        expect(statuses.filter((status) => status === 200)).toHaveLength(10);
        expect(statuses.slice(10)).toEqual([429, 429]);
      } finally {
        await a.close();
        await b.close();
        await keys.drop();
      }
    });

    it('keeps answering, counting loosely, when Redis is unreachable', async () => {
      const server = await startServer(
        loadConfig({
          PORT: '0',
          LOG_LEVEL: 'silent',
          INGEST: 'off',
          REDIS_URL: 'redis://127.0.0.1:1',
          DATABASE_URL: `sqlite:${join(dir, 'c.db')}`,
        }),
      );
      try {
        const response = await fetch(`${server.url}/v1/zones`);
        expect(response.status).toBe(200);
      } finally {
        await server.close();
      }
    });
  },
);
