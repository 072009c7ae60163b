import { describe, expect, it } from 'vitest';
import type { Mix } from '../reading.js';
import { HOUR } from '../time.js';
import { ANNUAL_INTENSITY_OF } from './fallback.js';
import type { Border } from './flows.js';
import { type GraphSeries, hoursReached, type NodeHour, traceWindow } from './trace-series.js';

const H = Date.UTC(2026, 5, 1, 0) / 1000;
const hour = (k: number) => H + k * HOUR;

/** A node's stored hours k = from .. to - 1, with the same mix, complete unless listed. */
function stored(mix: Mix, from: number, to: number, incomplete: number[] = []) {
  const hours = new Map<number, NodeHour>();
  for (let k = from; k < to; k++) hours.set(hour(k), { mix, complete: !incomplete.includes(k) });
  return hours;
}

const netAt = (byHour: Record<number, number>) =>
  new Map(Object.entries(byHour).map(([k, mwh]) => [hour(Number(k)), mwh]));

function series(
  borders: Border[],
  nodes: GraphSeries['nodes'],
  sharesOnly = new Map(),
): GraphSeries {
  return { nodes, sharesOnly, borders };
}

describe('traceWindow: hours', () => {
  const graph = series([], new Map([['A', stored({ coal: 1 }, -48, 48)]]));

  it('traces every UTC hour that starts in the window, in order', () => {
    const traces = traceWindow(graph, { fromTs: hour(0) - 1, toTs: hour(3) });
    expect(traces.map((trace) => trace.ts)).toEqual([hour(0), hour(1), hour(2)]);
  });

  it('gives a local day of 23 or 25 hours as 23 or 25 hours (Europe/Berlin, 2026)', () => {
    const spring = traceWindow(graph, {
      fromTs: Date.parse('2026-03-29T00:00:00+01:00') / 1000,
      toTs: Date.parse('2026-03-30T00:00:00+02:00') / 1000,
    });
    const autumn = traceWindow(graph, {
      fromTs: Date.parse('2026-10-25T00:00:00+02:00') / 1000,
      toTs: Date.parse('2026-10-26T00:00:00+01:00') / 1000,
    });
    expect(spring).toHaveLength(23);
    expect(autumn).toHaveLength(25);
    expect(autumn[1]!.ts - autumn[0]!.ts).toBe(HOUR);
  });
});

describe('traceWindow: missing flows', () => {
  // A exports to B: known at hours 0 and 1 (100 and 80), unknown from 2 on, known again at 12.
  const border: Border = {
    from: 'A',
    to: 'B',
    net: netAt({ 0: 100, 1: 80, 12: 30 }),
    since: hour(0),
  };
  const nodes = new Map([
    ['A', stored({ coal: 200 }, -2, 14)],
    ['B', stored({ 'wind-onshore': 100 }, -2, 14)],
  ]);
  const traces = traceWindow(series([border], nodes), { fromTs: hour(-2), toTs: hour(14) });
  const at = (k: number, id: string) => traces[k + 2]!.solved.get(id)!;

  it('uses a known flow as published', () => {
    expect(at(1, 'B').imports).toEqual({ A: 80 });
    expect(at(1, 'B').estimatedBorders).toEqual([]);
    expect(at(12, 'A').exports).toEqual({ B: 30 });
  });

  it('carries the newest known flow up to 6 hours, listing the border as estimated', () => {
    for (const k of [2, 4, 7]) {
      expect(at(k, 'B').imports, `hour ${k}`).toEqual({ A: 80 });
      expect(at(k, 'A').estimatedBorders).toEqual(['B']);
      expect(at(k, 'B').estimatedBorders).toEqual(['A']);
    }
  });

  it('takes 0 beyond 6 hours, still listing the border as estimated', () => {
    expect(at(8, 'B').imports).toEqual({});
    expect(at(8, 'B').mix).toEqual({ 'wind-onshore': 1 });
    expect(at(11, 'A').estimatedBorders).toEqual(['B']);
  });

  it('has no border before its first published hour', () => {
    expect(at(-1, 'B').estimatedBorders).toEqual([]);
    expect(at(-1, 'B').imports).toEqual({});
  });
});

