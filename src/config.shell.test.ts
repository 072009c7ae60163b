import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { processOpenFileLimit } from './config.js';

// Apart from src/config.test.ts: it starts a shell, so it belongs to the integration tier.
describe('processOpenFileLimit', () => {
  it("reads this process's limit as the shell reports it", () => {
    const shell = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
    expect(processOpenFileLimit()).toBe(shell === 'unlimited' ? Infinity : Number(shell));
  });
});
