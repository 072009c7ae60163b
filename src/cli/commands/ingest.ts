import { type Command, InvalidArgumentError } from 'commander';
import { loadConfig } from '../../config.js';
import { ingestSource } from '../../ingest/ingest-source.js';
import { plural } from '../../ingest/run-ingestion.js';
import { createLogger } from '../../logger.js';
import { openStore } from '../../open-store.js';
import { exitOnError } from '../exit.js';
import { SOURCES, type SourceId } from '../../core/sources.js';

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
        const store = await openStore(config, 'write', logger);
        // SIGTERM/SIGINT stop the run between zones; each source still stores a report saying
        // it was interrupted (what was stored stays stored) and the command fails. A request
        // in flight is left to finish, within its own timeout; a second signal exits at once.
        const interrupt = new AbortController();
        let stoppedBy: NodeJS.Signals | undefined;
        const onSignal = (signal: NodeJS.Signals) => {
          if (stoppedBy) process.exit(1);
          stoppedBy = signal;
          logger.warn({ signal }, `${signal}: stopping ingestion after the requests in flight`);
          interrupt.abort();
        };
        process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
        try {
          const failed: string[] = [];
          // Sources are independent upstreams: a slow one does not hold the others back.
          await Promise.all(
            (flags.source ? [flags.source] : SOURCES).map(async (source) => {
              const ingestion = ingestSource({ config, store, logger, source });
              const report = await ingestion.pass(interrupt.signal);
              if (ingestion.disabledReason !== null) {
                // Named on the command line, a disabled source fails it; else it is a warning.
                if (flags.source) failed.push(`${source} (${ingestion.disabledReason})`);
                return;
              }
              // Only errors fail the command. Zones answered without data are a warning (in the
              // log line, the stored report and the status note): an upstream may legitimately
              // have nothing yet for a zone, and a cron job failing every hour for that would
              // teach operators to ignore its failures.
              if (report.errors.length > 0) {
                failed.push(`${source} (${plural(report.errors.length, 'error')})`);
              }
            }),
          );
          if (stoppedBy) {
            throw new Error(`interrupted by ${stoppedBy}; what was stored stays stored`);
          }
          if (failed.length > 0) throw new Error(`ingestion failed for ${failed.join(', ')}`);
        } finally {
          process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
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
