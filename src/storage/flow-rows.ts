import type { DirectedFlow, FlowBorder } from '../core/flows.js';
import { lastPerKey } from './last-per-key.js';

/** What both backends do with the flows of one write before they store them. */

const compareFlows = (a: DirectedFlow, b: DirectedFlow): number =>
  a.ts - b.ts ||
  (a.from < b.from ? -1 : a.from > b.from ? 1 : 0) ||
  (a.to < b.to ? -1 : a.to > b.to ? 1 : 0);

/**
 * One flow per (from, to, ts), the later one winning as with successive upserts, in key order:
 * PostgreSQL updates a row once per statement, and concurrent writers that lock rows in the same
 * order cannot deadlock. Both backends count changed rows alike from it.
 */
export const lastFlowPerKey = (flows: readonly DirectedFlow[]): DirectedFlow[] =>
  lastPerKey(flows, compareFlows);

/** Each direction's earliest hour among `flows`, in (from, to) order. */
export function firstHours(flows: readonly DirectedFlow[]): FlowBorder[] {
  const first = new Map<string, FlowBorder>();
  for (const { from, to, ts } of flows) {
    const key = `${from}\u0000${to}`;
    const known = first.get(key);
    if (known === undefined || ts < known.firstTs) first.set(key, { from, to, firstTs: ts });
  }
  return [...first.values()].sort((a, b) =>
    a.from < b.from ? -1 : a.from > b.from ? 1 : a.to < b.to ? -1 : a.to > b.to ? 1 : 0,
  );
}
