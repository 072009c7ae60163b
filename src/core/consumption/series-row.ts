/**
 * One zone's consumption series point as the store keeps it (extensions §15): its value on each
 * basis and what `/v1/mix` with `accounting=consumption` serves, from a traced node or from an
 * aggregate of nodes (US48). Nothing is rounded: values are rounded when served, as every other.
 */
import type { ConsumptionAggregate } from './aggregate.js';
import type { TracedCategory, TracedNode } from './trace-hour.js';

/** The traced mix of one zone's hour: `/v1/mix` with `accounting=consumption`. */
export interface ConsumptionMixPoint {
  /** Start of the hour, epoch seconds. */
  readonly ts: number;
  /**
   * MWh consumed per category it was generated as, `m[i,f] * (T[i] - X[i])`, in the order of
   * TRACED_CATEGORIES; `imported-estimated` (served `imported_estimated`) for imports from
   * unsolved neighbours.
   */
  readonly consumption: Readonly<Partial<Record<TracedCategory, number>>>;
  /** MWh imported from each neighbour (net flows into the zone), by neighbour code. */
  readonly imports: Readonly<Record<string, number>>;
  /** MWh exported to each neighbour (net flows out of the zone), by neighbour code. */
  readonly exports: Readonly<Record<string, number>>;
  /** `imported-estimated`'s share of the consumption, %. */
  readonly estimatedPct: number;
  /** The neighbours whose border flow was estimated this hour, sorted. */
  readonly estimatedBorders: readonly string[];
  readonly renewablePct: number;
  readonly lowCarbonPct: number;
}

/** A consumption series point: the zone's values of the hour and its traced mix. */
export interface ConsumptionRow extends ConsumptionMixPoint {
  readonly zone: string;
  /** gCO2eq/kWh consumed with lifecycle factors (`computed:v1:consumption`), unrounded. */
  readonly lifecycle: number;
  /** gCO2eq/kWh consumed with direct factors (`computed:v1:direct:consumption`), unrounded. */
  readonly direct: number;
}

/** The row of a solved node: its code is the zone's. */
export function nodeRow(ts: number, node: TracedNode): ConsumptionRow {
  return {
    zone: node.id,
    ts,
    lifecycle: node.intensity.lifecycle,
    direct: node.intensity.direct,
    consumption: node.consumption,
    imports: sortedByKey(node.imports),
    exports: sortedByKey(node.exports),
    estimatedPct: node.estimatedPct,
    estimatedBorders: node.estimatedBorders,
    renewablePct: node.renewablePct,
    lowCarbonPct: node.lowCarbonPct,
  };
}

/** The row of a zone made of several nodes (US48). */
export function aggregateRow(
  zone: string,
  ts: number,
  aggregate: ConsumptionAggregate,
): ConsumptionRow {
  return {
    zone,
    ts,
    lifecycle: aggregate.intensity.lifecycle,
    direct: aggregate.intensity.direct,
    consumption: aggregate.consumption,
    imports: sortedByKey(aggregate.imports),
    exports: sortedByKey(aggregate.exports),
    estimatedPct: aggregate.estimatedPct,
    estimatedBorders: aggregate.estimatedBorders,
    renewablePct: aggregate.renewablePct,
    lowCarbonPct: aggregate.lowCarbonPct,
  };
}

/**
 * The record with its keys sorted (itself when they are): an hour solved again from the same
 * inputs then stores the same text, whatever the order its flows were read in.
 */
export function sortedByKey(record: Readonly<Record<string, number>>): Record<string, number> {
  // The tracer's records come sorted: most calls copy nothing.
  let previous: string | undefined;
  let sorted = true;
  for (const key in record) {
    if (previous !== undefined && previous > key) sorted = false;
    previous = key;
  }
  if (sorted) return record as Record<string, number>;
  return Object.fromEntries(
    Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}
