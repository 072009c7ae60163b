/**
 * The consumption series of a flow graph (extensions §15), kept up to date in the store: the hours
 * whose inputs (a node's mix, a border's flow) changed since the graph's cursor are traced again
 * from the stored mixes and flows, and their rows replaced; then the cursor moves on. Run after
 * each ingestion of mixes or flows; `gridco2 recompute` traces every hour again.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as delay, setImmediate } from 'node:timers/promises';
import { aggregateConsumption } from '../core/consumption/aggregate.js';
import { SHARES_LOOKBACK_HOURS } from '../core/consumption/estimates.js';
import { CARRY_HOURS } from '../core/consumption/flows.js';
import { aggregateRow, type ConsumptionRow, nodeRow } from '../core/consumption/series-row.js';
import {
  type ChangedInputs,
  type GraphSeries,
  hoursReached,
  traceHours,
} from '../core/consumption/trace-series.js';
import type { HourTrace } from '../core/consumption/trace-hour.js';
import type { FlowGraphId } from '../core/flows.js';
import { floorToHour, HOUR } from '../core/time.js';
import type { Store, StoreKey } from '../storage/store.js';
import { FLOW_GRAPHS, type FlowGraph } from './flow-graphs.js';
import { hasMixWithin, loadSeries } from './load-series.js';

/**
 * Hours of changed inputs read and traced together, with their margins: two weeks, so that
 * re-solving everything reads each input little more than once.
 */
const CHUNK_HOURS = 14 * 24;

/** Hours traced and written together, between which the event loop runs. */
const WRITE_HOURS = 24;

/** Reading changes per query while collecting the changed hours. */
const CHANGES_PAGE_ROWS = 10_000;

export interface ConsumptionUpdate {
  readonly graph: FlowGraphId;
  /** The hours traced again, ascending. */
  readonly hours: readonly number[];
  /** Rows inserted, changed or removed. */
  readonly changed: number;
  /**
   * The data version the graph's inputs are now solved up to; null while the store holds no flow
   * of the graph: without flows there is no consumption series, and nothing is traced.
   */
  readonly cursor: number | null;
}

export interface ConsumptionUpdateOptions {
  /** Trace every hour with a stored mix or flow of the graph, whatever the cursor says. */
  readonly everything?: boolean;
}

/** The store lease an update of a graph holds from reading its cursor to its last write. */
export const consumptionLease = (graph: FlowGraphId): string => `consumption:${graph}`;

/** How long the lease lasts unless renewed: it is renewed at each write (a day of hours). */
const LEASE_MS = 60_000;

/** How often an update waiting for the lease asks again. */
const LEASE_RETRY_MS = 200;

/**
 * Traces again the hours of `graphId` whose inputs changed after its cursor (every hour when the
 * graph was never traced, or with `everything`), replaces their rows, and moves the cursor to the
 * data version the changes were read at. A write between that read and the end is traced again by
 * the next update.
 *
 * One update of a graph at a time on the store, whichever process runs it (a `gridco2 backfill`
 * beside `serve`): it waits for the graph's lease, so that it reads the inputs after the previous
 * update wrote, and an older trace never lands after a newer one. A holder that dies loses the
 * lease when it expires; an update that finds its lease taken from it stops before writing more.
 */
export async function updateConsumption(
  store: Store,
  graphId: FlowGraphId,
  options: ConsumptionUpdateOptions = {},
): Promise<ConsumptionUpdate> {
  const lease = consumptionLease(graphId);
  const holder = `${hostname()}:${process.pid}:${randomUUID()}`;
  while (!(await store.acquireLease(lease, holder, LEASE_MS))) await delay(LEASE_RETRY_MS);
  try {
    return await updateHoldingLease(store, graphId, options, async () => {
      if (!(await store.acquireLease(lease, holder, LEASE_MS))) {
        throw new Error(`consumption series of ${graphId}: lease ${lease} taken by another holder`);
      }
    });
  } finally {
    await store.releaseLease(lease, holder).catch(() => undefined);
  }
}

/** updateConsumption once it holds the lease; `renew` before each write renews it. */
async function updateHoldingLease(
  store: Store,
  graphId: FlowGraphId,
  options: ConsumptionUpdateOptions,
  renew: () => Promise<void>,
): Promise<ConsumptionUpdate> {
  const graph = FLOW_GRAPHS[graphId];
  const borders = await store.flowBorders(graphId);
  const stored = await store.consumptionCursor(graphId);
  if (borders.length === 0) return { graph: graphId, hours: [], changed: 0, cursor: stored };
  const since = options.everything ? -1 : (stored ?? -1);
  const changes = await changedInputs(store, graph, since);
  const traced = new Set<number>();
  let changed = 0;
  for (const chunk of chunksOf(changes)) {
    const first = chunk.hours[0]!;
    const last = chunk.hours.at(-1)!;
    const lookback = Math.max(
      SHARES_LOOKBACK_HOURS,
      CARRY_HOURS,
      ...graph.aggregates.map((aggregate) => aggregate.memberLookbackHours),
    );
    // The hours after `last` that its changes reach (hoursReached) need their own inputs too.
    const series = await loadSeries(store, graph, borders, {
      fromTs: first - lookback * HOUR,
      toTs: last + (SHARES_LOOKBACK_HOURS + 1) * HOUR,
    });
    const hours = hoursReached(series, chunk.inputs).filter((hour) => !traced.has(hour));
    const storedHours = storedHoursOf(series);
    // A day at a time, each its own write: `serve` answers requests in between.
    for (let start = 0; start < hours.length; start += WRITE_HOURS) {
      const some = hours.slice(start, start + WRITE_HOURS);
      const rows = traceHours(series, some).flatMap((trace) =>
        traceRows(graph, trace, storedHours),
      );
      await renew();
      changed += await store.replaceConsumption(graphId, { hours: some, rows });
      for (const hour of some) traced.add(hour);
      await setImmediate();
    }
  }
  if (changes.version !== stored) {
    await renew();
    await store.replaceConsumption(graphId, { hours: [], rows: [], cursor: changes.version });
  }
  return {
    graph: graphId,
    hours: [...traced].sort((a, b) => a - b),
    changed,
    cursor: changes.version,
  };
}

