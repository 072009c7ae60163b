import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The layering rules of eslint.config.js (docs/architecture.md) fail the lint, and so the build,
 * on a forbidden import: each case lints one import line as if it sat in that file.
 */
const eslint = new ESLint();

async function restrictedImports(filePath: string, line: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${line}\nexport const used = value;\n`, { filePath });
  return result!.messages
    .filter((message) => message.ruleId === 'no-restricted-imports')
    .map((message) => message.message);
}

describe('the layering lint rules', () => {
  it.each([
    ['src/core/example.ts', "import { value } from '../config.js';", 'the core is pure'],
    ['src/core/example.ts', "import { value } from 'fastify';", 'the core is pure'],
    [
      'src/core/forecast/example.ts',
      "import { value } from '../../read/reads.js';",
      'the core is pure',
    ],
    ['src/storage/example.ts', "import { value } from '../config.js';", 'storage never reads'],
    [
      'src/storage/sqlite/example.ts',
      "import { value } from '../../sources/registry.js';",
      'storage never reads',
    ],
    ['src/http/routes/v1.ts', "import { value } from '../../storage/store.js';", 'never the store'],
    [
      'src/http/compat/example.ts',
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
  ])('refuses, in %s, %s', async (filePath, line, reason) => {
    const messages = await restrictedImports(filePath, line);
    expect(messages.join('\n')).toContain(reason);
  });

  it.each([
    ['src/core/example.ts', "import { value } from './zones.js';"],
    ['src/core/forecast/example.ts', "import { value } from '../reading.js';"],
    ['src/storage/example.ts', "import { value } from '../core/reading.js';"],
    ['src/storage/sqlite/example.ts', "import { value } from '../../core/sources.js';"],
    ['src/http/routes/v1.ts', "import { value } from '../../read/reads.js';"],
    ['src/stream/hub.ts', "import { value } from '../read/reads.js';"],
    ['src/http/routes/stream.ts', "import { value } from '../../stream/hub.js';"],
  ])('allows, in %s, %s', async (filePath, line) => {
    expect(await restrictedImports(filePath, line)).toEqual([]);
  });
});
