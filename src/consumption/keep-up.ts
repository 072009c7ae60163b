/**
 * Keeps the consumption series up to date after ingestion and backfill (extensions §15): the
 * graphs a source feeds are traced again from their cursor (updateConsumption), one update of a
 * graph at a time on the store. A failed update is logged and leaves the store as it was (the
 * cursor moves only once every traced hour is written): the next update traces it again.
 */
import type { Logger } from 'pino';
import type { FlowGraphId } from '../core/flows.js';
import { formatTs } from '../core/time.js';
import type { SourceAdapter } from '../sources/adapter.js';
import type { Store } from '../storage/store.js';
import { FLOW_GRAPHS } from './flow-graphs.js';
import { type ConsumptionUpdate, updateConsumption } from './update-consumption.js';

/**
 * The update in progress of each graph of each store. Two updates of a graph at once could
 * write one's older rows after the other's newer ones and then the newer cursor: serialized here
 * in this process without polling, and across processes by the graph's store lease
 * (updateConsumption).
 */
const inProgress = new WeakMap<Store, Map<FlowGraphId, Promise<unknown>>>();

/** The flow graphs whose inputs a source's zones, nodes or borders are. */
export function graphsFedBy(adapter: SourceAdapter): FlowGraphId[] {
  const codes = new Set(
    [...adapter.zones, ...(adapter.graph?.nodes ?? [])].map((zone) => zone.code),
  );
  return Object.values(FLOW_GRAPHS)
    .filter(
      (graph) =>
        graph.id === adapter.graph?.graph ||
        [...graph.nodes, ...graph.sharesOnly].some((node) => codes.has(node)),
    )
    .map((graph) => graph.id);
}

/**
 * Traces again the hours of each graph whose inputs changed since its cursor, after the update
 * already in progress of that graph; logs what it traced, or why it failed. Never rejects: the
 * updates that failed are left out of what it resolves with.
 */
export async function keepConsumptionUp(
  store: Store,
  logger: Logger,
  graphs: readonly FlowGraphId[],
): Promise<ConsumptionUpdate[]> {
  const updates: ConsumptionUpdate[] = [];
  for (const graph of graphs) {
    const update = await serialized(store, graph, () => updateConsumption(store, graph)).catch(
      (error: unknown) => {
        logger.error(
          { graph, err: error },
          `consumption series of ${graph} not updated; the next pass traces it again`,
        );
        return undefined;
      },
    );
    if (update === undefined) continue;
    updates.push(update);
    if (update.hours.length > 0) logUpdate(logger, update);
  }
  return updates;
}

function serialized<T>(store: Store, graph: FlowGraphId, work: () => Promise<T>): Promise<T> {
  const ofStore = inProgress.get(store) ?? new Map<FlowGraphId, Promise<unknown>>();
  inProgress.set(store, ofStore);
  const previous = ofStore.get(graph) ?? Promise.resolve();
  const next = previous.then(work, work);
  const settled = next.catch(() => undefined);
  ofStore.set(graph, settled);
  void settled.then(() => {
    if (ofStore.get(graph) === settled) ofStore.delete(graph);
  });
  return next;
}

function logUpdate(logger: Logger, { graph, hours, changed }: ConsumptionUpdate): void {
  const first = hours[0]!;
  const last = hours.at(-1)!;
  logger.info(
    { graph, hours: hours.length, fromTs: first, toTs: last, changed },
    `consumption series of ${graph}: ${hours.length} hours traced ` +
      `(${formatTs(first)}..${formatTs(last)}), ${changed} rows changed`,
  );
}
