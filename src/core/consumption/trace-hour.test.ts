import { describe, expect, it } from 'vitest';
import { round1 } from '../units.js';
import type { ImportEstimate } from './estimates.js';
import { ANNUAL_INTENSITY_OF } from './fallback.js';
import {
  type HourGraph,
  type HourNode,
  type NetFlow,
  traceHour,
  type TracedNode,
} from './trace-hour.js';

const TS = Date.UTC(2026, 5, 1, 12) / 1000;

const node = (id: string, generation: Record<string, number>, complete = true): HourNode => ({
  id,
  generation,
  complete,
});
const flow = (from: string, to: string, mwh: number, estimated = false): NetFlow => ({
  from,
  to,
  mwh,
  estimated,
});

function trace(
  nodes: HourNode[],
  flows: NetFlow[],
  estimates: Record<string, ImportEstimate> = {},
): ReadonlyMap<string, TracedNode> {
  const graph: HourGraph = { ts: TS, nodes, flows, estimates: new Map(Object.entries(estimates)) };
  return traceHour(graph).solved;
}

function solved(traced: ReadonlyMap<string, TracedNode>, id: string): TracedNode {
  const result = traced.get(id);
  expect(result, `${id} is solved`).toBeDefined();
  return result!;
}

/** Every number to 12 significant digits, to compare with fractions computed by hand. */
function approx(values: Readonly<Record<string, number>>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(values).map(([key, value]) => [key, Number(value.toPrecision(12))]),
  );
}

describe('traceHour: hand-computed graphs', () => {
  it('a node without imports consumes its own mix, at its production value', () => {
    const a = solved(trace([node('A', { coal: 30, 'wind-onshore': 10 })], []), 'A');
    expect(approx(a.mix)).toEqual(approx({ coal: 0.75, 'wind-onshore': 0.25 }));
    // (0.75 x 820 + 0.25 x 11) and (0.75 x 760): the production values of the same mix.
    expect(approx(a.intensity)).toEqual(approx({ lifecycle: 617.75, direct: 570 }));
    expect(a.consumption).toEqual({ coal: 30, 'wind-onshore': 10 });
    expect(a.consumptionMwh).toBe(40);
    expect(a.estimatedFactor).toBeNull();
    expect(a.estimatedPct).toBe(0);
  });

  it('two nodes: the importer consumes its own generation and the exporter mix', () => {
    const traced = trace(
      [node('A', { coal: 100 }), node('B', { 'wind-onshore': 100 })],
      [flow('A', 'B', 50)],
    );
    const a = solved(traced, 'A');
    const b = solved(traced, 'B');
    expect(a.mix).toEqual({ coal: 1 });
    expect(a.throughflowMwh).toBe(100);
    expect(a.exportsMwh).toBe(50);
    expect(a.consumptionMwh).toBe(50);
    expect(a.exports).toEqual({ B: 50 });
    expect(a.imports).toEqual({});
    // B: 100 wind + 50 coal flow through it.
    expect(approx(b.mix)).toEqual(approx({ coal: 1 / 3, 'wind-onshore': 2 / 3 }));
    expect(approx(b.intensity)).toEqual(approx({ lifecycle: 842 / 3, direct: 760 / 3 }));
    expect(approx(b.consumption)).toEqual(approx({ coal: 50, 'wind-onshore': 100 }));
    expect(b.imports).toEqual({ A: 50 });
    expect(b.throughflowMwh).toBe(150);
    expect(round1(b.renewablePct)).toBe(66.7);
    expect(round1(b.lowCarbonPct)).toBe(66.7);
  });

  it('the three-zone example of docs/method.md', () => {
    // A -> B -> C, and C imports from X, a neighbour with no mix (the `other` factor).
    const traced = trace(
      [
        node('A', { gas: 100, 'wind-onshore': 100 }),
        node('B', { coal: 50, hydro: 50 }),
        node('C', { solar: 50 }),
      ],
      [flow('A', 'B', 100), flow('B', 'C', 100), flow('X', 'C', 50)],
    );
    const [a, b, c] = ['A', 'B', 'C'].map((id) => solved(traced, id));
    expect(approx(a!.mix)).toEqual(approx({ gas: 0.5, 'wind-onshore': 0.5 }));
    expect(approx(b!.mix)).toEqual(
      approx({ coal: 0.25, gas: 0.25, hydro: 0.25, 'wind-onshore': 0.25 }),
    );
    expect(approx(c!.mix)).toEqual(
      approx({
        coal: 0.125,
        gas: 0.125,
        hydro: 0.125,
        solar: 0.25,
        'wind-onshore': 0.125,
        'imported-estimated': 0.25,
      }),
    );
    expect([a, b, c].map((zone) => round1(zone!.intensity.lifecycle))).toEqual([
      250.5, 336.3, 355.1,
    ]);
    expect([a, b, c].map((zone) => round1(zone!.intensity.direct))).toEqual([185, 282.5, 285]);
    expect(approx(c!.intensity)).toEqual(approx({ lifecycle: 355.125, direct: 285 }));
    expect(approx(c!.consumption)).toEqual(
      approx({
        coal: 25,
        gas: 25,
        hydro: 25,
        solar: 50,
        'wind-onshore': 25,
        'imported-estimated': 50,
      }),
    );
    expect([a, b, c].map((zone) => zone!.consumptionMwh)).toEqual([100, 100, 200]);
    expect(c!.estimatedFactor).toEqual({ lifecycle: 700, direct: 575 });
    expect(approx({ pct: c!.estimatedPct })).toEqual(approx({ pct: 25 }));
    expect(round1(c!.renewablePct)).toBe(50);
    expect(round1(c!.lowCarbonPct)).toBe(50);
    expect(c!.imports).toEqual({ B: 100, X: 50 });
    expect(c!.exportsToUnsolvedMwh).toBe(0);
    // Emissions: generation 50100 + 42200 + 2400, imported 50 x 700; consumed 250.5 x 100 +
    // 336.25 x 100 + 355.125 x 200. Both are 129700.
    const consumed = [a, b, c].reduce((sum, zone) => {
      return sum + zone!.intensity.lifecycle * zone!.consumptionMwh;
    }, 0);
    expect(consumed).toBeCloseTo(129700, 6);
  });

  it('a loop A -> B -> C -> A: every node traces a share of the others', () => {
    // m_A = (2/3) g_A/G + (1/3) m_C and so on round the loop: m_A = (9 e_A + e_B + 3 e_C) / 13.
    const traced = trace(
      [node('A', { coal: 100 }), node('B', { 'wind-onshore': 100 }), node('C', { gas: 100 })],
      [flow('A', 'B', 50), flow('B', 'C', 50), flow('C', 'A', 50)],
    );
    expect(approx(solved(traced, 'A').mix)).toEqual(
      approx({ coal: 9 / 13, gas: 3 / 13, 'wind-onshore': 1 / 13 }),
    );
    expect(approx(solved(traced, 'B').mix)).toEqual(
      approx({ coal: 3 / 13, gas: 1 / 13, 'wind-onshore': 9 / 13 }),
    );
    expect(approx(solved(traced, 'C').mix)).toEqual(
      approx({ coal: 1 / 13, gas: 9 / 13, 'wind-onshore': 3 / 13 }),
    );
    expect(solved(traced, 'A').consumptionMwh).toBe(100);
    expect(approx(solved(traced, 'A').intensity)).toEqual(
      approx({ lifecycle: (9 * 820 + 11 + 3 * 490) / 13, direct: (9 * 760 + 3 * 370) / 13 }),
    );
  });
});

