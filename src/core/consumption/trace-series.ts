/**
 * Flow tracing over a window of hours: each hour's graph from the stored mixes and flows, with
 * the rules for missing flows (flows.ts) and unsolved neighbours (estimates.ts), solved hour by
 * hour (trace-hour.ts). Hours are UTC hour starts, so a local day of 23 or 25 hours is simply
 * 23 or 25 of them.
 */
import { intensityOfMix } from '../method.js';
import type { Mix } from '../reading.js';
import { HOUR, type TimeWindow } from '../time.js';
import { importEstimate, type ImportEstimate, SHARES_LOOKBACK_HOURS } from './estimates.js';
import { ANNUAL_INTENSITY_OF, type AnnualIntensity } from './fallback.js';
import { type Border, CARRY_HOURS, flowAt } from './flows.js';
import {
  type HourGraph,
  type HourNode,
  type HourTrace,
  isSolvable,
  type NetFlow,
  traceHour,
  TraceWorkspace,
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
  const hours: number[] = [];
  for (let hour = Math.ceil(window.fromTs / HOUR) * HOUR; hour < window.toTs; hour += HOUR) {
    hours.push(hour);
  }
  return traceHours(series, hours);
}

/** Traces each of `hours` (hour starts), in their order, in one workspace. */
export function traceHours(series: GraphSeries, hours: readonly number[]): HourTrace[] {
  const workspace = new TraceWorkspace();
  return hours.map((hour) => traceHour(hourGraph(series, hour), workspace));
}

function hourGraph(series: GraphSeries, hour: number): HourGraph {
  const nodes: HourNode[] = [];
  const solved = new Set<string>();
  // forEach rather than for-of: no [id, hours] entry per node and hour.
  series.nodes.forEach((hours, id) => {
    const stored = hours.get(hour);
    if (stored === undefined) return;
    const node = { id, generation: stored.mix, complete: stored.complete };
    nodes.push(node);
    if (isSolvable(node)) solved.add(id);
  });
  const flows: NetFlow[] = [];
  for (const border of series.borders) {
    const flow = flowAt(border, hour);
    if (flow !== undefined) flows.push(flow);
  }
  const annual = series.annual ?? ANNUAL_INTENSITY_OF;
  const estimates = new Map<string, ImportEstimate>();
  for (const { from, to } of flows) {
    for (const id of [from, to]) {
      if (solved.has(id) || estimates.has(id)) continue;
      const sharesAt = (ts: number) => completeSharesOf(series, id, ts);
      estimates.set(id, importEstimate(hour, sharesAt, annual.get(id)));
    }
  }
  return { ts: hour, nodes, flows, estimates };
}

/** A node's or a shares-only neighbour's complete mix of hour `ts`, if it has one. */
function completeSharesOf(series: GraphSeries, id: string, ts: number): Mix | undefined {
  const stored = series.nodes.get(id)?.get(ts);
  if (stored !== undefined) return stored.complete ? stored.mix : undefined;
  return series.sharesOnly.get(id)?.get(ts);
}

/** Inputs of a series that were added or revised: what the hours to trace again follow from. */
export interface ChangedInputs {
  /** Hours with a flow added or revised, on any border. */
  readonly flowHours: Iterable<number>;
  /** Node or neighbour id -> hours whose mix was added or revised. */
  readonly mixHours: ReadonlyMap<string, Iterable<number>>;
}

/**
 * The hours whose trace the changed inputs can change, ascending: each changed hour itself (a
 * flow or a mix of any node re-solves its hour for every node, extensions §15, "Recompute"),
 * and the later hours that take something from it:
 * - a border's net flow known in hour h is carried into h+1 .. h+6 while the border's flow stays
 *   unknown (flows.ts);
 * - a node's mix of hour h is the estimate of its exports in h+1 .. h+24 while it has no newer
 *   complete mix (estimates.ts), whether the change made its mix of h complete or not.
 * A later hour in which no node is solved has no trace to change and is left out. `series` holds
 * the inputs as they are now, over the changed hours and the 24 after.
 */
export function hoursReached(series: GraphSeries, changed: ChangedInputs): number[] {
  const solvedHours = new Set<number>();
  for (const [id, hours] of series.nodes) {
    for (const [ts, { mix, complete }] of hours) {
      if (isSolvable({ id, generation: mix, complete })) solvedHours.add(ts);
    }
  }
  const reached = new Set<number>();
  const reach = (later: number) => {
    if (solvedHours.has(later)) reached.add(later);
  };
  for (const hour of changed.flowHours) {
    reached.add(hour);
    // The borders whose flow of `hour` is the newest known one, hour after hour.
    let carried = series.borders.filter((border) => border.net.has(hour));
    for (let back = 1; back <= CARRY_HOURS; back++) {
      const later = hour + back * HOUR;
      carried = carried.filter((border) => !border.net.has(later));
      if (carried.length === 0) break;
      reach(later);
    }
  }
  for (const [id, hours] of changed.mixHours) {
    for (const hour of hours) {
      reached.add(hour);
      for (let back = 1; back <= SHARES_LOOKBACK_HOURS; back++) {
        const later = hour + back * HOUR;
        const shares = completeSharesOf(series, id, later);
        if (shares !== undefined && intensityOfMix(shares) !== null) break;
        reach(later);
      }
    }
  }
  return [...reached].sort((a, b) => a - b);
}
