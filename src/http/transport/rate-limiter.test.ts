import { describe, expect, it } from 'vitest';
import { LocalRateLimiter } from './rate-limiter.js';

describe('LocalRateLimiter', () => {
  it('lets `limit` requests through per one-minute window and says when it resets', () => {
    let now = 1_000_000;
    const limiter = new LocalRateLimiter(3, () => now);
    const states = [1, 2, 3, 4].map(() => limiter.hit('a'));
    expect(states.map((s) => s.allowed)).toEqual([true, true, true, false]);
    expect(states.map((s) => s.remaining)).toEqual([2, 1, 0, 0]);
    expect(states[3]!.resetSeconds).toBe(60);
    now += 59_500;
    expect(limiter.hit('a')).toMatchObject({ allowed: false, resetSeconds: 1 });
    expect(limiter.hit('b').allowed).toBe(true);
    now += 500;
    expect(limiter.hit('a')).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 60 });
  });

  it('sweeps only ended windows when it holds many clients', () => {
    let now = 0;
    const limiter = new LocalRateLimiter(1, () => now);
    for (let i = 0; i < 10_000; i++) limiter.hit(`client-${i}`);
    now = 59_000;
    limiter.hit('kept');
    now = 60_000;
    limiter.hit('newcomer'); // over the sweep threshold: ended windows go
    expect(limiter.hit('kept').allowed).toBe(false);
    expect(limiter.hit('client-1').allowed).toBe(true);
  });
});
