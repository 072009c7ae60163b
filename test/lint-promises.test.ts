import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The type-aware lint rules of eslint.config.js fail the lint, and so the build, on a promise
 * left floating or passed where a callback returns nothing (a service full of timers). In the
 * integration tier: the type-aware rules build the whole program first (about half a minute).
 */
const eslint = new ESLint();

async function ruleIds(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((message) => `${message.ruleId}: ${message.message}`);
}

describe('the promise lint rules', () => {
  it('refuses a floating promise and a promise where a callback returns nothing', async () => {
    const floating = 'export function start(run: () => Promise<void>) {\n  run();\n}\n';
    expect((await ruleIds('src/ingest/scheduler.ts', floating)).join('\n')).toContain(
      'no-floating-promises',
    );
    const misused = 'export function start(run: () => Promise<void>) {\n  setTimeout(run, 1);\n}\n';
    expect((await ruleIds('src/ingest/scheduler.ts', misused)).join('\n')).toContain(
      'no-misused-promises',
    );
  });
});
