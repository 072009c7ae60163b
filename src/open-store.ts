import type { Logger } from 'pino';
import { type Config, redactUrl } from './config.js';
import { recomputeStored } from './ingest/recompute.js';
import { createStore } from './storage/create-store.js';
import type { Store } from './storage/store.js';

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
  // The demo's store is its own, in the folder it starts in, whatever DATABASE_URL says.
  const origin = config.demo
    ? {
        setting: null,
        elsewhere: `start the demo in another folder (it keeps ${config.databaseUrl} there)`,
      }
    : { setting: 'DATABASE_URL' };
  const store = await createStore(config.databaseUrl, origin, logger);
  try {
    await checkSynthetic(store, config, purpose);
    await completeUpgrade(store, logger);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

/**
 * A schema upgrade that added a basis leaves the store's values on it to compute: done here,
 * once, from the stored mixes, before anything is served or written. What was served stays as
 * it was: only the new values are computed (`gridco2 recompute` re-decides everything).
 */
async function completeUpgrade(store: Store, logger: Logger | undefined): Promise<void> {
  if (!(await store.recomputeNeeded())) return;
  logger?.info('store upgraded: computing the values of each basis from the stored mixes');
  const started = Date.now();
  const result = await recomputeStored(store, undefined, { keepDefaultValues: true });
  logger?.info(
    { scanned: result.scanned, changed: result.changed, ms: Date.now() - started },
    'store upgrade done',
  );
  if (result.unreadable.length > 0) {
    logger?.warn({ first: result.unreadable.slice(0, 3) }, 'stored mixes that could not be read');
  }
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
