import { describe, expect, it } from 'vitest';
import { HOUR } from '../time.js';
import { type Border, eiaBorder, entsoeBorder, flowAt } from './flows.js';

const H = Date.UTC(2026, 2, 10, 0) / 1000;
const at = (hours: Record<number, number>) =>
  new Map(Object.entries(hours).map(([k, mwh]) => [H + Number(k) * HOUR, mwh]));

describe('entsoeBorder: net flow from the two directions of A11', () => {
  it('is from->to minus to->from, known only in hours where both directions have a value', () => {
    const border = entsoeBorder(
      'DK-1',
      'GB',
      at({ 0: 1362, 1: 0, 2: 500 }),
      at({ 0: 0, 1: 2, 3: 40 }),
    );
    expect(border).toEqual({ from: 'DK-1', to: 'GB', net: at({ 0: 1362, 1: -2 }), since: H });
  });

  it('starts at the first hour either direction published, and is absent before any', () => {
    expect(entsoeBorder('A', 'B', at({ 5: 10 }), at({ 3: 1 }))?.since).toBe(H + 3 * HOUR);
    expect(entsoeBorder('A', 'B', new Map(), new Map())).toBeUndefined();
  });
});

describe('eiaBorder: net flow from the two balancing authorities reports', () => {
  it('is the mean of from->to and the negated to->from when both report', () => {
    // AECI -> MISO -557 and MISO -> AECI +562 (flows.md §4.3): AECI imports 559.5.
    const border = eiaBorder('AECI', 'MISO', at({ 0: -557 }), at({ 0: 562 }));
    expect(border?.net).toEqual(at({ 0: -559.5 }));
  });

  it('takes the one report that exists, with its sign', () => {
    const border = eiaBorder('FPC', 'NSB', at({ 0: 28 }), at({ 1: 4 }));
    expect(border).toEqual({ from: 'FPC', to: 'NSB', net: at({ 0: 28, 1: -4 }), since: H });
    expect(eiaBorder('A', 'B', new Map(), new Map())).toBeUndefined();
  });
});

describe('flowAt: the missing-flow rule', () => {
  const border: Border = { from: 'A', to: 'B', net: at({ 0: 100, 2: -40 }), since: H };

  it('uses the known net flow of the hour', () => {
    expect(flowAt(border, H + 2 * HOUR)).toEqual({
      from: 'A',
      to: 'B',
      mwh: -40,
      estimated: false,
    });
  });

  it('carries the newest known net flow of h-1 .. h-6, estimated', () => {
    expect(flowAt(border, H + HOUR)).toEqual({ from: 'A', to: 'B', mwh: 100, estimated: true });
    for (const hour of [3, 5, 8]) {
      expect(flowAt(border, H + hour * HOUR), `h+${hour}`).toEqual({
        from: 'A',
        to: 'B',
        mwh: -40,
        estimated: true,
      });
    }
  });

  it('is 0, estimated, beyond 6 hours', () => {
    expect(flowAt(border, H + 9 * HOUR)).toEqual({ from: 'A', to: 'B', mwh: 0, estimated: true });
  });

  it('is no flow before the border existed', () => {
    const later: Border = { ...border, since: H + 2 * HOUR };
    expect(flowAt(later, H + HOUR)).toBeUndefined();
    expect(flowAt(later, H + 2 * HOUR)?.estimated).toBe(false);
    // From the first publication on, the border stays: an unknown hour is estimated, never absent.
    expect(flowAt(later, H + 100 * HOUR)).toEqual({ from: 'A', to: 'B', mwh: 0, estimated: true });
  });
});
