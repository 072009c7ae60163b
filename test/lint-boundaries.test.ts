import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The layering rules of eslint.config.js (docs/architecture.md) fail the lint, and so the build,
 * on a forbidden import: each case lints one import line as if it sat in that file.
 */
// Type information is off here: these rules read the syntax alone, and building the program
// for the type-aware rules costs half a minute (test/lint-promises.test.ts checks those).
const eslint = new ESLint({
  overrideConfig: {
    languageOptions: { parserOptions: { projectService: false, project: null } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/no-misused-promises': 'off',
    },
  },
});

async function restrictedImports(filePath: string, line: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${line}\nexport const used = value;\n`, { filePath });
  return result!.messages
    .filter((message) => message.ruleId === 'no-restricted-imports')
    .map((message) => message.message);
}

describe('the layering lint rules', () => {
  it.each([
    ['src/core/zones.ts', "import { value } from '../config.js';", 'the core is pure'],
    ['src/core/zones.ts', "import { value } from 'fastify';", 'the core is pure'],
    [
      'src/core/forecast/prepare.ts',
      "import { value } from '../../read/reads.js';",
      'the core is pure',
    ],
    ['src/storage/store.ts', "import { value } from '../config.js';", 'storage never reads'],
    [
      'src/storage/sqlite/sqlite-store.ts',
      "import { value } from '../../sources/registry.js';",
      'storage never reads',
    ],
    ['src/http/routes/v1.ts', "import { value } from '../../storage/store.js';", 'never the store'],
    [
      'src/http/compat/shared.ts',
      "import { value } from '../../storage/store.js';",
      'never the store',
    ],
    ['src/stream/hub.ts', "import { value } from '../storage/store.js';", 'the stream engine'],
    [
      'src/stream/hub.ts',
      "import { value } from '../http/contract/params.js';",
      'the stream engine',
    ],
    ['src/stream/hub.ts', "import { value } from 'fastify';", 'the stream engine'],
    [
      'src/core/webhooks/targets.ts',
      "import { value } from '../../config.js';",
      'the core is pure',
    ],
    ['src/core/webhooks/targets.ts', "import { value } from 'fastify';", 'the core is pure'],
    ['src/core/zones.ts', "import { value } from 'node:fs';", 'the core is pure'],
    [
      'src/webhooks/deliverer.ts',
      "import { value } from '../http/routes/level.js';",
      'sit below HTTP',
    ],
    [
      'src/queries/peer-reads.ts',
      "import { value } from '../http/contract/limits.js';",
      'sit below HTTP',
    ],
    ['src/read/reads.ts', "import { value } from '../queries/peer-reads.js';", 'data layers'],
    ['src/forecast/compute.ts', "import { value } from '../http/app.js';", 'data layers'],
    ['src/ingest/run-ingestion.ts', "import { value } from '../stream/hub.js';", 'data layers'],
    ['src/consumption/update.ts', "import { value } from 'fastify';", 'data layers'],
    ['src/config.ts', "import { value } from './webhooks/deliverer.js';", 'data layers'],
    ['src/storage/store.ts', "import { value } from '../read/reads.js';", 'storage sits under'],
    ['src/storage/store.ts', "import { value } from '../http/app.js';", 'data layers'],
    [
      'src/sources/entsoe/index.ts',
      "import { value } from '../../storage/store.js';",
      'upstream adapter',
    ],
    ['src/sources/registry.ts', "import { value } from '../config.js';", 'upstream adapter'],
    [
      'src/simulator/entsoe.ts',
      "import { value } from '../ingest/scheduler.js';",
      'upstream adapter',
    ],
    ['src/sources/neso/index.ts', "import { value } from '../../http/app.js';", 'data layers'],
  ])('refuses, in %s, %s', async (filePath, line, reason) => {
    const messages = await restrictedImports(filePath, line);
    expect(messages.join('\n')).toContain(reason);
  });

  it.each([
    ['src/core/zones.ts', "import { value } from './zones.js';"],
    ['src/core/forecast/prepare.ts', "import { value } from '../reading.js';"],
    ['src/storage/store.ts', "import { value } from '../core/reading.js';"],
    ['src/storage/sqlite/sqlite-store.ts', "import { value } from '../../core/sources.js';"],
    ['src/http/routes/v1.ts', "import { value } from '../../read/reads.js';"],
    ['src/stream/hub.ts', "import { value } from '../read/reads.js';"],
    ['src/http/routes/stream.ts', "import { value } from '../../stream/hub.js';"],
    ['src/core/webhooks/addresses.ts', "import { value } from 'node:net';"],
    ['src/webhooks/deliverer.ts', "import { value } from '../queries/signal-reads.js';"],
    ['src/read/reads.ts', "import { value } from '../storage/store.js';"],
    ['src/read/reads.ts', "import { value } from '../core/webhooks/conditions.js';"],
    ['src/ingest/run-ingestion.ts', "import { value } from '../sources/registry.js';"],
    ['src/sources/entsoe/index.ts', "import { value } from '../http.js';"],
    ['src/sources/entsoe/index.ts', "import { value } from '../../core/forecast/series.js';"],
  ])('allows, in %s, %s', async (filePath, line) => {
    expect(await restrictedImports(filePath, line)).toEqual([]);
  });
});

/** The rules of one line of code in a file, by rule id. */
async function ruleIds(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((message) => `${message.ruleId}: ${message.message}`);
}

describe('the invariants lint keeps', () => {
  it.each([
    [
      'src/webhooks/deliverer.ts',
      'export const tenths = (value: number) => Number(value.toFixed(1));',
    ],
    ['src/http/routes/level.ts', "export const unit = 'gCO2eq/kWh';"],
    ['src/core/window-stats.ts', 'export const unit = `${1} gCO2eq/kWh`;'],
  ])('refuses a second rounding rule or unit spelling in %s', async (filePath, code) => {
    expect((await ruleIds(filePath, code)).join('\n')).toContain('no-restricted-syntax');
  });

  it('refuses a source file over 900 lines, and takes one of 900', async () => {
    const lines = (count: number) =>
      Array.from({ length: count }, (_, i) => `export const line${i} = ${i};`).join('\n');
    expect((await ruleIds('src/core/long.ts', lines(901))).join('\n')).toContain('max-lines');
    expect(await ruleIds('src/core/long.ts', lines(900))).toEqual([]);
  });

  it('allows formatting for people in the presentation module', async () => {
    const code = 'export const text = (value: number) => value.toFixed(1);';
    expect(await ruleIds('src/forecast/report.ts', code)).toEqual([]);
  });
});
