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

  it('come back equal, each typed array with bytes of its own', () => {
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

  it('are none when damaged', () => {
    const bytes = stateBytes([state('DE')]);
    bytes[bytes.length - 1] = bytes.at(-1)! ^ 1;
    expect(statesOf(bytes).size).toBe(0);
    expect(statesOf(null).size).toBe(0);
  });
});
