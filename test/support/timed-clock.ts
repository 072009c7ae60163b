import type { Clock } from '../../src/core/time.js';

/**
 * A clock on which request timeouts fire when its time passes them, so that a request to an
 * upstream that never answers ends after its timeout with no real waiting (`hang`).
 */
export function timedClock(epochSeconds: number): Required<Clock> & {
  hang(signal: AbortSignal | null | undefined): Promise<never>;
} {
  let nowMs = epochSeconds * 1000;
  const timeouts: { at: number; controller: AbortController }[] = [];
  const moveTo = (ms: number) => {
    nowMs = Math.max(nowMs, ms);
    for (const timeout of timeouts.filter(({ at }) => at <= nowMs)) {
      timeouts.splice(timeouts.indexOf(timeout), 1);
      timeout.controller.abort(new DOMException('timed out', 'TimeoutError'));
    }
  };
  return {
    now: () => nowMs,
    sleep: async (ms: number) => moveTo(nowMs + ms),
    timeout: (ms: number) => {
      const controller = new AbortController();
      timeouts.push({ at: nowMs + ms, controller });
      return controller.signal;
    },
    /** What a request to a hanging upstream does: nothing, until its timeout ends it. */
    hang: (signal: AbortSignal | null | undefined): Promise<never> =>
      new Promise((_resolve, reject) => {
        const timeout = timeouts.find(({ controller }) => controller.signal === signal);
        if (!signal || !timeout) throw new Error('a request without a timeout of this clock');
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        moveTo(timeout.at);
      }),
  };
}
