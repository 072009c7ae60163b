/**
 * A flow graph's inputs over a window, read from the store into the solver's series: the nodes'
 * stored mixes, the shares-only neighbours' hourly shares, and the borders' net flows.
 */
import type { Border } from '../core/consumption/flows.js';
import type { GraphSeries, NodeHour } from '../core/consumption/trace-series.js';
import type { FlowBorder } from '../core/flows.js';
import { isCategory } from '../core/factors.js';
import type { Mix, StoredReading } from '../core/reading.js';
import { HOUR, type TimeWindow, floorToHour } from '../core/time.js';
import { findZone } from '../core/zones.js';
import type { Store } from '../storage/store.js';
import type { FlowGraph } from './flow-graphs.js';

/** The graph's stored inputs with `fromTs <= ts < toTs`; `borders` are the graph's flowBorders. */
export async function loadSeries(
  store: Store,
  graph: FlowGraph,
  borders: readonly FlowBorder[],
  { fromTs, toTs }: TimeWindow,
): Promise<GraphSeries> {
  const [nodes, sharesOnly, flows] = await Promise.all([
    Promise.all(
      graph.nodes.map(
        async (id) => [id, nodeHours(await store.readStored(id, fromTs, toTs))] as const,
      ),
    ),
    Promise.all(
      graph.sharesOnly.map(
        async (id) => [id, hourlyShares(id, await store.readStored(id, fromTs, toTs))] as const,
      ),
    ),
    store.flowsInWindow(graph.id, fromTs, toTs),
  ]);
  // By sender, then receiver: a few hundred thousand flows, no key built per flow.
  const directions = new Map<string, Map<string, Map<number, number>>>();
  for (const { from, to, ts, mw } of flows) {
    let toSeries = directions.get(from);
    if (toSeries === undefined) directions.set(from, (toSeries = new Map()));
    let series = toSeries.get(to);
    if (series === undefined) toSeries.set(to, (series = new Map()));
    series.set(ts, mw);
  }
  return {
    nodes: new Map(nodes),
    sharesOnly: new Map(sharesOnly),
    borders: netBorders(graph, borders, directions),
  };
}

const directionKey = (from: string, to: string) => `${from}\u0000${to}`;

/** Each direction's flows: sender -> receiver -> hour start -> MW. */
type Directions = ReadonlyMap<string, ReadonlyMap<string, ReadonlyMap<number, number>>>;

/**
 * Each border once, as the pair of its two directions (`a` < `b`), in the graph from the first
 * stored hour of either direction (extensions §15, "Missing flows"): from `firstTs`, not from the
 * window's first flow, so an hour of the window before it still has the border, estimated.
 */
function netBorders(
  graph: FlowGraph,
  borders: readonly FlowBorder[],
  directions: Directions,
): Border[] {
  const since = new Map<string, { a: string; b: string; since: number }>();
  for (const { from, to, firstTs } of borders) {
    const [a, b] = from < to ? [from, to] : [to, from];
    const key = directionKey(a, b);
    const known = since.get(key);
    since.set(key, { a, b, since: Math.min(known?.since ?? Infinity, firstTs) });
  }
  const none = new Map<number, number>();
  return [...since.values()].map(({ a, b, since }) => {
    const aToB = directions.get(a)?.get(b) ?? none;
    const bToA = directions.get(b)?.get(a) ?? none;
    return { from: a, to: b, net: graph.border(a, b, aToB, bToA)?.net ?? none, since };
  });
}

/**
 * A node's stored hours: its mix, complete when it is published (method.md). A mix with a key
 * that is no category is corrupt (`gridco2 recompute` lists such rows): its hour is read as one
 * without a mix rather than failing the graph's every hour.
 */
function nodeHours(rows: readonly StoredReading[]): Map<number, NodeHour> {
  const hours = new Map<number, NodeHour>();
  for (const row of rows) {
    if (!readable(row.mix)) continue;
    hours.set(row.ts, { mix: row.mix, complete: row.lifecycle !== null });
  }
  return hours;
}

const readable = (mix: Mix | null): mix is Mix =>
  mix !== null && Object.keys(mix).every(isCategory);

/**
 * A shares-only neighbour's complete shares per hour: the mean of its sub-intervals' shares (GB:
 * two half hours), only when every sub-interval of the hour has a published mix, as an hourly
 * value is made of sub-hourly ones everywhere (method.md).
 */
function hourlyShares(id: string, rows: readonly StoredReading[]): Map<number, Mix> {
  const parts = (findZone(id)?.resolutionMin ?? 60) === 30 ? 2 : 1;
  const byHour = new Map<number, Mix[]>();
  for (const row of rows) {
    if (!readable(row.mix) || row.lifecycle === null) continue;
    const hour = floorToHour(row.ts);
    byHour.set(hour, [...(byHour.get(hour) ?? []), row.mix]);
  }
  const shares = new Map<number, Mix>();
  for (const [hour, mixes] of byHour) {
    if (mixes.length !== parts) continue;
    const mean: Record<string, number> = {};
    for (const mix of mixes) {
      for (const [category, share] of Object.entries(mix)) {
        mean[category] = (mean[category] ?? 0) + share / parts;
      }
    }
    shares.set(hour, mean);
  }
  return shares;
}

/** Whether a node has a stored mix in `hour` or in one of the `lookbackHours` before it. */
export function hasMixWithin(
  hours: readonly number[] | undefined,
  hour: number,
  lookbackHours: number,
): boolean {
  if (hours === undefined) return false;
  // `hours` ascending: the newest at or before `hour`, by bisection.
  let low = 0;
  let high = hours.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (hours[middle]! <= hour) low = middle + 1;
    else high = middle;
  }
  return low > 0 && hours[low - 1]! >= hour - lookbackHours * HOUR;
}
