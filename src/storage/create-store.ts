import type { Logger } from 'pino';
import { redactUrl } from '../redact.js';
import type { Store } from './store.js';
import { SqliteOpenError, SqliteStore } from './sqlite/sqlite-store.js';

/** Where a store's URL came from, as a failure to open it is told. */
export interface StoreOrigin {
  /** The setting that holds it (DATABASE_URL, migrate-store's --from and --to). */
  readonly setting: string | null;
  /** How to use another store instead, when the setting alone does not say. */
  readonly elsewhere?: string;
}

/**
 * Opens the store named by a DATABASE_URL: `sqlite:<path>` (relative to the working directory),
 * `sqlite::memory:`, or `postgres://...` / `postgresql://...`. When it cannot, the error is one
 * line for whoever starts gridco2: it names the setting the URL came from, the URL without its
 * password, and what to check.
 */
export async function createStore(
  databaseUrl: string,
  origin: StoreOrigin = { setting: 'DATABASE_URL' },
  /** Where the store's own warnings go (PostgreSQL's lost connections). */
  logger?: Logger,
): Promise<Store> {
  const { setting } = origin;
  const where = setting === null ? redactUrl(databaseUrl) : `${setting}=${redactUrl(databaseUrl)}`;
  const elsewhere = origin.elsewhere ?? `point ${setting ?? 'DATABASE_URL'} elsewhere`;
  if (databaseUrl.startsWith('sqlite:')) {
    try {
      return new SqliteStore(databaseUrl.slice('sqlite:'.length));
    } catch (error) {
      if (!(error instanceof SqliteOpenError)) throw error;
      const fix = error.remedy === null ? '' : `; ${error.remedy}, or ${elsewhere}`;
      throw new Error(
        `cannot open the SQLite file ${error.file} (${where}): ${error.problem}${fix}`,
        {
          cause: error,
        },
      );
    }
  }
  if (databaseUrl.startsWith('postgres://') || databaseUrl.startsWith('postgresql://')) {
    // Loaded only for a PostgreSQL store: the driver is a good part of every command's start.
    const [{ PostgresStore }, { describeOpenFailure }] = await Promise.all([
      import('./postgres/postgres-store.js'),
      import('./postgres/open-failure.js'),
    ]);
    try {
      return await PostgresStore.open(databaseUrl, logger ? { logger } : {});
    } catch (error) {
      throw new Error(describeOpenFailure(error, where), { cause: error });
    }
  }
  throw new Error(`unsupported DATABASE_URL scheme: ${databaseUrl.split(':')[0]}`);
}
