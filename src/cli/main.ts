import { Command } from 'commander';
import { registerServe } from './commands/serve.js';

const program = new Command()
  .name('gridco2')
  .description('Hourly grid carbon intensity (gCO2eq/kWh) for 45 zones, served as a JSON API.')
  .showHelpAfterError();

// One line per command; each command lives in ./commands/<name>.ts.
registerServe(program);

await program.parseAsync(process.argv);
