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

  it('carries a new source with no value before its stretch back by its own step', () => {
    const old = new Float64Array(12).fill(100);
    // A fit asked only in the hours it serves: NaN before slot 6, rising 2 an hour from 300.
    const next = Float64Array.from({ length: 12 }, (_, i) => (i < 6 ? Number.NaN : 300 + 2 * i));
    const out = blendHandOvers([old, next], [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1], 1);
    // By its own step it would have stood at 310 in slot 5, where the old one stood at 100.
    for (let i = 6; i < 12; i++) {
      expect(out[i]!).toBeCloseTo(next[i]! - 210 * Math.exp(-(i - 5) / 3), 9);
    }
    // A stretch of one slot has no step of its own: it is carried back flat.
    const single = blendHandOvers([old, next], [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0], 1);
    expect(single[6]!).toBeCloseTo(next[6]! - 212 * Math.exp(-1 / 3), 9);
  });

  it('keeps a source without a hand-over as it is, and a forecast that ends ends', () => {
    const only = Float64Array.from([1, 2, 3, Number.NaN]);
    const out = blendHandOvers([only], [0, 0, 0, 0], 1);
    expect([...out.subarray(0, 3)]).toEqual([1, 2, 3]);
    expect(out[3]).toBeNaN();
  });
});
