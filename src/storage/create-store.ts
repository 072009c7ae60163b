import type { Store } from './store.js';
import { PostgresStore } from './postgres/postgres-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';

/**
 * Opens the store named by a DATABASE_URL: `sqlite:<path>` (relative to the working directory),
 * `sqlite::memory:`, or `postgres://...` / `postgresql://...`.
 */
export async function createStore(databaseUrl: string): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) {
    return new SqliteStore(databaseUrl.slice('sqlite:'.length));
  }
  if (databaseUrl.startsWith('postgres://') || databaseUrl.startsWith('postgresql://')) {
    return PostgresStore.open(databaseUrl);
  }
  throw new Error(`unsupported DATABASE_URL scheme: ${databaseUrl.split(':')[0]}`);
}
