import type { ServerResponse } from 'node:http';

/**
 * A long response's hold on its slot, bounded against clients that read slowly or not at all:
 * a deadline for the whole response, and a minimum read rate measured from backpressure. The
 * kernel's socket buffers take the first megabytes whatever the client does, so the rate is
 * judged per window, on the bytes the socket took in that window, and only while the response
 * has bytes waiting (a window in which the server had nothing to send proves nothing).
 */

export interface ReadRateLimits {
  /** The longest a response may last, in milliseconds. */
  readonly deadlineMs: number;
  /** Bytes per second a client must take, on average over each window, while bytes wait. */
  readonly minBytesPerSecond: number;
  /** The window over which the rate is measured, in milliseconds. */
  readonly windowMs: number;
}

/** Why a response was cut short. */
export type CutReason = 'deadline' | 'too_slow';

export interface ReadRateGuard {
  /** Counts bytes written to the response. */
  wrote(bytes: number): void;
  /** The response ended normally: stop watching it. */
  stop(): void;
}

/**
 * Watches `response`; when it passes its deadline or a window ends with bytes waiting and fewer
 * taken than the minimum, calls `cut` (which frees the slot) and destroys the response.
 */
export function guardReadRate(
  response: ServerResponse,
  limits: ReadRateLimits,
  cut: (reason: CutReason) => void,
): ReadRateGuard {
  let written = 0;
  let takenBefore = 0;
  const minPerWindow = (limits.minBytesPerSecond * limits.windowMs) / 1000;
  const end = (reason: CutReason) => {
    stop();
    cut(reason);
    response.destroy();
  };
  const window = setInterval(() => {
    // What waits in Node's buffers (the response's and its socket's) is not taken yet.
    const waiting = response.writableLength;
    const taken = written - waiting;
    const inWindow = taken - takenBefore;
    takenBefore = taken;
    if (waiting > 0 && inWindow < minPerWindow) end('too_slow');
  }, limits.windowMs);
  const deadline = setTimeout(() => end('deadline'), limits.deadlineMs);
  window.unref();
  deadline.unref();
  const stop = () => {
    clearInterval(window);
    clearTimeout(deadline);
  };
  response.once('close', stop);
  return {
    wrote: (bytes) => {
      written += bytes;
    },
    stop,
  };
}
