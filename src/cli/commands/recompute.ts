import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { recomputeConsumption } from '../../consumption/update-consumption.js';
import { recomputeStored } from '../../ingest/recompute.js';
import { createLogger } from '../../logger.js';
import { createStore } from '../../storage/create-store.js';
import { exitOnError } from '../exit.js';

/** A progress line at most this often, in rows scanned. */
const PROGRESS_EVERY_ROWS = 50_000;

export function registerRecompute(program: Command): void {
  program
    .command('recompute')
    .description(
      'Recompute every stored computed value from its stored mix with the current emission ' +
        'factors, and the consumption series from the stored mixes and flows.',
    )
    .action(() =>
      exitOnError(async () => {
        const config = loadConfig();
        const logger = createLogger(config);
        // Not openStore: recomputing from the store's own mixes is as right for the demo's
        // synthetic store as for a real one, and mixes nothing in.
        const store = await createStore(config.databaseUrl);
        try {
          let nextReport = PROGRESS_EVERY_ROWS;
          const result = await recomputeStored(store, ({ scanned, changed }) => {
            if (scanned < nextReport) return;
            nextReport = scanned + PROGRESS_EVERY_ROWS;
            logger.info(
              { scanned, changed },
              `recompute: ${scanned} rows scanned, ${changed} changed`,
            );
          });
          logger.info(
            {
              scanned: result.scanned,
              changed: result.changed,
              unreadable: result.unreadable.length,
            },
            `recompute: done, ${result.scanned} rows scanned, ${result.changed} changed`,
          );
          // After the values: a consumption series is traced from the mixes with the same factors.
          for (const update of await recomputeConsumption(store)) {
            logger.info(
              { graph: update.graph, hours: update.hours.length, changed: update.changed },
              `recompute: consumption series of ${update.graph}, ` +
                `${update.hours.length} hours traced, ${update.changed} rows changed`,
            );
          }
          if (result.unreadable.length > 0) {
            throw new Error(
              `${result.unreadable.length} rows have an unreadable mix and were left as they were, ` +
                `first: ${result.unreadable[0]}`,
            );
          }
        } finally {
          await store.close();
        }
      }),
    );
}
