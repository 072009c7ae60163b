import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Focused tests must never reach main: vitest fails the run on `.only` under CI.
    allowOnly: !process.env.CI,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
