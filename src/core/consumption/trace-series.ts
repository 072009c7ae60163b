/**
 * Flow tracing over a window of hours: each hour's graph from the stored mixes and flows, with
 * the rules for missing flows (flows.ts) and unsolved neighbours (estimates.ts), solved hour by
 * hour (trace-hour.ts). Hours are UTC hour starts, so a local day of 23 or 25 hours is simply
 * 23 or 25 of them.
 */
import type { Mix } from '../reading.js';
import { HOUR, type TimeWindow } from '../time.js';
import { importEstimate, type ImportEstimate } from './estimates.js';
import { ANNUAL_INTENSITY_OF, type AnnualIntensity } from './fallback.js';
import { type Border, flowAt } from './flows.js';
import {
  type HourGraph,
  type HourNode,
  type HourTrace,
  isSolvable,
  type NetFlow,
  traceHour,
} from './trace-hour.js';

/** One stored hour of a node: its mix (MWh per category) and whether it is complete. */
export interface NodeHour {
  readonly mix: Mix;
  readonly complete: boolean;
}

export interface GraphSeries {
  /** Nodes that publish generation in MWh: id -> hour start -> stored mix. */
  readonly nodes: ReadonlyMap<string, ReadonlyMap<number, NodeHour>>;
  /**
   * Neighbours that publish shares only, never solved (GB, from NESO): id -> hour start ->
   * complete shares of that hour.
   */
  readonly sharesOnly: ReadonlyMap<string, ReadonlyMap<number, Mix>>;
  readonly borders: readonly Border[];
  /** Annual intensities by node code; the table of fallback.ts when absent. */
  readonly annual?: ReadonlyMap<string, AnnualIntensity>;
}

/** Traces every hour that starts in `[fromTs, toTs)`, in order. */
export function traceWindow(series: GraphSeries, window: TimeWindow): HourTrace[] {
  const traces: HourTrace[] = [];
  for (let hour = Math.ceil(window.fromTs / HOUR) * HOUR; hour < window.toTs; hour += HOUR) {
    traces.push(traceHour(hourGraph(series, hour)));
  }
  return traces;
}

function hourGraph(series: GraphSeries, hour: number): HourGraph {
  const nodes: HourNode[] = [];
  for (const [id, hours] of series.nodes) {
    const stored = hours.get(hour);
    if (stored !== undefined) nodes.push({ id, generation: stored.mix, complete: stored.complete });
  }
  const flows: NetFlow[] = [];
  for (const border of series.borders) {
    const flow = flowAt(border, hour);
    if (flow !== undefined) flows.push(flow);
  }
  const solved = new Set(nodes.filter(isSolvable).map(({ id }) => id));
  const annual = series.annual ?? ANNUAL_INTENSITY_OF;
  const completeSharesAt = (id: string) => (ts: number) => {
    const stored = series.nodes.get(id)?.get(ts);
    if (stored !== undefined) return stored.complete ? stored.mix : undefined;
    return series.sharesOnly.get(id)?.get(ts);
  };
  const estimates = new Map<string, ImportEstimate>();
  for (const { from, to } of flows) {
    for (const id of [from, to]) {
      if (solved.has(id) || estimates.has(id)) continue;
      estimates.set(id, importEstimate(hour, completeSharesAt(id), annual.get(id)));
    }
  }
  return { ts: hour, nodes, flows, estimates };
}
