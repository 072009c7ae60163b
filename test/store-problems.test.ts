import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startServer, type RunningServer } from '../src/server.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { fillFixedStore, NOW, computed, HOUR_NOW } from './support/fixed-store.js';
import { createThrowawayDatabase, isPostgresAvailable } from './support/postgres.js';

/**
 * A store that still answers but no longer follows (issue 10, finding 10): a SQLite file deleted
 * or replaced under the server, a store that refuses writes. /v1/status says so, with 503.
 */

const dir = mkdtempSync(join(tmpdir(), 'gridco2-store-problems-'));
let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function serve(databaseUrl: string): Promise<RunningServer> {
  const config = loadConfig({
    PORT: '0',
    DATABASE_URL: databaseUrl,
    INGEST: 'off',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '100000',
  });
  return startServer(config, { clock: () => NOW, cache: 'ready' });
}

async function status(url: string): Promise<{ code: number; ok: boolean; note: string }> {
  const response = await fetch(`${url}/v1/status`);
  const body = (await response.json()) as { ok: boolean; note: string };
  return { code: response.status, ...body };
}

async function filledSqlite(name: string): Promise<string> {
  const file = join(dir, name);
  const store = new SqliteStore(file);
  await fillFixedStore(store);
  await store.close();
  return file;
}

/**
 * Makes files unwritable even for root: the immutable attribute where this user may set it, the
 * mode bits otherwise. Returns the undo.
 */
function makeReadOnly(files: string[]): () => void {
  const present = files.filter((file) => existsSync(file));
  if (process.getuid?.() === 0) {
    const set = spawnSync('chattr', ['+i', ...present], { encoding: 'utf8' });
    expect(set.status, `chattr +i: ${set.stderr}`).toBe(0);
    return () => void spawnSync('chattr', ['-i', ...present]);
  }
  for (const file of present) chmodSync(file, 0o444);
  return () => present.forEach((file) => chmodSync(file, 0o644));
}

describe('a SQLite store under a serving process', () => {
  it('deleted: /v1/status is 503 and says so, while data is still served', async () => {
    const file = await filledSqlite('deleted.db');
    server = await serve(`sqlite:${file}`);
    expect((await status(server.url)).note).not.toMatch(/store:/);
    for (const suffix of ['', '-wal', '-shm'])
      if (existsSync(file + suffix)) unlinkSync(file + suffix);
    const after = await status(server.url);
    expect(after.code).toBe(503);
    expect(after.ok).toBe(false);
    expect(after.note).toContain('store: the SQLite file was deleted while gridco2 served it');
    expect(after.note).not.toContain(file);
    expect((await fetch(`${server.url}/v1/intensity/latest?zone=DE`)).status).toBe(200);
  });

  it('replaced by another file: /v1/status says it was replaced', async () => {
    const file = await filledSqlite('replaced.db');
    const other = await filledSqlite('other.db');
    server = await serve(`sqlite:${file}`);
    unlinkSync(file);
    copyFileSync(other, file);
    const after = await status(server.url);
    expect(after.code).toBe(503);
    expect(after.note).toContain('the SQLite file was replaced');
  });

  it('read-only: a refused write shows in /v1/status until a write succeeds', async () => {
    const file = await filledSqlite('read-only.db');
    server = await serve(`sqlite:${file}`);
    // Not the -shm file: SQLite maps it into memory, and a write to an immutable mapping is a
    // SIGBUS, not an error; a read-only mount or mode shows through the other two.
    const undo = makeReadOnly([file, `${file}-wal`]);
    try {
      await expect(server.store.upsertReadings([computed('DE', HOUR_NOW, 123)])).rejects.toThrow();
      const after = await status(server.url);
      expect(after.code).toBe(503);
      expect(after.note).toContain('store: the SQLite file refuses writes');
    } finally {
      undo();
    }
    await server.store.upsertReadings([computed('DE', HOUR_NOW, 123)]);
    expect((await status(server.url)).note).not.toMatch(/store:/);
  });
});

describe.runIf(await isPostgresAvailable('store problems on PostgreSQL'))(
  'a PostgreSQL store',
  () => {
    it('read-only: /v1/status is 503 and says so', async () => {
      const database = await createThrowawayDatabase();
      try {
        server = await serve(database.url);
        expect((await status(server.url)).note).not.toMatch(/store:/);
        await database.query(
          `ALTER DATABASE "${database.name}" SET default_transaction_read_only = on`,
        );
        // New sessions take the setting: end the pool's, as a failover to a standby would.
        await database.terminateConnections();
        // The pool reconnects on demand; until it has, status says the store is unavailable.
        let after = await status(server.url);
        for (let attempt = 0; !after.note.includes('read-only') && attempt < 100; attempt++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          after = await status(server.url);
        }
        expect(after.code).toBe(503);
        expect(after.note).toContain('store: the PostgreSQL database is read-only');
      } finally {
        await server?.close();
        server = undefined;
        await database.drop();
      }
    });
  },
);
