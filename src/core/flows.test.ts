import { describe, expect, it } from 'vitest';
import { directedFlows, sumLinks } from './flows.js';
import { HOUR } from './time.js';

const T = Date.UTC(2023, 11, 27, 10) / 1000;
const hours = (...values: (number | undefined)[]) =>
  new Map(
    values.flatMap((mw, i) => (mw === undefined ? [] : [[T + i * HOUR, mw] as [number, number]])),
  );

describe('sumLinks', () => {
  /** A link that exists from its first value in `series` on. */
  const link = (series: Map<number, number>) => ({
    series,
    since: series.size > 0 ? Math.min(...series.keys()) : undefined,
  });
  /** A link that published before the series. */
  const older = (series: Map<number, number>) => ({ series, since: T - 1000 * HOUR });

  it('adds the links hour by hour', () => {
    expect(sumLinks([link(hours(47, 50)), link(hours(0, 3))])).toEqual(hours(47, 53));
  });

  it('leaves an hour out when a link that exists lacks it', () => {
    expect(sumLinks([link(hours(47, 50, 60)), link(hours(0, undefined, 3))])).toEqual(
      hours(47, undefined, 63),
    );
    expect(sumLinks([older(hours(undefined, 50)), link(hours(1, 2))])).toEqual(
      hours(undefined, 52),
    );
  });

  it('counts a link from its first published flow on: the hours before are the others alone', () => {
    expect(sumLinks([link(hours(47, 50, 60)), link(hours(undefined, 3, 4))])).toEqual(
      hours(47, 53, 64),
    );
  });

  it('knows no hour of a border where a link that exists published nothing in the series', () => {
    expect(sumLinks([older(new Map()), link(hours(5, 6))])).toEqual(new Map());
  });

  it('does not count a link that never published, and gives nothing without links', () => {
    expect(sumLinks([link(new Map()), link(hours(5, 6))])).toEqual(hours(5, 6));
    expect(sumLinks([])).toEqual(new Map());
    expect(sumLinks([link(new Map())])).toEqual(new Map());
  });
});

describe('directedFlows', () => {
  it('keeps the hours inside the window, from inclusive to exclusive', () => {
    expect(
      directedFlows('A', 'B', hours(1, 2, 3), { fromTs: T + HOUR, toTs: T + 2 * HOUR }),
    ).toEqual([{ from: 'A', to: 'B', ts: T + HOUR, mw: 2 }]);
  });
});