describe('traceHour: imports from unsolved neighbours', () => {
  const importer = (estimates: Record<string, ImportEstimate>) =>
    solved(trace([node('A', { hydro: 100 })], [flow('N', 'A', 100)], estimates), 'A');

  it('enter with the neighbour shares, as one category at their intensity', () => {
    const a = importer({ N: { kind: 'shares', ts: TS, shares: { gas: 50, 'wind-onshore': 50 } } });
    expect(approx(a.mix)).toEqual(approx({ hydro: 0.5, 'imported-estimated': 0.5 }));
    // The shares' values: (50 x 490 + 50 x 11) / 100 = 250.5 and 50 x 370 / 100 = 185.
    expect(approx(a.estimatedFactor!)).toEqual(approx({ lifecycle: 250.5, direct: 185 }));
    expect(approx(a.intensity)).toEqual(
      approx({ lifecycle: 0.5 * 24 + 0.5 * 250.5, direct: 0.5 * 185 }),
    );
    expect(approx({ pct: a.estimatedPct })).toEqual({ pct: 50 });
    expect(a.renewablePct).toBe(50);
  });

  it('enter at the annual intensity of the table, else at the other factor', () => {
    const morocco = ANNUAL_INTENSITY_OF.get('MA')!;
    const annual = importer({ N: { kind: 'annual', row: morocco } });
    expect(approx(annual.estimatedFactor!)).toEqual(
      approx({ lifecycle: morocco.lifecycle, direct: morocco.direct }),
    );
    for (const estimates of [{ N: { kind: 'other' } }, {}] as Record<string, ImportEstimate>[]) {
      expect(importer(estimates).estimatedFactor).toEqual({ lifecycle: 700, direct: 575 });
    }
  });

  it('carry their traced emissions downstream: the effective factor is their weighted mean', () => {
    // A imports 100 from X (other) and 300 from Y (shares of pure coal), passes 200 on to B.
    const traced = trace(
      [node('A', { hydro: 400 }), node('B', { 'wind-onshore': 100 })],
      [flow('X', 'A', 100), flow('Y', 'A', 300), flow('A', 'B', 200)],
      { Y: { kind: 'shares', ts: TS - 3600, shares: { coal: 1 } } },
    );
    const expected = approx({ lifecycle: (700 + 3 * 820) / 4, direct: (575 + 3 * 760) / 4 });
    const a = solved(traced, 'A');
    const b = solved(traced, 'B');
    expect(approx(a.estimatedFactor!)).toEqual(expected);
    expect(approx(b.estimatedFactor!)).toEqual(expected);
    // B: 100 wind, and 200 of A's mix (half hydro, half estimated imports).
    expect(approx(b.mix)).toEqual(
      approx({ hydro: 1 / 3, 'wind-onshore': 1 / 3, 'imported-estimated': 1 / 3 }),
    );
  });

  it('treats a node whose mix is incomplete, or who generated nothing, as unsolved', () => {
    const traced = trace(
      [node('A', { hydro: 100 }), node('P', { coal: 10 }, false), node('Z', { coal: 0 })],
      [flow('P', 'A', 100), flow('A', 'Z', 30)],
      { P: { kind: 'shares', ts: TS - 7200, shares: { coal: 10 } } },
    );
    expect([...traced.keys()]).toEqual(['A']);
    const a = solved(traced, 'A');
    expect(a.estimatedFactor).toEqual({ lifecycle: 820, direct: 760 });
    expect(a.exportsToUnsolvedMwh).toBe(30);
    expect(a.consumptionMwh).toBe(170);
  });
});

