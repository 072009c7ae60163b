import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { createLogger } from '../../logger.js';
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
        // Loaded here, not with the CLI: the other commands, and a refused setting, need none of
        // Fastify and the service (most of the CLI's start-up time).
        const { closeOnSignals, startServer } = await import('../../server.js');
        const server = await startServer(config, { logger });
        closeOnSignals(server, logger);
      }),
    );
}
