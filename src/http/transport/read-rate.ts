import type { ServerResponse } from 'node:http';

/**
 * A long response's hold on its slot, bounded against clients that read slowly or not at all:
 * a deadline for the whole response, and a minimum read rate measured from backpressure. The
 * kernel's socket buffers take the first megabytes whatever the client does, so the rate is
 * judged on the bytes the socket took over the last window, and only when the response had bytes
 * waiting all through it (a moment in which the server had nothing to send proves nothing). The
 * window slides in tenths, so a client is cut about one window after it falls below the rate, not
 * up to two.
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

/** Samples per window: the window moves on by a tenth of itself at a time. */
const STEPS_PER_WINDOW = 10;

/**
 * Watches `response`; when it passes its deadline, or bytes waited all through the last window
 * and fewer than the minimum were taken in it, calls `cut` (which frees the slot) and destroys
 * the response.
 */
export function guardReadRate(
  response: ServerResponse,
  limits: ReadRateLimits,
  cut: (reason: CutReason) => void,
): ReadRateGuard {
  let written = 0;
  const minPerWindow = (limits.minBytesPerSecond * limits.windowMs) / 1000;
  // Bytes taken at each step of the last window (its start included) while bytes waited; a step
  // with nothing waiting starts it again, since the window must be one of continuous waiting.
  const takenAt: number[] = [0];
  const end = (reason: CutReason) => {
    stop();
    cut(reason);
    response.destroy();
  };
  const step = setInterval(() => {
    // What waits in Node's buffers (the response's and its socket's) is not taken yet.
    const waiting = response.writableLength;
    const taken = written - waiting;
    if (waiting === 0) {
      takenAt.length = 0;
      takenAt.push(taken);
      return;
    }
    takenAt.push(taken);
    if (takenAt.length > STEPS_PER_WINDOW + 1) takenAt.shift();
    const windowFull = takenAt.length === STEPS_PER_WINDOW + 1;
    if (windowFull && taken - takenAt[0]! < minPerWindow) end('too_slow');
  }, limits.windowMs / STEPS_PER_WINDOW);
  const deadline = setTimeout(() => end('deadline'), limits.deadlineMs);
  step.unref();
  deadline.unref();
  const stop = () => {
    clearInterval(step);
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