/** Traces every hour of every graph again: after a change of factors (`gridco2 recompute`). */
export async function recomputeConsumption(store: Store): Promise<ConsumptionUpdate[]> {
  const updates: ConsumptionUpdate[] = [];
  for (const graph of Object.keys(FLOW_GRAPHS) as FlowGraphId[]) {
    updates.push(await updateConsumption(store, graph, { everything: true }));
  }
  return updates;
}

/** The rows of one traced hour: each solved node's, and each aggregate's when it is published. */
function traceRows(
  graph: FlowGraph,
  trace: HourTrace,
  storedHours: ReadonlyMap<string, readonly number[]>,
): ConsumptionRow[] {
  const hour = trace.ts;
  const rows = [...trace.solved.values()].map((node) => nodeRow(hour, node));
  for (const { zone, nodes, memberLookbackHours } of graph.aggregates) {
    const members = nodes.filter((id) =>
      hasMixWithin(storedHours.get(id), hour, memberLookbackHours),
    );
    const aggregate = aggregateConsumption(trace, members);
    if (aggregate !== undefined) rows.push(aggregateRow(zone, hour, aggregate));
  }
  return rows;
}

/** Each node's hours with a stored mix in the series, ascending. */
function storedHoursOf(series: GraphSeries): Map<string, number[]> {
  return new Map(
    [...series.nodes].map(([id, hours]) => [id, [...hours.keys()].sort((a, b) => a - b)]),
  );
}

interface Changes {
  /** The data version the changes were read at: the cursor once they are traced. */
  readonly version: number;
  readonly flowHours: ReadonlySet<number>;
  readonly mixHours: ReadonlyMap<string, ReadonlySet<number>>;
}

/**
 * The hours with a flow of the graph, or a stored row of one of its nodes, written after `since`.
 * The flows' snapshot is read first: its version is at most the readings', so a write between
 * the two reads is at worst traced twice, never missed.
 */
async function changedInputs(store: Store, graph: FlowGraph, since: number): Promise<Changes> {
  const flows = await store.flowChangesSince(graph.id, since);
  const zones = new Set([...graph.nodes, ...graph.sharesOnly]);
  const flowHours = new Set(flows.hours);
  if (since < 0) {
    return { version: flows.version, flowHours, mixHours: await everyStoredHour(store, zones) };
  }
  const mixHours = new Map<string, Set<number>>();
  let sinceVersion = since;
  let after: StoreKey | undefined;
  for (;;) {
    const { changes } = await store.changesSince(sinceVersion, CHANGES_PAGE_ROWS, after);
    for (const { zone, ts } of changes) {
      if (!zones.has(zone)) continue;
      const hours = mixHours.get(zone) ?? new Set<number>();
      mixHours.set(zone, hours.add(floorToHour(ts)));
    }
    const last = changes.at(-1);
    if (last === undefined || changes.length < CHANGES_PAGE_ROWS) break;
    // The rest of the last write after its last row read, then every later write.
    sinceVersion = last.version - 1;
    after = { zone: last.zone, ts: last.ts };
  }
  return { version: flows.version, flowHours, mixHours };
}

/**
 * Every hour with a stored row of one of `zones`: what changed since the very start, read zone
 * by zone. `changesSince` would page through every row of the store, every zone's.
 */
async function everyStoredHour(
  store: Store,
  zones: ReadonlySet<string>,
): Promise<Map<string, Set<number>>> {
  const mixHours = new Map<string, Set<number>>();
  for (const zone of zones) {
    const times = await store.storedTimes(zone);
    if (times.length > 0) mixHours.set(zone, new Set(times.map(floorToHour)));
  }
  return mixHours;
}

interface Chunk {
  /** The changed hours of the chunk, ascending, spanning less than CHUNK_HOURS. */
  readonly hours: readonly number[];
  readonly inputs: ChangedInputs;
}

/** The changed hours in chunks of less than CHUNK_HOURS, each with its changed inputs. */
function chunksOf(changes: Changes): Chunk[] {
  const all = new Set(changes.flowHours);
  for (const hours of changes.mixHours.values()) for (const hour of hours) all.add(hour);
  const sorted = [...all].sort((a, b) => a - b);
  const chunks: number[][] = [];
  for (const hour of sorted) {
    const current = chunks.at(-1);
    if (current !== undefined && hour - current[0]! < CHUNK_HOURS * HOUR) current.push(hour);
    else chunks.push([hour]);
  }
  return chunks.map((hours) => {
    const inChunk = (hour: number) => hour >= hours[0]! && hour <= hours.at(-1)!;
    const mixHours = new Map<string, number[]>();
    for (const [zone, changed] of changes.mixHours) {
      const hoursOfZone = [...changed].filter(inChunk);
      if (hoursOfZone.length > 0) mixHours.set(zone, hoursOfZone);
    }
    return { hours, inputs: { flowHours: [...changes.flowHours].filter(inChunk), mixHours } };
  });
}
