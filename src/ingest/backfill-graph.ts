import type { Logger } from 'pino';
import type { DirectedFlow } from '../core/flows.js';
import { HOUR, splitWindow, type TimeWindow } from '../core/time.js';
import type { SourceAdapter, SourceGraph } from '../sources/adapter.js';
import type { Store } from '../storage/store.js';
import {
  endChunk,
  missingWindow,
  nothingBackfilled,
  planBackfill,
  runBackfill,
  type BackfillProgress,
  type BackfillResult,
} from './backfill.js';
import { createSourceStop } from './sources.js';

export interface GraphBackfillOptions {
  readonly store: Store;
  readonly adapter: SourceAdapter;
  readonly logger: Logger;
  /** Whole hours. */
  readonly window: TimeWindow;
  /** Told after each chunk of the nodes, then of the borders, counted together. */
  readonly onProgress?: (progress: BackfillProgress) => void;
  readonly signal?: AbortSignal;
}

/**
 * Fills a source's part of its flow graph over a window (FLOWS, extensions §15-16): its extra
 * nodes' generation, chunk by chunk as runBackfill fills zones but without forecasts (they are
 * never served), then the flows of each border, border by border and oldest chunk first, each
 * chunk within the upstream's limits (the graph's `backfillChunkSeconds`).
 *
 * Resumable like the zones: a border's chunk is recorded as backfilled, under the key
 * `flows:<graph>:<border>`, up to its first hour without any flow (gaps and the present are
 * fetched again on every run), once its flows are written. A kill between the two writes leaves
 * the chunk to be fetched again, which stores the same flows again: the store ends as after an
 * uninterrupted run. A failed border does not stop the others; the graph is given up by the same
 * rule as a source (createSourceStop). Nothing to fill without a graph (or with FLOWS=off).
 */
export async function runGraphBackfill(options: GraphBackfillOptions): Promise<BackfillResult> {
  const { store, adapter, logger, window, onProgress, signal } = options;
  const { graph } = adapter;
  if (graph === undefined) return nothingBackfilled();
  const borderChunks = planBorderChunks(graph, window);
  const nodeChunks = planBackfill(adapter, graph.nodes, window).length;
  const total = nodeChunks + borderChunks.length;
  const nodes = await runBackfill({
    store,
    adapter,
    logger,
    zones: graph.nodes,
    window,
    forecasts: false,
    onProgress: (progress) => onProgress?.({ ...progress, total }),
    ...(signal && { signal }),
  });

  const stopsGraph = createSourceStop();
  const errors = [...nodes.errors];
  let skipped = nodes.skipped;
  let flowsStored = 0;
  for (const [index, chunk] of borderChunks.entries()) {
    signal?.throwIfAborted();
    const key = `flows:${graph.graph}:${chunk.border}`;
    const missing = await missingWindow(store, [key], chunk.window);
    const chunkErrors: string[] = [];
    let stored = 0;
    let givenUp: string | undefined;
    if (missing === null) {
      skipped += 1;
    } else {
      const limits = signal ? { signal } : {};
      for await (const outcome of graph.fetchFlows(missing, limits, [chunk.border])) {
        if (outcome.kind === 'flows') {
          stored += await storeFlows(store, graph, key, outcome.flows, missing);
        } else {
          chunkErrors.push(`${chunk.border}: ${adapter.scrub(outcome.error.message)}`);
        }
        const stop = stopsGraph(outcome);
        if (stop !== null) {
          givenUp =
            `${adapter.source}: flow graph given up at border chunk ${index + 1} of ` +
            `${borderChunks.length}: ${stop}`;
        }
      }
    }
    flowsStored += stored;
    const progress = {
      done: nodeChunks + index + 1,
      total,
      chunk: { zones: [], window: chunk.window, border: chunk.border },
      skipped: missing === null,
      pointsStored: stored,
      errors: chunkErrors,
    };
    if (endChunk({ errors, logger, source: adapter.source, onProgress }, progress, givenUp)) break;
  }
  return {
    chunks: total,
    skipped,
    pointsStored: nodes.pointsStored,
    incompleteHours: nodes.incompleteHours,
    forecastsStored: 0,
    flowsStored,
    errors,
  };
}

/** The chunks of a graph backfill over `window`: its nodes', then each border's. */
export function graphBackfillChunks(adapter: SourceAdapter, window: TimeWindow): number {
  const { graph } = adapter;
  if (graph === undefined) return 0;
  return planBackfill(adapter, graph.nodes, window).length + planBorderChunks(graph, window).length;
}

/** Border by border, oldest chunk first. */
function planBorderChunks(graph: SourceGraph, window: TimeWindow) {
  return graph.borders.flatMap((border) =>
    splitWindow(window, graph.backfillChunkSeconds).map((piece) => ({ border, window: piece })),
  );
}

/**
 * Writes a border's flows over `window`, then records the window as backfilled up to its first
 * hour without any flow. Returns the flows inserted or changed.
 */
async function storeFlows(
  store: Store,
  graph: SourceGraph,
  key: string,
  flows: readonly DirectedFlow[],
  window: TimeWindow,
): Promise<number> {
  const stored = await store.upsertFlows(graph.graph, flows);
  const hours = new Set(flows.map((flow) => flow.ts));
  let filledTo = window.fromTs;
  while (filledTo < window.toTs && hours.has(filledTo)) filledTo += HOUR;
  if (filledTo > window.fromTs) {
    await store.writeChunk({
      readings: [],
      mixes: [],
      forecasts: [],
      backfilled: [{ zone: key, fromTs: window.fromTs, toTs: filledTo }],
    });
  }
  return stored;
}
