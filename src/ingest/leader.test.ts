import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../storage/sqlite/sqlite-store.js';
import { startIngestionLeadership } from './leader.js';

const dir = mkdtempSync(join(tmpdir(), 'gridco2-leader-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const logger = pino({ level: 'silent' });

async function waitFor(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const LEASE_MS = 6000;

describe('ingestion leadership', () => {
  it('lets one instance ingest, and hands over when it stops or dies', async () => {
    const file = join(dir, 'lead.db');
    const stores = [new SqliteStore(file), new SqliteStore(file), new SqliteStore(file)];
    const running = [0, 0, 0];
    let dead = false;
    const start = (i: number) => {
      const store = stores[i]!;
      // Instance 0 "dies" by losing its store: it can no longer renew, and releases nothing.
      const reachable =
        i === 0
          ? Object.assign(Object.create(store) as SqliteStore, {
              acquireLease: (...args: Parameters<SqliteStore['acquireLease']>) =>
                dead ? Promise.reject(new Error('gone')) : store.acquireLease(...args),
            })
          : store;
      return startIngestionLeadership({
        store: reachable,
        logger,
        // A lease far longer than any pause of a busy machine: only a death or a stop ends one.
        leaseMs: LEASE_MS,
        renewMs: 100,
        startIngestion: () => {
          running[i]!++;
          return { stop: async () => void running[i]!-- };
        },
      });
    };
    const leaders = [start(0)];
    try {
      await waitFor(() => leaders[0]!.leading);
      leaders.push(start(1), start(2));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(leaders.map((leader) => leader.leading)).toEqual([true, false, false]);
      expect(running).toEqual([1, 0, 0]);

      dead = true;
      await waitFor(() => leaders[1]!.leading || leaders[2]!.leading);
      expect(leaders[0]!.leading).toBe(false);
      expect(leaders.filter((leader) => leader.leading)).toHaveLength(1);

      // A clean stop releases the lease: the last instance takes over at its next renewal, long
      // before the lease would have run out.
      const second = leaders.findIndex((leader) => leader.leading);
      await leaders[second]!.stop();
      const third = second === 1 ? 2 : 1;
      await waitFor(() => leaders[third]!.leading, LEASE_MS / 2);
      expect(running.reduce((a, b) => a + b)).toBe(1);
    } finally {
      await Promise.all(leaders.map((leader) => leader.stop()));
      await Promise.all(stores.map((store) => store.close()));
    }
    expect(running).toEqual([0, 0, 0]);
  });
});
