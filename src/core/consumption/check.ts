/**
 * The conservation check of extensions §15 ("Check"): in every hour, the emissions the solved
 * nodes consume, plus those they export to unsolved neighbours, equal the emissions of their
 * generation plus those that enter with imports from unsolved neighbours.
 *
 *     sum_i c[i] * (T[i] - X[i]) + sum_i c[i] * Xout[i] = sum_i E[i] + sum_i Eimp[i]
 *
 * Everything but c[i] is recomputed here from the hour's graph, not taken from the trace.
 */
import { type Basis, CATEGORIES, FACTORS } from '../factors.js';
import { estimateIntensity } from './estimates.js';
import { type HourGraph, type HourTrace, netLinks } from './trace-hour.js';

/** Both sides of the check, in gCO2eq/kWh x MWh (kg): what is consumed or leaves, and what is emitted or enters. */
export interface EmissionsBalance {
  readonly consumedOrExported: number;
  readonly emittedOrImported: number;
}

export function emissionsBalance(
  graph: HourGraph,
  trace: HourTrace,
  basis: Basis,
): EmissionsBalance {
  const factor = FACTORS[basis];
  let emittedOrImported = 0;
  const throughflow = new Map<string, number>();
  const exported = new Map<string, number>();
  const exportedToUnsolved = new Map<string, number>();
  for (const node of graph.nodes) {
    if (!trace.solved.has(node.id)) continue;
    let generated = 0;
    for (const category of CATEGORIES) {
      const mwh = node.generation[category] ?? 0;
      emittedOrImported += mwh * factor[category].value;
      generated += mwh;
    }
    throughflow.set(node.id, generated);
  }
  const add = (totals: Map<string, number>, id: string, mwh: number) =>
    totals.set(id, (totals.get(id) ?? 0) + mwh);
  for (const { from, to, mwh } of netLinks(graph.flows)) {
    const fromSolved = trace.solved.has(from);
    if (trace.solved.has(to)) {
      add(throughflow, to, mwh);
      if (!fromSolved) {
        const estimate = graph.estimates.get(from) ?? { kind: 'other' };
        emittedOrImported += mwh * estimateIntensity(estimate)[basis];
      }
    }
    if (fromSolved) {
      add(exported, from, mwh);
      if (!trace.solved.has(to)) add(exportedToUnsolved, from, mwh);
    }
  }
  let consumedOrExported = 0;
  for (const [id, node] of trace.solved) {
    const consumed = throughflow.get(id)! - (exported.get(id) ?? 0);
    consumedOrExported += node.intensity[basis] * (consumed + (exportedToUnsolved.get(id) ?? 0));
  }
  return { consumedOrExported, emittedOrImported };
}
