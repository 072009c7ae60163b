import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerBackfill } from './commands/backfill.js';
import { registerBacktest } from './commands/backtest.js';
import { registerDemo } from './commands/demo.js';
import { registerIngest } from './commands/ingest.js';
import { registerMigrateStore } from './commands/migrate-store.js';
import { registerRecompute } from './commands/recompute.js';
import { registerServe } from './commands/serve.js';
import { registerSimulateUpstreams } from './commands/simulate-upstreams.js';
import { UNIT } from '../core/units.js';

// package.json is two folders up from src/cli/ (tsx) and dist/cli/ (the build) alike, and ships
// in the npm package and the image.
const { version } = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
) as { version: string };

const program = new Command()
  .name('gridco2')
  .description(`Hourly grid carbon intensity (${UNIT}) for 45 zones, served as a JSON API.`)
  .version(version, '-V, --version', 'print the version of gridco2')
  .showHelpAfterError();

// One line per command; each command lives in ./commands/<name>.ts.
registerServe(program);
registerIngest(program);
registerBackfill(program);
registerRecompute(program);
registerBacktest(program);
registerSimulateUpstreams(program);
registerDemo(program);
registerMigrateStore(program);

await program.parseAsync(process.argv);