describe('traceHour: borders', () => {
  it('nets the flows given for one pair, whichever way each is written', () => {
    const traced = trace(
      [node('A', { coal: 100 }), node('B', { gas: 100 })],
      [flow('A', 'B', 70), flow('B', 'A', 20), flow('B', 'A', -10, true)],
    );
    expect(solved(traced, 'A').exports).toEqual({ B: 60 });
    expect(solved(traced, 'B').imports).toEqual({ A: 60 });
    expect(solved(traced, 'A').estimatedBorders).toEqual(['B']);
  });

  it('lists an estimated border with no flow in estimatedBorders only', () => {
    const traced = trace(
      [node('A', { coal: 100 }), node('B', { gas: 100 })],
      [flow('A', 'B', 0, true), flow('C', 'A', 10, true), flow('A', 'D', 5)],
    );
    const a = solved(traced, 'A');
    expect(a.estimatedBorders).toEqual(['B', 'C']);
    expect(a.imports).toEqual({ C: 10 });
    expect(a.exports).toEqual({ D: 5 });
    expect(solved(traced, 'B').estimatedBorders).toEqual(['A']);
    expect(solved(traced, 'B').imports).toEqual({});
  });

  it('keeps exports beyond what flows through a node, as inconsistent data gives them', () => {
    const traced = trace(
      [node('A', { coal: 100 }), node('B', { gas: 100 })],
      [flow('A', 'B', 300)],
    );
    const a = solved(traced, 'A');
    expect(a.consumptionMwh).toBe(-200);
    expect(a.intensity.lifecycle).toBe(820);
    expect(approx(solved(traced, 'B').mix)).toEqual(approx({ coal: 0.75, gas: 0.25 }));
  });
});

describe('traceHour: refuses what it cannot trace', () => {
  const graphWith = (nodes: HourNode[], flows: NetFlow[]): HourGraph => ({
    ts: TS,
    nodes,
    flows,
    estimates: new Map(),
  });

  it.each([
    ['a node listed twice', [node('A', { coal: 1 }), node('A', { gas: 1 })], [], /twice/],
    ['an unknown category', [node('A', { wind: 1 })], [], /unknown fuel category: wind/],
    ['a flow to itself', [node('A', { coal: 1 })], [flow('A', 'A', 1)], /to itself/],
    ['a flow that is not finite', [node('A', { coal: 1 })], [flow('A', 'B', NaN)], /not finite/],
  ])('%s', (_, nodes, flows, message) => {
    expect(() => traceHour(graphWith(nodes, flows))).toThrow(message);
  });

  it('a loop that passes on everything it imports and generates next to nothing', () => {
    const tiny = (id: string) => node(id, { gas: 1e-300 });
    const loop = [flow('A', 'B', 50), flow('B', 'C', 50), flow('C', 'A', 50)];
    expect(() => traceHour(graphWith([tiny('A'), tiny('B'), tiny('C')], loop))).toThrow(/singular/);
  });

  it('an hour with no solved node traces nothing', () => {
    expect(traceHour(graphWith([node('A', { coal: 1 }, false)], [])).solved.size).toBe(0);
  });
});
