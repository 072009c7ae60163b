import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Focused tests must never reach main: vitest fails the run on `.only` under CI.
    allowOnly: !process.env.CI,
    // Both cores (vitest's default leaves one idle): the suite's files wait on sockets, child
    // processes and timers as much as they compute, and no test depends on the machine's speed.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
