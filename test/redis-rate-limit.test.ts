import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.js';
import {
  DEFAULT_REDIS_LIMITER_TIMING,
  REDIS_LIMITER_OPTIONS,
  RedisRateLimiter,
} from '../src/http/transport/redis-limiter-partition.js';
import { startServer } from '../src/server.js';
import { isRedisAvailable, REDIS_URL, throwawayPrefix } from './support/redis.js';
import { startPartitionProxy } from './support/tcp-proxy.js';

const dir = mkdtempSync(join(tmpdir(), 'gridco2-redis-'));
/**
 * Where a test counts exactly, the limiter waits a second for Redis (the service: a few round
 * trips, at least 20 ms), so that a busy machine's pause is never taken for a partition.
 */
const PATIENT = { budgetMs: 1000, minBudgetMs: 1000 };
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
        { redisLimiter: PATIENT },
      );
      const b = await startServer(
        loadConfig({ ...env, DATABASE_URL: `sqlite:${join(dir, 'b.db')}` }),
        { redisLimiter: PATIENT },
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

    it('counts a request by its weight, the window starting with its first hit', async () => {
      const keys = throwawayPrefix();
      const redis = new Redis(REDIS_URL);
      const limiter = new RedisRateLimiter(redis, 10, keys.prefix, {
        ...DEFAULT_REDIS_LIMITER_TIMING,
        ...PATIENT,
      });
      try {
        const first = await limiter.hit('client', 4);
        expect([first.remaining, first.allowed]).toEqual([6, true]);
        expect(first.resetSeconds).toBeGreaterThan(50);
        expect(await redis.pttl(`${keys.prefix}client`)).toBeGreaterThan(50_000);
        expect((await limiter.hit('client', 6)).remaining).toBe(0);
        const over = await limiter.hit('client');
        expect([over.remaining, over.allowed]).toEqual([0, false]);
        expect(await redis.get(`${keys.prefix}client`)).toBe('11');
        expect(limiter.counting).toBe('redis');
      } finally {
        limiter.stop();
        redis.disconnect();
        await keys.drop();
      }
    });

    it('does not take a held event loop for a partition', async () => {
      const keys = throwawayPrefix();
      const redis = new Redis(REDIS_URL);
      const limiter = new RedisRateLimiter(redis, 10, keys.prefix);
      try {
        // One round trip measured: a hit now waits about 20 ms for Redis.
        await limiter.hit('client');
        const pending = limiter.hit('client');
        // Redis answers while the loop is held well past that wait; the answer must still count.
        const until = performance.now() + 300;
        while (performance.now() < until);
        expect((await pending).remaining).toBe(8);
        expect(limiter.counting).toBe('redis');
      } finally {
        limiter.stop();
        redis.disconnect();
        await keys.drop();
      }
    });

    it('comes back to a Redis that answers more slowly than before it went away', async () => {
      const keys = throwawayPrefix();
      const proxy = await startPartitionProxy({ host: '127.0.0.1', port: 6379 });
      // Going away resets the connection; ioredis connects afresh as the service's does.
      const redis = new Redis(`redis://127.0.0.1:${proxy.port}`, REDIS_LIMITER_OPTIONS);
      const limiter = new RedisRateLimiter(redis, 10, keys.prefix, {
        ...DEFAULT_REDIS_LIMITER_TIMING,
        probeMs: 100,
      });
      try {
        // Without an offline queue, a command before the connection is up is refused.
        await new Promise((resolve) => redis.once('ready', resolve));
        // A fast round trip measured: a hit now waits about 20 ms.
        await limiter.hit('client');
        expect(limiter.counting).toBe('redis');
        proxy.slowDown(100);
        await limiter.hit('client');
        expect(limiter.counting).toBe('local');
        // Redis answers in about 200 ms now, within the probe's wait: back to counting there.
        await vi.waitFor(() => expect(limiter.counting).toBe('redis'), {
          timeout: 10_000,
          interval: 50,
        });
      } finally {
        limiter.stop();
        redis.disconnect();
        await proxy.close();
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
