import { describe, expect, it } from 'vitest';
import { blendHandOvers } from './hand-over.js';

describe('hand-overs', () => {
  it('starts the new source from where the old one stood and lets its own shape take over', () => {
    const old = new Float64Array(24).fill(100);
    // A new source 115 higher (the demo's DE jump), rising 1 an hour.
    const next = Float64Array.from({ length: 24 }, (_, i) => 215 + i);
    const choice = Array.from({ length: 24 }, (_, i) => (i < 6 ? 0 : 1));
    const out = blendHandOvers([old, next], choice, 1);
    expect([...out.subarray(0, 6)]).toEqual(new Array(6).fill(100));
    // Into the hand-over, the step is the new source's own (1), not 115.
    expect(out[6]! - out[5]!).toBeLessThan(115 / 3);
    for (let i = 6; i < 24; i++) expect(out[i]! - out[i - 1]!).toBeLessThan(115 / 3);
    // Twelve hours on, the new source serves all but 2 % of the old offset.
    expect(Math.abs(out[18]! - next[18]!)).toBeLessThan(0.02 * 115);
  });

  it('keeps a source without a hand-over as it is, and a forecast that ends ends', () => {
    const only = Float64Array.from([1, 2, 3, Number.NaN]);
    const out = blendHandOvers([only], [0, 0, 0, 0], 1);
    expect([...out.subarray(0, 3)]).toEqual([1, 2, 3]);
    expect(out[3]).toBeNaN();
  });
});
