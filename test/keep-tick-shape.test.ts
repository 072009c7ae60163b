import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * The V8 behaviour `src/cli/keep-tick-shape.ts` works around, checked in a child process that can
 * force GCs and print `process.nextTick`'s feedback: after a major GC with no tick object alive,
 * the tick-object literal's property definitions must still be monomorphic. Uses the build, as
 * `bin/gridco2.js` does (npm test builds first).
 */
const SCRIPT = `
const { keepTickObjectShape } = await import(${JSON.stringify(
  new URL('../dist/cli/keep-tick-shape.js', import.meta.url).href,
)});
if (process.env.KEEP === '1') keepTickObjectShape();
const noop = () => {};
const settle = () => new Promise((resolve) => setTimeout(resolve, 10));
for (let i = 0; i < 50; i++) process.nextTick(noop);
await settle();
globalThis.gc();
globalThis.gc();
for (let i = 0; i < 5; i++) process.nextTick(noop);
await settle();
%DebugPrint(process.nextTick);
`;

function literalFeedback(keep: boolean): string[] {
  const child = spawnSync(
    process.execPath,
    ['--allow-natives-syntax', '--expose-gc', '--input-type=module', '-e', SCRIPT],
    { encoding: 'utf8', env: { ...process.env, KEEP: keep ? '1' : '0' }, timeout: 30_000 },
  );
  expect(child.status, child.stderr).toBe(0);
  return [...child.stdout.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]!);
}

describe('keepTickObjectShape', () => {
  it('keeps nextTick monomorphic across a major GC with no tick object alive', () => {
    const kept = literalFeedback(true);
    expect(kept.length).toBeGreaterThanOrEqual(2);
    expect(kept.every((state) => state === 'MONOMORPHIC')).toBe(true);
  });

  it('is needed: without it the same GC leaves the literal megamorphic', () => {
    expect(literalFeedback(false)).toContain('MEGAMORPHIC');
  });
});
