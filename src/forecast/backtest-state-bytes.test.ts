import { describe, expect, it } from 'vitest';
import type { ZoneBacktestState } from '../core/forecast/backtest-state.js';
import { stateBytes, statesOf } from './backtest-state-bytes.js';

/** Every typed array in `value`, with the path to it. */
function typedArrays(value: unknown, path = ''): [string, ArrayBufferView][] {
  if (ArrayBuffer.isView(value)) return [[path, value]];
  if (value instanceof Map) {
    return [...value].flatMap(([key, item]) => typedArrays(item, `${path}/${String(key)}`));
  }
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => typedArrays(item, `${path}/${key}`));
  }
  return [];
}

describe("the backtest's stored states", () => {
  // The shapes a state holds typed arrays in: in objects, arrays and maps.
  const state = (zone: string) =>
    ({
      zone,
      basis: 'lifecycle',
      checkpoint: {
        weightSums: Float64Array.from([1.5, 2.5, 3.5]),
        days: [{ issueTs: 0, day: { publishedAt: 1, sums: Float64Array.from([4, 5]) } }],
      },
      tail: [{ issueTs: 0, visibleEnd: 0, values: new Map([['m', Float64Array.from([6])]]) }],
      pooled: Uint8Array.from([1, 0, 1]),
    }) as unknown as ZoneBacktestState;

  it('come back equal, by zone-basis, each typed array with bytes of its own', () => {
    const states = [state('DE'), state('FR')];
    const read = statesOf(stateBytes(states));
    expect([...read.keys()]).toEqual(['DE|lifecycle', 'FR|lifecycle']);
    expect(read.get('FR|lifecycle')).toEqual(states[1]);
    const arrays = [...read.values()].flatMap((one) => typedArrays(one));
    expect(arrays).toHaveLength(8);
    // A view into the whole payload would keep it alive, and a clone of it would copy it whole.
    for (const [path, array] of arrays) {
      expect([path, array.buffer.byteLength]).toEqual([path, array.byteLength]);
    }
  });

  it('leave out a damaged one, or one stored under another key, and keep the others', () => {
    const stored = new Map(stateBytes([state('DE'), state('FR'), state('PL')]));
    const damaged = Uint8Array.from(stored.get('DE|lifecycle')!);
    damaged[damaged.length - 1] = damaged.at(-1)! ^ 1;
    stored.set('DE|lifecycle', damaged);
    stored.set('PL|direct', stored.get('PL|lifecycle')!);
    stored.delete('PL|lifecycle');
    stored.set('CZ|lifecycle', new Uint8Array(10));
    expect([...statesOf(stored).keys()]).toEqual(['FR|lifecycle']);
    expect(statesOf(new Map()).size).toBe(0);
  });
});
