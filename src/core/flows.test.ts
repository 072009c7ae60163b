import { describe, expect, it } from 'vitest';
import { directedFlows, sumLinks } from './flows.js';
import { HOUR } from './time.js';

const T = Date.UTC(2023, 11, 27, 10) / 1000;
const hours = (...values: (number | undefined)[]) =>
  new Map(
    values.flatMap((mw, i) => (mw === undefined ? [] : [[T + i * HOUR, mw] as [number, number]])),
  );

describe('sumLinks', () => {
  it('adds the links hour by hour', () => {
    expect(sumLinks([hours(47, 50), hours(0, 3)])).toEqual(hours(47, 53));
  });

  it('leaves an hour out when a link that publishes lacks it', () => {
    expect(sumLinks([hours(47, 50, 60), hours(0, undefined, 3)])).toEqual(hours(47, undefined, 63));
    expect(sumLinks([hours(undefined, 50), hours(1, 2)])).toEqual(hours(undefined, 52));
  });

  it('does not count a link with no value at all, and gives nothing without links', () => {
    expect(sumLinks([new Map(), hours(5, 6)])).toEqual(hours(5, 6));
    expect(sumLinks([])).toEqual(new Map());
  });
});

describe('directedFlows', () => {
  it('keeps the hours inside the window, from inclusive to exclusive', () => {
    expect(
      directedFlows('A', 'B', hours(1, 2, 3), { fromTs: T + HOUR, toTs: T + 2 * HOUR }),
    ).toEqual([{ from: 'A', to: 'B', ts: T + HOUR, mw: 2 }]);
  });
});
