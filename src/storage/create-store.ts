import type { Logger } from 'pino';
import { redactUrl } from '../redact.js';
import type { Store } from './store.js';
import { describeOpenFailure } from './postgres/open-failure.js';
import { PostgresStore } from './postgres/postgres-store.js';
import { SqliteOpenError, SqliteStore } from './sqlite/sqlite-store.js';

/**
 * Opens the store named by a DATABASE_URL: `sqlite:<path>` (relative to the working directory),
 * `sqlite::memory:`, or `postgres://...` / `postgresql://...`. When it cannot, the error is one
 * line for whoever starts gridco2: it names `setting` (where the URL came from: DATABASE_URL, or
 * migrate-store's --from and --to), the URL without its password, and what to check.
 */
export async function createStore(
  databaseUrl: string,
  setting = 'DATABASE_URL',
  /** Where the store's own warnings go (PostgreSQL's lost connections). */
  logger?: Logger,
): Promise<Store> {
  const where = `${setting}=${redactUrl(databaseUrl)}`;
  if (databaseUrl.startsWith('sqlite:')) {
    try {
      return new SqliteStore(databaseUrl.slice('sqlite:'.length));
    } catch (error) {
      if (!(error instanceof SqliteOpenError)) throw error;
      const fix = error.remedy === null ? '' : `; ${error.remedy}, or point ${setting} elsewhere`;
      throw new Error(
        `cannot open the SQLite file ${error.file} (${where}): ${error.problem}${fix}`,
        {
          cause: error,
        },
      );
    }
  }
  if (databaseUrl.startsWith('postgres://') || databaseUrl.startsWith('postgresql://')) {
    try {
      return await PostgresStore.open(databaseUrl, logger ? { logger } : {});
    } catch (error) {
      throw new Error(describeOpenFailure(error, where), { cause: error });
    }
  }
  throw new Error(`unsupported DATABASE_URL scheme: ${databaseUrl.split(':')[0]}`);
}
