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
  ])('refuses, in %s, %s', async (filePath, line, reason) => {
    const messages = await restrictedImports(filePath, line);
    expect(messages.join('\n')).toContain(reason);
  });

  // Every data layer against every serving layer, each file with the way up to src/ from it.
  const dataLayers = [
    ['src/read/reads.ts', '../'],
    ['src/forecast/compute.ts', '../'],
    ['src/ingest/run-ingestion.ts', '../'],
    ['src/consumption/update-consumption.ts', '../'],
    ['src/storage/sqlite/sqlite-store.ts', '../../'],
    ['src/config.ts', './'],
    ['src/sources/entsoe/index.ts', '../../'],
    ['src/simulator/entsoe.ts', '../'],
  ] as const;
  const servingLayers = [
    'http/app.js',
    'stream/hub.js',
    'queries/peer-reads.js',
    'webhooks/deliverer.js',
  ];
  it.each(
    dataLayers.flatMap(([filePath, up]) => [
      ...servingLayers.map((target) => [filePath, `${up}${target}`] as const),
      [filePath, 'fastify'] as const,
    ]),
  )('refuses, in %s, an import of %s: the data layers sit below', async (filePath, target) => {
    const messages = await restrictedImports(filePath, `import { value } from '${target}';`);
    expect(messages.join('\n')).toContain('the data layers sit below the serving ones');
  });

  // Storage under the layers that use it; an upstream's adapter and fake under everything else.
  it.each([
    ...[
      'read/reads.js',
      'ingest/scheduler.js',
      'forecast/compute.js',
      'consumption/keep-up.js',
    ].map((target) => ['src/storage/store.ts', `../${target}`, 'storage sits under'] as const),
    ...[
      ['src/sources/entsoe/index.ts', '../../'],
      ['src/simulator/entsoe.ts', '../'],
    ].flatMap(([filePath, up]) =>
      ['config.js', 'storage/store.js', 'read/reads.js', 'ingest/scheduler.js'].map(
        (target) => [filePath!, `${up}${target}`, 'upstream adapter'] as const,
      ),
    ),
  ])('refuses, in %s, an import of %s', async (filePath, target, reason) => {
    const messages = await restrictedImports(filePath, `import { value } from '${target}';`);
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
