/**
 * A region's consumption value from its solved nodes (extensions §15, "GB and US"): `US` (US48)
 * is the consumption-weighted mean of its balancing authorities, each weighed by what it
 * consumed, T[i] - X[i].
 */
import { type Basis, BASES, cleanShares } from '../factors.js';
import {
  type HourTrace,
  IMPORTED_ESTIMATED,
  TRACED_CATEGORIES,
  type TracedCategory,
} from './trace-hour.js';

export interface ConsumptionAggregate {
  /** Sum of the members' T[i] - X[i], MWh. */
  readonly consumptionMwh: number;
  /** Sum of the members' consumption per category, MWh. */
  readonly consumption: Readonly<Partial<Record<TracedCategory, number>>>;
  /** Mean of the members' values, weighed by their consumption. */
  readonly intensity: Readonly<Record<Basis, number>>;
  readonly estimatedPct: number;
  readonly renewablePct: number;
  readonly lowCarbonPct: number;
  /** MWh the members imported from each node outside them (US48: Canada, Mexico). */
  readonly imports: Readonly<Record<string, number>>;
  /** MWh the members exported to each node outside them. */
  readonly exports: Readonly<Record<string, number>>;
  /** The nodes outside the members with a border to one of them estimated this hour, sorted. */
  readonly estimatedBorders: readonly string[];
}

/**
 * The aggregate of `members` in a traced hour; undefined unless every member is solved and
 * together they consumed more than 0. For US48 the members are every balancing authority of the
 * US48 graph that has fuel-type data.
 */
export function aggregateConsumption(
  trace: HourTrace,
  members: readonly string[],
): ConsumptionAggregate | undefined {
  const nodes = members.map((id) => trace.solved.get(id));
  if (members.length === 0 || nodes.some((node) => node === undefined)) return undefined;
  let consumptionMwh = 0;
  const emissions = { lifecycle: 0, direct: 0 };
  const consumption: Partial<Record<TracedCategory, number>> = {};
  const inside = new Set(members);
  const imports: Record<string, number> = {};
  const exports: Record<string, number> = {};
  const estimatedBorders = new Set<string>();
  const addOutside = (totals: Record<string, number>, flows: Readonly<Record<string, number>>) => {
    for (const [id, mwh] of Object.entries(flows)) {
      if (!inside.has(id)) totals[id] = (totals[id] ?? 0) + mwh;
    }
  };
  for (const node of nodes) {
    consumptionMwh += node!.consumptionMwh;
    addOutside(imports, node!.imports);
    addOutside(exports, node!.exports);
    for (const id of node!.estimatedBorders) if (!inside.has(id)) estimatedBorders.add(id);
    for (const basis of BASES) emissions[basis] += node!.intensity[basis] * node!.consumptionMwh;
    for (const category of TRACED_CATEGORIES) {
      const mwh = node!.consumption[category];
      if (mwh !== undefined) consumption[category] = (consumption[category] ?? 0) + mwh;
    }
  }
  if (!(consumptionMwh > 0)) return undefined;
  const { renewablePct, lowCarbonPct } = cleanShares(consumption, TRACED_CATEGORIES);
  return {
    consumptionMwh,
    consumption,
    intensity: {
      lifecycle: emissions.lifecycle / consumptionMwh,
      direct: emissions.direct / consumptionMwh,
    },
    estimatedPct: (100 * (consumption[IMPORTED_ESTIMATED] ?? 0)) / consumptionMwh,
    renewablePct,
    lowCarbonPct,
    imports,
    exports,
    estimatedBorders: [...estimatedBorders].sort(),
  };
}
