import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../test/support/seeded-random.js';
import { BASES, CATEGORIES } from '../factors.js';
import { emissionsBalance } from './check.js';
import type { ImportEstimate } from './estimates.js';
import { ANNUAL_INTENSITIES } from './fallback.js';
import {
  type HourGraph,
  type HourNode,
  IMPORTED_ESTIMATED,
  type NetFlow,
  TRACED_CATEGORIES,
  traceHour,
  TraceWorkspace,
} from './trace-hour.js';

/**
 * Randomized graphs from a fixed seed: nodes with random mixes (some incomplete, some with no
 * generation), neighbours without a mix entering by every kind of estimate, random net flows
 * (loops, several entries for one pair, estimated or not). Every hour must conserve emissions on
 * both bases, and every solved node must satisfy its equation for every category.
 */

const GRAPHS = 600;

function randomGraph(next: () => number, ts: number): HourGraph {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const nodes: HourNode[] = [];
  const nodeCount = 1 + Math.floor(next() * 14);
  for (let n = 0; n < nodeCount; n++) {
    const generation: Record<string, number> = {};
    for (const category of CATEGORIES) {
      if (next() < 0.35) generation[category] = next() < 0.1 ? 0 : 1 + next() * 2000;
    }
    nodes.push({ id: `N${n}`, generation, complete: next() < 0.85 });
  }
  const neighbours = Array.from({ length: Math.floor(next() * 4) }, (_, k) => `X${k}`);
  const estimates = new Map<string, ImportEstimate>();
  for (const id of neighbours) {
    const kind = next();
    if (kind < 0.3) {
      const shares: Record<string, number> = {};
      for (const category of CATEGORIES) if (next() < 0.4) shares[category] = next() * 100;
      shares[pick(CATEGORIES)] = 1 + next() * 50;
      estimates.set(id, { kind: 'shares', ts, shares });
    } else if (kind < 0.6) {
      estimates.set(id, { kind: 'annual', row: pick(ANNUAL_INTENSITIES) });
    } else if (kind < 0.8) {
      estimates.set(id, { kind: 'other' });
    } // else: not listed, enters at `other` too
  }
  // Incomplete nodes export by an estimate like the neighbours without a mix.
  for (const { id, complete } of nodes) {
    if (!complete && next() < 0.5)
      estimates.set(id, { kind: 'annual', row: pick(ANNUAL_INTENSITIES) });
  }
  const ids = [...nodes.map(({ id }) => id), ...neighbours];
  const flows: NetFlow[] = [];
  for (let a = 0; a < ids.length; a++) {
    for (let b = a + 1; b < ids.length; b++) {
      const entries = next() < 0.45 ? (next() < 0.15 ? 2 : 1) : 0;
      for (let e = 0; e < entries; e++) {
        const [from, to] = next() < 0.5 ? [ids[a]!, ids[b]!] : [ids[b]!, ids[a]!];
        flows.push({ from, to, mwh: (next() - 0.5) * 3000, estimated: next() < 0.2 });
      }
    }
  }
  return { ts, nodes, flows, estimates };
}

describe('flow tracing on randomized graphs', () => {
  const next = seededRandom(20261202);
  const graphs = Array.from({ length: GRAPHS }, (_, hour) => randomGraph(next, 3600 * hour));
  const traces = graphs.map((graph) => traceHour(graph));

  it('solves a fair share of nodes, with imports of every kind', () => {
    const solvedNodes = traces.reduce((sum, trace) => sum + trace.solved.size, 0);
    const estimated = traces.filter((trace) =>
      [...trace.solved.values()].some((node) => node.estimatedFactor !== null),
    );
    expect(solvedNodes).toBeGreaterThan(GRAPHS * 3);
    expect(estimated.length).toBeGreaterThan(GRAPHS / 4);
  });

  it('conserves emissions in every hour on both bases, to 1e-9 relative', () => {
    let worst = { gap: 0, at: 'nowhere' };
    for (const [hour, graph] of graphs.entries()) {
      for (const basis of BASES) {
        const balance = emissionsBalance(graph, traces[hour]!, basis);
        const gap =
          Math.abs(balance.consumedOrExported - balance.emittedOrImported) /
          Math.max(1, Math.abs(balance.emittedOrImported));
        if (gap > worst.gap) worst = { gap, at: `hour ${hour}, ${basis}` };
      }
    }
    expect(worst.gap, worst.at).toBeLessThan(1e-9);
  });

  it('satisfies m[i,f] T[i] = g[i,f] + sum_j F[j->i] s[j,f] for every node and category', () => {
    // The worst residual, relative to T[i], and where it is: one assertion, not 100,000.
    let worst = { residual: 0, at: 'nowhere' };
    let lowestShare = 0;
    let furthestSum = 0;
    for (const [hour, graph] of graphs.entries()) {
      const { solved } = traces[hour]!;
      for (const [id, traced] of solved) {
        const own = graph.nodes.find((node) => node.id === id)!;
        const sum = Object.values(traced.mix).reduce((a, b) => a + b, 0);
        furthestSum = Math.max(furthestSum, Math.abs(sum - 1));
        for (const category of TRACED_CATEGORIES) {
          const estimated = category === IMPORTED_ESTIMATED;
          let inflow = estimated ? 0 : (own.generation[category] ?? 0);
          for (const [from, mwh] of Object.entries(traced.imports)) {
            const source = solved.get(from);
            if (source !== undefined) inflow += mwh * (source.mix[category] ?? 0);
            else if (estimated) inflow += mwh;
          }
          const share = traced.mix[category] ?? 0;
          const residual = Math.abs(share * traced.throughflowMwh - inflow) / traced.throughflowMwh;
          if (residual > worst.residual)
            worst = { residual, at: `hour ${hour}, ${id}, ${category}` };
          lowestShare = Math.min(lowestShare, share);
        }
      }
    }
    expect(worst.residual, worst.at).toBeLessThan(1e-9);
    expect(furthestSum).toBeLessThan(1e-12);
    expect(lowestShare).toBeGreaterThan(-1e-12);
  });

  it('traces every hour alike in one workspace reused across graphs of every size', () => {
    // Graphs of 1 to 14 nodes in random order: the workspace grows and is reused, never cleared.
    const workspace = new TraceWorkspace();
    const reused = graphs.map((graph) => traceHour(graph, workspace));
    expect(reused).toEqual(traces);
  });
});