describe('traceWindow: unsolved neighbours', () => {
  // A imports 100 from each of its neighbours every hour.
  const into = (from: string): Border => ({
    from,
    to: 'A',
    net: netAt(Object.fromEntries(Array.from({ length: 40 }, (_, k) => [k - 30, 100]))),
    since: hour(-30),
  });
  const factorAt = (graph: GraphSeries, k: number) =>
    traceWindow(graph, { fromTs: hour(k), toTs: hour(k + 1) })[0]!.solved.get('A')!.estimatedFactor;
  const a = stored({ hydro: 100 }, -30, 10);

  it('a node with an incomplete hour enters with its newest complete mix of the 24 hours before', () => {
    const graph = series(
      [into('P')],
      new Map([
        ['A', a],
        ['P', stored({ coal: 10 }, -30, 10, [0, 1])],
      ]),
    );
    expect(factorAt(graph, 1)).toEqual({ lifecycle: 820, direct: 760 });
    expect(factorAt(graph, 2)).toBeNull();
  });

  it('a node with no complete hour in the 24 before enters at the other factor', () => {
    const p = stored(
      { coal: 10 },
      -30,
      10,
      Array.from({ length: 30 }, (_, k) => k - 24),
    );
    const graph = series(
      [into('P')],
      new Map([
        ['A', a],
        ['P', p],
      ]),
    );
    expect(factorAt(graph, 0)).toEqual({ lifecycle: 700, direct: 575 });
  });

  it('a shares-only neighbour enters with its shares, even those of hours before', () => {
    const gb = new Map([[hour(-20), { gas: 50, 'wind-onshore': 50 }]]);
    const graph = series([into('GB')], new Map([['A', a]]), new Map([['GB', gb]]));
    expect(factorAt(graph, -20)).toEqual({ lifecycle: 250.5, direct: 185 });
    expect(factorAt(graph, 4)).toEqual({ lifecycle: 250.5, direct: 185 });
    expect(factorAt(graph, 5)).toEqual({ lifecycle: 700, direct: 575 });
  });

  it('a neighbour that never publishes a mix enters at its annual intensity', () => {
    const graph = series([into('MA'), into('ZZ')], new Map([['A', a]]));
    const morocco = ANNUAL_INTENSITY_OF.get('MA')!;
    const factor = factorAt(graph, 0)!;
    // Half of the imports at Morocco's intensity, half (ZZ, in no table) at the other factor.
    expect(factor.lifecycle).toBeCloseTo((morocco.lifecycle + 700) / 2, 9);
    expect(factor.direct).toBeCloseTo((morocco.direct + 575) / 2, 9);
    const custom = { ...morocco, lifecycle: 100, direct: 50 };
    const withTable = {
      ...series([into('MA')], new Map([['A', a]])),
      annual: new Map([['MA', custom]]),
    };
    expect(factorAt(withTable, 0)).toEqual({ lifecycle: 100, direct: 50 });
  });
});

describe('hoursReached: the hours a changed input can change', () => {
  // A and B solved in hours 0 .. 29; B's mix incomplete in 3 .. 5 and missing in 30 .. 39.
  // Their border's flow is published in hours 0 .. 29 but for 2, 3 and 10 .. 19.
  const published = Object.fromEntries(
    Array.from({ length: 30 }, (_, k) => [k, 10]).filter(
      ([k]) => ![2, 3].includes(k!) && !(k! >= 10 && k! < 20),
    ),
  );
  const border: Border = { from: 'A', to: 'B', net: netAt(published), since: hour(0) };
  const graph = series(
    [border],
    new Map([
      ['A', stored({ coal: 1 }, 0, 40)],
      ['B', stored({ hydro: 1 }, 0, 30, [3, 4, 5])],
    ]),
  );
  const reached = (changed: { flowHours?: number[]; mixHours?: [string, number[]][] }) =>
    hoursReached(graph, {
      flowHours: (changed.flowHours ?? []).map(hour),
      mixHours: new Map((changed.mixHours ?? []).map(([id, ks]) => [id, ks.map(hour)])),
    }).map((ts) => (ts - H) / HOUR);

  it('a flow reaches its hour and the hours that carry it, up to 6', () => {
    expect(reached({ flowHours: [0] })).toEqual([0]);
    expect(reached({ flowHours: [1] })).toEqual([1, 2, 3]);
    expect(reached({ flowHours: [9] })).toEqual([9, 10, 11, 12, 13, 14, 15]);
    // An hour whose net flow is still unknown carries nothing of its own.
    expect(reached({ flowHours: [2] })).toEqual([2]);
  });

  it('a mix reaches its hour and the hours its node has no complete mix after it, up to 24', () => {
    expect(reached({ mixHours: [['B', [1]]] })).toEqual([1]);
    expect(reached({ mixHours: [['B', [2]]] })).toEqual([2, 3, 4, 5]);
    // B missing from 30 on: A alone is solved in 30 .. 39, and B's estimate is its hour 29.
    expect(reached({ mixHours: [['B', [29]]] })).toEqual([
      29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39,
    ]);
  });

  it('leaves out the later hours in which no node is solved', () => {
    expect(reached({ mixHours: [['A', [39]]] })).toEqual([39]);
    // Carried into 30 .. 35, where A alone is solved; 40 itself, whatever is in it.
    expect(reached({ flowHours: [29, 40] })).toEqual([29, 30, 31, 32, 33, 34, 35, 40]);
  });
});
