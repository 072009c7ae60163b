import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { closeOnSignals, createLogger, startServer } from '../../server.js';
import { exitOnError } from '../exit.js';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('Serve the /v1 API (and run the hourly ingestion unless INGEST=off).')
    .action(() =>
      exitOnError(async () => {
        const config = loadConfig();
        const logger = createLogger(config);
        const { limitWarning, maxConnections } = config.connections;
        if (limitWarning !== null) logger.warn({ maxConnections }, limitWarning);
        const server = await startServer(config, { logger });
        closeOnSignals(server, logger);
      }),
    );
}
