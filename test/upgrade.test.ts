import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { StoredReading } from '../src/core/reading.js';
import { createStore } from '../src/storage/create-store.js';
import { POSTGRES_MIGRATIONS } from '../src/storage/postgres/migrations.js';
import { SQLITE_MIGRATIONS } from '../src/storage/sqlite/migrations.js';
import { expectGoldenAnswers } from './golden/compare.js';
import { answerGoldenRequests } from './golden/record.js';
import { FIXED_READINGS, GB_FORECAST } from './support/fixed-store.js';
import { createThrowawayDatabase, isPostgresAvailable } from './support/postgres.js';

/**
 * A store written by the release before the extensions (schema version 3: the GB forecast kept
 * as a reading, no basis columns) opens with this code, upgrades itself, and serves exactly the
 * bytes that release served (the recorded golden answers), while gaining the direct basis.
 */

/** The fixed data as release 3 stored it: the GB forecast as a reading of its own. */
const OLD_ROWS: (Omit<StoredReading, 'lifecycle' | 'direct'> & { version: number })[] = [
  ...FIXED_READINGS.map(({ lifecycle: _l, direct: _d, ...row }) => ({ ...row, version: 1 })),
  {
    zone: 'GB',
    ts: GB_FORECAST.ts,
    value: GB_FORECAST.value,
    method: 'upstream:uk-operator:forecast',
    complete: true,
    mix: null,
    version: 1,
  },
];
const RELEASE_3 = 3;

const dir = mkdtempSync(join(tmpdir(), 'gridco2-upgrade-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function expectUpgraded(databaseUrl: string): Promise<void> {
  expectGoldenAnswers(await answerGoldenRequests('ready', databaseUrl));
  expectGoldenAnswers(await answerGoldenRequests('off', databaseUrl));
  const store = await createStore(databaseUrl);
  try {
    expect(await store.recomputeNeeded()).toBe(false);
    // The direct basis was computed from the stored mixes ({gas: 1, coal: 1}: (370+760)/2).
    const [newest] = await store.readingsInWindow('DE', 0, Number.MAX_SAFE_INTEGER, 1, 'direct');
    expect(newest).toEqual({ ts: expect.any(Number), value: 565, method: 'computed:v1:direct' });
    expect(await store.newestForecasts('uk-operator:intensity')).toEqual([
      { ...GB_FORECAST, issuedAt: GB_FORECAST.ts },
    ]);
  } finally {
    await store.close();
  }
}

const postgres = await isPostgresAvailable('store upgrade suite (PostgreSQL)');

describe('a store of the previous release', () => {
  it('SQLite: upgrades and serves the same bytes', async () => {
    const file = join(dir, 'release-3.db');
    const db = new Database(file);
    db.exec(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
    );
    for (const migration of SQLITE_MIGRATIONS.filter(({ version }) => version <= RELEASE_3)) {
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations VALUES (?, 0)').run(migration.version);
    }
    const insert = db.prepare(
      `INSERT INTO readings (zone, ts, value, method, complete, mix, version)
       VALUES (@zone, @ts, @value, @method, @complete, @mix, @version)`,
    );
    db.transaction(() => {
      for (const row of OLD_ROWS) {
        insert.run({
          ...row,
          complete: row.complete ? 1 : 0,
          mix: row.mix === null ? null : JSON.stringify(row.mix),
        });
      }
      db.prepare(`UPDATE meta SET value = 1 WHERE key = 'data_version'`).run();
    })();
    db.close();
    await expectUpgraded(`sqlite:${file}`);
  });

  it.runIf(postgres)('PostgreSQL: upgrades and serves the same bytes', async () => {
    const database = await createThrowawayDatabase();
    try {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        await client.query(
          `CREATE TABLE schema_migrations (
               version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
        );
        for (const migration of POSTGRES_MIGRATIONS.filter(({ version }) => version <= RELEASE_3)) {
          await client.query(migration.sql);
          await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [
            migration.version,
          ]);
        }
        await client.query(
          `INSERT INTO readings (zone, ts, value, method, complete, mix, version)
             SELECT zone, ts, value, method, complete, mix, version
             FROM json_to_recordset($1::json) AS r (zone text, ts bigint, value double precision,
               method text, complete boolean, mix jsonb, version bigint)`,
          [JSON.stringify(OLD_ROWS)],
        );
        await client.query(`UPDATE meta SET value = 1 WHERE key = 'data_version'`);
      } finally {
        await client.end();
      }
      await expectUpgraded(database.url);
    } finally {
      await database.drop();
    }
  });
});
