import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HEAVIEST_INTEGRATION_SUITES, HEAVIEST_UNIT_SUITES, INTEGRATION_SUITES } from './tiers.js';

/**
 * The unit tier (test/tiers.ts) keeps its promise by tool: no suite of it imports, itself or
 * through a helper of test/ or bench/, what starts a process, reaches PostgreSQL or Redis, or
 * drives a browser, and none runs the built CLI.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Modules and helpers that belong to the integration tier only. */
const FORBIDDEN = new Map([
  ['node:child_process', 'starts a process'],
  ['child_process', 'starts a process'],
  ['node:cluster', 'starts a process'],
  ['pg', 'reaches PostgreSQL'],
  ['ioredis', 'reaches Redis'],
  ['playwright-core', 'drives a browser'],
  ['@sparticuz/chromium', 'drives a browser'],
  ['test/support/processes.ts', 'starts a process'],
  ['test/support/postgres.ts', 'reaches PostgreSQL'],
  ['test/support/redis.ts', 'reaches Redis'],
  ['test/support/chromium.ts', 'drives a browser'],
  ['test/support/prometheus.ts', 'runs Prometheus'],
]);

/** The CLI as `npm run build` leaves it (the unit tier must not need a build). */
const BUILT_CLI = /\bbin\/gridco2\.js\b/;

/** Value imports, re-exports, side-effect and dynamic imports; `import type` is erased. */
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s+(?!type\s)[^'"]*?from\s+'([^']+)'|(?:^|\n)\s*import\s+'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g;

function testFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** What `file` imports, followed through the helpers of test/ and bench/ (not into src/). */
function reasonsToLeave(file: string): string[] {
  const reasons: string[] = [];
  const seen = new Set<string>();
  const visit = (path: string, via: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    const text = readFileSync(join(ROOT, path), 'utf8');
    if (BUILT_CLI.test(text)) reasons.push(`${via} runs the built CLI`);
    for (const match of text.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? match[3]!;
      const target = specifier.startsWith('.')
        ? relative(ROOT, resolve(ROOT, dirname(path), specifier.replace(/\.js$/, '.ts')))
        : specifier;
      const reason = FORBIDDEN.get(target);
      if (reason) reasons.push(`${via} imports ${specifier}: it ${reason}`);
      else if (/^(test|bench)\//.test(target) && target.endsWith('.ts')) {
        visit(target, `${via} -> ${target}`);
      }
    }
  };
  visit(file, file);
  return reasons;
}

describe('the test tiers', () => {
  const integration = new Set(INTEGRATION_SUITES);
  const unit = [...testFiles('src'), ...testFiles('test')].filter((file) => !integration.has(file));

  it('lists only suites that exist in the integration tier', () => {
    expect(INTEGRATION_SUITES.filter((file) => !existsSync(join(ROOT, file)))).toEqual([]);
  });

  it('starts first only suites of their own tier', () => {
    expect(HEAVIEST_UNIT_SUITES.filter((file) => !unit.includes(file))).toEqual([]);
    expect(HEAVIEST_INTEGRATION_SUITES.filter((file) => !integration.has(file))).toEqual([]);
  });

  it('finds the unit suites', () => {
    expect(unit).toContain('src/core/units.test.ts');
    expect(unit).toContain('test/tiers.test.ts');
  });

  it('keeps child processes, PostgreSQL, Redis, browsers and the build out of the unit tier', () => {
    expect(unit.flatMap(reasonsToLeave)).toEqual([]);
  });

  it('keeps module mocks and stubbed globals out of the unit tier (it shares modules between files)', () => {
    const stubbing = /\bvi\.(?:mock|doMock|stubGlobal|stubEnv)\(/;
    expect(unit.filter((file) => stubbing.test(readFileSync(join(ROOT, file), 'utf8')))).toEqual(
      [],
    );
  });

  it('sees what an integration suite needs', () => {
    expect(reasonsToLeave('test/scale-out.test.ts')).toEqual([
      'test/scale-out.test.ts imports ./support/postgres.js: it reaches PostgreSQL',
      'test/scale-out.test.ts imports ./support/processes.js: it starts a process',
      'test/scale-out.test.ts imports ./support/redis.js: it reaches Redis',
    ]);
    expect(reasonsToLeave('test/dashboard.browser.test.ts').join('\n')).toMatch(/drives a browser/);
  });
});
