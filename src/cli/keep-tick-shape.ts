import { createHook } from 'node:async_hooks';

/**
 * Keeps one of `process.nextTick`'s tick objects alive for the life of the process, so that the
 * object maps V8 builds for them never die.
 *
 * Why: Node 20 makes each tick object with a literal that has computed (symbol) keys, and V8
 * (as we read its runtime) keeps the feedback of such a literal's properties weakly and for one
 * shape only: once a major
 * GC runs while no tick object is alive (at start-up, after a reading-cache load, between bursts
 * of requests), the next tick object gets new maps and the literal turns megamorphic for good.
 * From then on every nextTick (about eight per HTTP request inside Node's streams) defines its
 * properties through the V8 runtime: 10 to 15 % of the serving thread's CPU in `perf` on the
 * fast path. A bare server rarely collects its old generation, so it never pays this.
 *
 * Must run before anything else has made and dropped tick objects across a major GC: first thing
 * in `bin/gridco2.js`, before the rest of the program is loaded.
 *
 * @public imported by bin/gridco2.js from dist/, where knip does not look.
 */
export function keepTickObjectShape(): void {
  if (kept !== undefined) return;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject' && kept === undefined) kept = resource;
    },
  });
  hook.enable();
  process.nextTick(() => {});
  hook.disable();
}

let kept: object | undefined;
