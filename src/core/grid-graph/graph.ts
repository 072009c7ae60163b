/**
 * What the two flow graphs (extensions §15-16) are made of: nodes, and the borders between them.
 * The data are in europe.ts and us.ts; docs/upstreams.md §9 says where each row comes from.
 */
import { resolutionOf, type SourceId } from '../sources.js';
import { findZone, type Zone } from '../zones.js';

/**
 * - `zone`: one of the 45 zones of the contract (its code, name and feed as served).
 * - `extra`: a neighbour whose generation is ingested for the graph only (extensions §16), served
 *   as a zone with `ZONES=all`.
 * - `boundary`: a neighbour without an hourly mix upstream (Türkiye, Ukraine, Canadian
 *   provinces, ...): its flows are ingested, its imports enter at a fixed intensity.
 */
export type NodeRole = 'zone' | 'extra' | 'boundary';

export interface GraphNode {
  /** As served: a zone's code, else in the same style (`EE`, `US-AECI`). */
  readonly code: string;
  readonly name: string;
  readonly role: NodeRole;
  /**
   * The area's own id upstream: an EIC (Europe) or an EIA balancing authority code (US). Null
   * for a node that has none (Corsica: reached through the Italian links only).
   */
  readonly upstreamId: string | null;
}

/**
 * A served zone as a node, under its served code and name, and its upstream id as served unless
 * the graph's upstream knows it by another (GB is `national` to NESO, an EIC to ENTSO-E).
 */
export function zoneNode(code: string, upstreamId?: string): GraphNode {
  const zone = findZone(code);
  if (zone === undefined) throw new Error(`grid graph: ${code} is not a zone`);
  return {
    code: zone.code,
    name: zone.name,
    role: 'zone',
    upstreamId: upstreamId ?? zone.upstreamId,
  };
}

/** `[code, name, upstream id]` rows as nodes of one role. */
export function nodesOf(
  role: Exclude<NodeRole, 'zone'>,
  rows: readonly (readonly [code: string, name: string, upstreamId: string | null])[],
): GraphNode[] {
  return rows.map(([code, name, upstreamId]) => ({ code, name, role, upstreamId }));
}

/** The node of each code, refusing a code given twice. */
export function indexNodes(nodes: readonly GraphNode[]): ReadonlyMap<string, GraphNode> {
  const byCode = new Map<string, GraphNode>();
  for (const node of nodes) {
    if (byCode.has(node.code)) throw new Error(`grid graph: node ${node.code} listed twice`);
    byCode.set(node.code, node);
  }
  return byCode;
}

/**
 * A graph's extra nodes as zones of the source that publishes their generation: fetched,
 * computed and stored under their codes exactly like a zone, and never served (extensions §16).
 */
export function extraNodeZones(nodes: readonly GraphNode[], source: SourceId): Zone[] {
  return nodes.flatMap(({ code, name, role, upstreamId }) =>
    role === 'extra' && upstreamId !== null
      ? [{ code, name, source, resolutionMin: resolutionOf(source), upstreamId }]
      : [],
  );
}
