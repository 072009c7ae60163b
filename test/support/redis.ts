import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * Whether the local Redis answers. Outside CI an unreachable Redis skips the suites that need it,
 * with a line saying so; under CI=true it is a failure.
 */
export async function isRedisAvailable(suite: string): Promise<boolean> {
  const client = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch (error) {
    const reason = `${suite}: 127.0.0.1:6379 unreachable (${(error as Error).message})`;
    if (process.env.CI === 'true') throw new Error(`${reason}; CI=true requires Redis`);
    console.warn(`${reason}; skipped. CI=true makes this a failure`);
    return false;
  } finally {
    client.disconnect();
  }
}

/** A key prefix of the test's own, and a way to delete every key under it. */
export function throwawayPrefix(): { prefix: string; drop(): Promise<void> } {
  const prefix = `gridco2-test:${process.pid}:${randomBytes(4).toString('hex')}:`;
  return {
    prefix,
    async drop() {
      const client = new Redis(REDIS_URL);
      try {
        const keys = await client.keys(`${prefix}*`);
        if (keys.length > 0) await client.del(...keys);
      } finally {
        client.disconnect();
      }
    },
  };
}
