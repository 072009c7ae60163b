import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The type-aware lint rules of eslint.config.js fail the lint, and so the build, on a promise
 * left floating or passed where a callback returns nothing (a service full of timers). In the
 * integration tier: the rules need a TypeScript program. They are checked in two parts: every
 * source folder gets them, at error and with type information; and they fire, as configured, on a
 * program of two files (building the whole program for it took 11 s of CPU).
 */
const eslint = new ESLint();

const RULES = {
  '@typescript-eslint/no-floating-promises': [2],
  // Fastify's options take handlers that may return a promise (a reply is thenable too).
  '@typescript-eslint/no-misused-promises': [2, { checksVoidReturn: { properties: false } }],
};

const FLOATING = 'export function start(run: () => Promise<void>) {\n  run();\n}\n';
const MISUSED = 'export function start(run: () => Promise<void>) {\n  setTimeout(run, 1);\n}\n';

describe('the promise lint rules', () => {
  it('apply at error, with type information, to a file of every source folder', async () => {
    const folders = readdirSync('src', { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join('src', entry.name));
    expect(folders).toContain('src/ingest');
    for (const folder of ['src', ...folders]) {
      const config = (await eslint.calculateConfigForFile(join(folder, 'any.ts'))) as {
        rules: Record<string, unknown>;
        languageOptions: { parserOptions: { projectService?: boolean } };
      };
      expect(config.languageOptions.parserOptions.projectService, folder).toBe(true);
      for (const [rule, setting] of Object.entries(RULES)) {
        expect(config.rules[rule], `${folder}: ${rule}`).toEqual(setting);
      }
    }
  });

  it('refuse a floating promise and a promise where a callback returns nothing', async () => {
    // A program of its own under test/ (so that eslint.config.js lints it as it does the
    // sources): its tsconfig.json is the nearest to its files, so the project service builds it.
    const dir = mkdtempSync(join('test', '.lint-promises-'));
    try {
      writeFileSync(join(dir, 'floating.ts'), FLOATING);
      writeFileSync(join(dir, 'misused.ts'), MISUSED);
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2023',
            lib: ['ES2023'],
            module: 'NodeNext',
            types: ['node'],
            strict: true,
            skipLibCheck: true,
          },
          files: ['floating.ts', 'misused.ts'],
        }),
      );
      const ruleIds = async (file: string) => {
        const [result] = await eslint.lintFiles([join(dir, file)]);
        return result!.messages.map((message) => `${message.ruleId}: ${message.message}`);
      };
      expect((await ruleIds('floating.ts')).join('\n')).toContain('no-floating-promises');
      expect((await ruleIds('misused.ts')).join('\n')).toContain('no-misused-promises');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
