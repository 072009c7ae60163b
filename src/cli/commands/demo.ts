import type { Command } from 'commander';
import { exitOnError } from '../exit.js';
import { wholeNumber } from '../whole-number.js';

const MAX_DAYS = 3650;

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description(
      'Try gridco2 without keys or network: serve synthetic data from a local upstream ' +
        'simulator, stored in data/demo.db (never DATABASE_URL), backfilling history while serving.',
    )
    .option(
      '--days <days>',
      `days of history to backfill, 1 to ${MAX_DAYS}`,
      wholeNumber(1, MAX_DAYS, 'days'),
      30,
    )
    .action((flags: { days: number }) =>
      exitOnError(async () => {
        // Loaded here, not with the CLI: see serve.ts.
        const [{ startDemo }, { closeOnSignals }] = await Promise.all([
          import('../../demo/start-demo.js'),
          import('../../server.js'),
        ]);
        const demo = await startDemo({ env: process.env, days: flags.days });
        closeOnSignals(demo, demo.logger);
      }),
    );
}
