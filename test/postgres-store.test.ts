import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { StoredReading } from '../src/core/reading.js';
import { PostgresStore } from '../src/storage/postgres/postgres-store.js';
import { POSTGRES_MIGRATIONS } from '../src/storage/postgres/migrations.js';
import type { ThrowawayDatabase } from './support/postgres.js';
import { createThrowawayDatabase, isPostgresAvailable } from './support/postgres.js';

/** What only the PostgreSQL store has to get right: concurrency, volume, lost connections. */

const H = 3600;
const T0 = Date.UTC(2026, 0, 1) / 1000;

/** `hours` consecutive readings in each of `zones` zones, valued by `valueOf(zoneIndex, hour)`. */
function readings(
  zones: number,
  hours: number,
  valueOf: (zone: number, hour: number) => number,
): StoredReading[] {
  return Array.from({ length: zones * hours }, (_, i) => {
    const zone = Math.floor(i / hours);
    const hour = i % hours;
    const value = valueOf(zone, hour);
    return {
      zone: `Z${String(zone).padStart(2, '0')}`,
      ts: T0 + hour * H,
      value,
      method: 'computed:v1',
      complete: true,
      mix: { gas: value },
      lifecycle: null,
      direct: null,
    };
  });
}

describe.skipIf(!(await isPostgresAvailable('postgres store suite')))('postgres store', () => {
  let database: ThrowawayDatabase;
  const connectionErrors: Error[] = [];
  const open = () =>
    PostgresStore.open(database.url, {
      onConnectionError: (error) => connectionErrors.push(error),
    });

  beforeAll(async () => {
    database = await createThrowawayDatabase();
  });
  afterAll(() => database.drop());
  beforeEach(async () => {
    connectionErrors.length = 0;
    await database.resetSchema();
  });

  it('applies each migration once when several instances start together', async () => {
    const stores = await Promise.all(Array.from({ length: 6 }, open));
    try {
      const applied = await database.query<{ version: number }>(
        'SELECT version FROM schema_migrations ORDER BY version',
      );
      expect(applied.map((row) => row.version)).toEqual(
        POSTGRES_MIGRATIONS.map((migration) => migration.version),
      );
      for (const store of stores) expect(await store.dataVersion()).toBe(0);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it('upserts a large batch in one transaction, the later of two equal keys winning', async () => {
    const store = await open();
    try {
      const first = readings(10, 5_000, (zone, hour) => zone * 10_000 + hour);
      expect(await store.upsertReadings(first)).toBe(50_000);
      expect(await store.dataVersion()).toBe(1);

      // Half the hours again with new values, a new zone, and the key of second[0] given again
      // right after it: PostgreSQL refuses to update one row twice in a statement.
      const second = readings(11, 2_500, (zone, hour) => -(zone * 10_000 + hour));
      const again: StoredReading = {
        zone: 'Z00',
        ts: T0,
        value: 42,
        method: 'computed:v1',
        complete: true,
        mix: { gas: 42 },
        lifecycle: null,
        direct: null,
      };
      await store.upsertReadings(second.toSpliced(1, 0, again));
      expect(await store.dataVersion()).toBe(2);

      const [totals] = await database.query<{ rows: number; sum: number }>(
        'SELECT count(*)::int AS rows, sum(value)::float8 AS sum FROM readings',
      );
      const expected = new Map<string, number | null>();
      for (const r of [...first, ...second, again]) expected.set(`${r.zone} ${r.ts}`, r.value);
      expect(totals).toEqual({
        rows: expected.size,
        sum: [...expected.values()].reduce((sum: number, value) => sum + (value ?? 0), 0),
      });
      expect(await store.readStored('Z00', T0, T0 + H)).toEqual([again]);
      expect(await store.readStored('Z03', T0 + 4_999 * H, T0 + 5_000 * H)).toEqual([
        first[3 * 5_000 + 4_999],
      ]);
    } finally {
      await store.close();
    }
  });

  it('answers again once the connections of its pool were ended', async () => {
    const store = await open();
    try {
      // Several idle connections in the pool, all of which the server then ends.
      await Promise.all(Array.from({ length: 4 }, () => store.ping()));
      const ended = await database.terminateConnections();
      expect(ended).toBeGreaterThan(0);
      await vi.waitFor(() => expect(connectionErrors).toHaveLength(ended), { timeout: 20_000 });

      await store.upsertReadings(readings(1, 3, () => 1));
      expect(await store.latestPerZone()).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('rolls back a write whose connection is lost mid-transaction, and writes again', async () => {
    const store = await open();
    try {
      const batch = readings(20, 10_000, (_zone, hour) => hour);
      // Settled into a value at once: its rejection is expected, never left unhandled while the
      // connections are being ended.
      const writing = store.upsertReadings(batch).then(
        () => undefined,
        (error: unknown) => error,
      );
      // The data version is bumped last: waiting for an open transaction keeps this race-free.
      await vi.waitFor(
        async () => {
          const inTransaction = await database.query(
            `SELECT 1 FROM pg_stat_activity
             WHERE datname = current_database() AND application_name = 'gridco2'
               AND xact_start IS NOT NULL`,
          );
          expect(inTransaction).toHaveLength(1);
        },
        { timeout: 10_000, interval: 5 },
      );
      await database.terminateConnections();
      expect(await writing).toBeInstanceOf(Error);

      expect(await store.dataVersion()).toBe(0);
      expect(await store.scanStored(null, 1)).toEqual([]);
      await store.upsertReadings(batch.slice(0, 10));
      expect(await store.dataVersion()).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('rejects queries while the database is unreachable and recovers without a restart', async () => {
    const store = await open();
    try {
      await store.ping();
      await database.startOutage();
      try {
        await expect(store.ping()).rejects.toThrow(/not currently accepting connections/);
        await expect(store.upsertReadings(readings(1, 1, () => 1))).rejects.toThrow();
      } finally {
        await database.endOutage();
      }
      await store.ping();
      expect(await store.upsertReadings(readings(1, 1, () => 1))).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('notifies subscribers of committed writes, and listens again after losing its connection', async () => {
    const writer = await open();
    const reader = await open();
    let notified = 0;
    const unsubscribe = await reader.subscribe(() => notified++);
    try {
      const waitForNotice = (after: number) =>
        vi.waitFor(() => expect(notified).toBeGreaterThan(after), { timeout: 20_000 });
      // The store's listening connection: its last statement was LISTEN.
      const listening = async () =>
        (
          await database.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity WHERE datname = current_database()
               AND application_name = 'gridco2-listen' AND query ILIKE 'LISTEN%'`,
          )
        ).map(({ pid }) => pid);
      await writer.upsertReadings(readings(1, 1, () => 1));
      await waitForNotice(0);
      const [lost] = await listening();
      expect(lost).toBeDefined();
      await database.query(`SELECT pg_terminate_backend($1)`, [lost]);
      // Listening again on a new connection (the store reconnects a second later).
      await vi.waitFor(
        async () => {
          const pids = await listening();
          expect(pids.filter((pid) => pid !== lost)).toHaveLength(1);
        },
        { timeout: 20_000, interval: 100 },
      );
      const before = notified;
      await writer.upsertReadings(readings(1, 1, () => 2));
      await waitForNotice(before);
    } finally {
      await unsubscribe();
      await writer.close();
      await reader.close();
    }
  });
});
