import { type Command, InvalidArgumentError } from 'commander';
import { loadConfig } from '../../config.js';
import { SOURCES, type SourceId } from '../../core/zones.js';
import { plural, reportDisabledSource, runIngestion } from '../../ingest/run-ingestion.js';
import { createSourceAdapter, sourceDisabledReason } from '../../ingest/sources.js';
import { createLogger } from '../../server.js';
import { createStore } from '../../storage/create-store.js';
import { exitOnError } from '../exit.js';

export function registerIngest(program: Command): void {
  program
    .command('ingest')
    .description(
      'Run one ingestion pass of every configured source (the trailing 72 h of each zone), then exit.',
    )
    .option('--source <source>', `only this source: ${SOURCES.join(', ')}`, parseSource)
    .action((flags: { source?: SourceId }) =>
      exitOnError(async () => {
        const config = loadConfig();
        const logger = createLogger(config);
        const store = await createStore(config.databaseUrl);
        try {
          const failed: string[] = [];
          // Sources are independent upstreams: a slow one does not hold the others back.
          await Promise.all(
            (flags.source ? [flags.source] : SOURCES).map(async (source) => {
              const reason = sourceDisabledReason(config, source);
              if (reason !== null) {
                logger.warn({ source }, `${source} disabled: ${reason}`);
                await reportDisabledSource(store, source, reason);
                if (flags.source) failed.push(`${source} (${reason})`);
                return;
              }
              const adapter = createSourceAdapter(config, source, { logger });
              const report = await runIngestion({ store, adapter, logger });
              if (report.errors.length > 0) {
                failed.push(`${source} (${plural(report.errors.length, 'error')})`);
              }
            }),
          );
          if (failed.length > 0) throw new Error(`ingestion failed for ${failed.join(', ')}`);
        } finally {
          await store.close();
        }
      }),
    );
}

export function parseSource(value: string): SourceId {
  const source = SOURCES.find((candidate) => candidate === value.trim().toLowerCase());
  if (!source) throw new InvalidArgumentError(`expected one of ${SOURCES.join(', ')}.`);
  return source;
}
