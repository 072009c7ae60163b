import type { Command } from 'commander';
import { UPSTREAMS } from '../../sources/registry.js';
import { exitOnError } from '../exit.js';
import { wholeNumber } from '../whole-number.js';
import { SOURCES } from '../../core/sources.js';

export function registerSimulateUpstreams(program: Command): void {
  program
    .command('simulate-upstreams')
    .description(
      'Serve synthetic ENTSO-E, EIA and NESO replies on 127.0.0.1, with fault injection under /_sim/.',
    )
    .option('--port <port>', 'port to listen on (0: any free port)', wholeNumber(0, 65535), 8089)
    .option('--seed <seed>', 'seed of the synthetic data', wholeNumber(0, 2 ** 31 - 1), 1)
    .action((options: { port: number; seed: number }) =>
      exitOnError(async () => {
        // Loaded here, not with the CLI: see serve.ts (the simulator builds its grid on import).
        const { startSimulator } = await import('../../simulator/index.js');
        const simulator = await startSimulator({ port: options.port, seed: options.seed });
        // The variables go to stdout, alone, so that the output can be sourced as an env file:
        // every upstream's base URL, then the keys (any non-empty key is accepted).
        const settings = SOURCES.map((source) => [source, UPSTREAMS[source].settings] as const);
        process.stdout.write(
          [
            ...settings.map(
              ([source, { baseUrl }]) => `${baseUrl.variable}=${simulator.baseUrls[source]}`,
            ),
            ...settings.flatMap(([, { credential }]) =>
              credential ? [`${credential.variable}=simulated`] : [],
            ),
            '',
          ].join('\n'),
        );
        process.stderr.write(
          `gridco2: simulating the upstreams on ${simulator.url} (seed ${options.seed}); ` +
            `state at ${simulator.url}/_sim/state, faults via POST /_sim/faults, clock via POST /_sim/clock\n`,
        );
        const stop = () => {
          simulator.close().then(
            () => process.exit(0),
            () => process.exit(1),
          );
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      }),
    );
}
