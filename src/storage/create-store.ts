import type { Logger } from 'pino';
import { type Config, redactUrl } from '../config.js';
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

/** What a command does with the configured store; only the wording of a refusal depends on it. */
export type StorePurpose = 'serve' | 'write';

/**
 * Opens the configured store for a command that serves it or writes upstream data into it, and
 * keeps synthetic data apart from real data (docs/api.md, "Data rules"). The demo (`config.demo`)
 * works only on a store marked synthetic, and marks an empty one before anything is written;
 * every other command refuses a marked store. `recompute` and `migrate-store` use `createStore`:
 * the one only rewrites values from the store's own mixes, the other checks both of its stores.
 */
export async function openStore(
  config: Pick<Config, 'databaseUrl' | 'demo'>,
  purpose: StorePurpose,
  logger?: Logger,
): Promise<Store> {
  const store = await createStore(config.databaseUrl, 'DATABASE_URL', logger);
  try {
    await checkSynthetic(store, config, purpose);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

async function checkSynthetic(
  store: Store,
  config: Pick<Config, 'databaseUrl' | 'demo'>,
  purpose: StorePurpose,
): Promise<void> {
  const synthetic = await store.isSynthetic();
  const url = config.databaseUrl;
  const name = url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : redactUrl(url);
  if (!config.demo && synthetic) {
    throw new Error(
      purpose === 'serve'
        ? `${name} holds synthetic demo data; serve it with 'gridco2 demo', ` +
            'or point DATABASE_URL at a real store'
        : `${name} holds synthetic demo data, and real data is never written into it; ` +
            'point DATABASE_URL at a real store',
    );
  }
  if (config.demo && !synthetic) {
    const holdsData =
      (await store.scanStored(null, 1)).length > 0 ||
      Object.keys(await store.latestIngestReports()).length > 0;
    if (holdsData) {
      throw new Error(
        `${name} holds data not marked as synthetic (a real store copied there, or one from a ` +
          'demo older than the mark); the demo never writes into it: move it away and start again',
      );
    }
    await store.markSynthetic();
  }
}
