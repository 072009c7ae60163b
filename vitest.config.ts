import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import {
  ALL_SUITES,
  HEAVIEST_INTEGRATION_SUITES,
  HEAVIEST_UNIT_SUITES,
  INTEGRATION_SUITES,
} from './test/tiers.js';

/** vitest's order (longest first when it has timed them, else largest first), heaviest known first. */
class HeaviestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // Each file is of one tier: one list ranks both.
    const heaviest = [...HEAVIEST_UNIT_SUITES, ...HEAVIEST_INTEGRATION_SUITES];
    const rank = (file: TestSpecification) => {
      const index = heaviest.indexOf(relative(file.project.config.root, file.moduleId));
      return index < 0 ? heaviest.length : index;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    // Focused tests must never reach main: vitest fails the run on `.only` under CI.
    allowOnly: !process.env.CI,
    // Both cores (vitest's default leaves one idle): the suite's files wait on sockets, child
    // processes and timers as much as they compute, and no test depends on the machine's speed.
    maxWorkers: 2,
    // vitest makes one pool per kind for the whole run and isolates its workers by this root
    // option, whatever a project says: a project's own `isolate: false` still spawned a fresh
    // process per file. So the unit tier runs in threads, not isolated, and the integration
    // tier in forks, one process per file as before.
    // The integration tier (forks) runs four files at once: its suites mostly wait (a CLI child,
    // a socket, a lease), so two left the cores half idle (the whole gate used 0.94 of its 2
    // cores). On 2026-12-02, only niced work beside it: 546 s with two workers, 306 s with four
    // and the suites' own speed-ups of the same day (their shares not separated). Its nets are
    // wide enough for the extra load (below).
    poolOptions: { threads: { isolate: false }, forks: { maxForks: 4 } },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    sequence: { sequencer: HeaviestFirst },
    // Two tiers (test/tiers.ts): `npm run test:unit` is the fast loop, `npm test` runs both.
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ALL_SUITES,
          exclude: [...INTEGRATION_SUITES],
          // One module graph per worker thread, not per file: importing Fastify, Ajv and the
          // sources again for each of 102 files was most of the tier's CPU (267 -> 119 CPU s
          // at a load of 15-19 on 2 cores). Its suites keep no state in modules (no mocks, no
          // stubbed globals, no env: test/tiers.test.ts) and start no child process, so
          // threads serve them as processes would.
          pool: 'threads',
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: [...INTEGRATION_SUITES],
          // Its suites wait for what they assert (a log line, a socket, a row); the timeouts are
          // only a net for a hang, wide enough for a machine busy with other work (at a load of
          // 15 on 2 cores, 30 s per test and 60 s per hook timed 13 tests out).
          testTimeout: 180_000,
          hookTimeout: 300_000,
          // The build its suites start the CLI from (made again if a source is newer). The
          // backtest of the fixed store is not made here, alone before any file starts: the first
          // suite that needs it makes it (test/support/fixed-backtest.ts).
          globalSetup: ['test/support/built-cli.ts'],
        },
      },
    ],
  },
});
