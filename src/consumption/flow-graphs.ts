/**
 * The two flow graphs as the consumption series reads them from the store (extensions §15):
 * which stored zones are solved, which only lend their shares, how a border's two stored
 * directions make its net flow, and which zones are made of nodes (US48).
 */
import { eiaBorder, entsoeBorder, type Border } from '../core/consumption/flows.js';
import type { FlowGraphId } from '../core/flows.js';
import type { HourlySeries } from '../core/generation.js';
import { EUROPE_NODES } from '../core/grid-graph/europe.js';
import type { GraphNode } from '../core/grid-graph/graph.js';
import { US_NODES } from '../core/grid-graph/us.js';
import { findZone } from '../core/zones.js';
import { SOURCE_INFO } from '../core/sources.js';

/** A zone whose value is an aggregate of nodes. */
interface AggregateZone {
  readonly zone: string;
  /** Every node that can be a member. */
  readonly nodes: readonly string[];
  /**
   * A node is a member in an hour when it has a stored mix in that hour or in one of this many
   * hours before: a balancing authority that reports late holds the aggregate back, one retired
   * (or silent for a week) no longer does.
   */
  readonly memberLookbackHours: number;
}

export interface FlowGraph {
  readonly id: FlowGraphId;
  /** Nodes that publish generation in MWh: solved in an hour where their mix is complete. */
  readonly nodes: readonly string[];
  /** Neighbours with a stored mix of shares only, never solved (GB, from NESO). */
  readonly sharesOnly: readonly string[];
  /**
   * The border between `from` and `to` from the stored flows `from -> to` and `to -> from`
   * (src/core/flows.ts DirectedFlow says what each graph's rows mean).
   */
  readonly border: (
    from: string,
    to: string,
    fromTo: HourlySeries,
    toFrom: HourlySeries,
  ) => Border | undefined;
  readonly aggregates: readonly AggregateZone[];
}

/** Whether a node's stored mix holds shares (%) rather than energy: GB's, from NESO. */
const holdsShares = (node: GraphNode): boolean => {
  const zone = findZone(node.code);
  return zone !== undefined && SOURCE_INFO[zone.source].mixUnit === '%';
};

/** Nodes with a stored mix: every node but the boundary ones, which have none upstream. */
const withMix = (nodes: readonly GraphNode[]) => nodes.filter((node) => node.role !== 'boundary');

const usNodes = withMix(US_NODES).map((node) => node.code);

export const FLOW_GRAPHS: Readonly<Record<FlowGraphId, FlowGraph>> = {
  europe: {
    id: 'europe',
    nodes: withMix(EUROPE_NODES)
      .filter((node) => !holdsShares(node))
      .map((node) => node.code),
    sharesOnly: withMix(EUROPE_NODES)
      .filter(holdsShares)
      .map((node) => node.code),
    border: entsoeBorder,
    aggregates: [],
  },
  us: {
    id: 'us',
    nodes: usNodes,
    sharesOnly: [],
    border: eiaBorder,
    aggregates: [{ zone: 'US', nodes: usNodes, memberLookbackHours: 7 * 24 }],
  },
};
