/**
 * Flow tracing of one hour (extensions §15; docs/method.md, "Consumption accounting"): the mix
 * that each solved node consumes, by proportional sharing. For every solved node i and category f
 *
 *     m[i,f] * T[i] = g[i,f] + sum_j F[j->i] * s[j,f],     T[i] = sum_f g[i,f] + sum_j F[j->i]
 *
 * with s[j,f] = m[j,f] for a solved j. All solved nodes of the hour are solved together; the
 * matrix is the same for every category, so it is factored once.
 *
 * Imports from an unsolved neighbour are one more category, `imported-estimated` (served as
 * `imported_estimated`). Their emissions are traced beside them: a right-hand side per basis
 * carrying F[j->i] times the neighbour's estimated intensity (estimates.ts), solved with the same
 * matrix. A node's value is its traced mix times the factors plus those traced emissions, so
 * emissions are conserved on both bases (check.ts), and the effective factor of
 * `imported-estimated` at a node is its traced emissions over its traced share: the mean of the
 * neighbours' intensities weighted by how much of each reached the node.
 */
import {
  type Basis,
  BASES,
  CATEGORIES,
  type Category,
  cleanShares,
  FACTORS,
  isCategory,
} from '../factors.js';
import { factorLuInPlace, solveLuInto } from '../forecast/linalg.js';
import type { Mix } from '../reading.js';
import { estimateIntensity, type ImportEstimate } from './estimates.js';

/** The category of imports from unsolved neighbours; `/v1/mix` spells it `imported_estimated`. */
export const IMPORTED_ESTIMATED = 'imported-estimated';
export type TracedCategory = Category | typeof IMPORTED_ESTIMATED;
/** The categories of a traced mix, in the order every sum runs. */
export const TRACED_CATEGORIES: readonly TracedCategory[] = [...CATEGORIES, IMPORTED_ESTIMATED];

/** One node of the graph in the hour. */
export interface HourNode {
  readonly id: string;
  /** MWh per category, storage excluded: the stored mix (method.md). */
  readonly generation: Mix;
  /** Whether the mix is complete (method.md): only a complete mix is solved. */
  readonly complete: boolean;
}

/** A border's net flow in the hour. */
export interface NetFlow {
  readonly from: string;
  readonly to: string;
  /** MWh from `from` to `to` (negative: the other way). */
  readonly mwh: number;
  /** Not published for this hour: carried from an earlier hour, or 0 (flows.ts). */
  readonly estimated: boolean;
}

export interface HourGraph {
  /** Start of the hour, epoch seconds. */
  readonly ts: number;
  readonly nodes: readonly HourNode[];
  /** Net flows; several for one pair of nodes are added up (the sub-links of one border). */
  readonly flows: readonly NetFlow[];
  /** How each unsolved neighbour's exports enter (estimates.ts); one not listed: `other`. */
  readonly estimates: ReadonlyMap<string, ImportEstimate>;
}

/** One solved node in the hour. Nothing is rounded: values are rounded when served. */
export interface TracedNode {
  readonly id: string;
  /** m[i,f]: each category's share of what flows through the node (the shares add up to 1). */
  readonly mix: Readonly<Partial<Record<TracedCategory, number>>>;
  /** MWh generated: sum_f g[i,f]. */
  readonly generationMwh: number;
  /** T[i]: MWh generated plus MWh imported. */
  readonly throughflowMwh: number;
  /** X[i]: MWh exported, to every neighbour. */
  readonly exportsMwh: number;
  /** Xout[i]: MWh exported to unsolved neighbours. */
  readonly exportsToUnsolvedMwh: number;
  /** T[i] - X[i]: what the node consumed (with losses); not above 0 only with inconsistent data. */
  readonly consumptionMwh: number;
  /** m[i,f] * (T[i] - X[i]) per category with a share or with own generation. */
  readonly consumption: Readonly<Partial<Record<TracedCategory, number>>>;
  /** MWh imported from each neighbour it imports from (net flows above 0). */
  readonly imports: Readonly<Record<string, number>>;
  /** MWh exported to each neighbour it exports to (net flows above 0). */
  readonly exports: Readonly<Record<string, number>>;
  /** gCO2eq/kWh consumed: sum_f m[i,f] * EF[f] over the categories, plus the traced emissions of `imported-estimated`. */
  readonly intensity: Readonly<Record<Basis, number>>;
  /** The effective factor of `imported-estimated` at this node; null when none reaches it. */
  readonly estimatedFactor: Readonly<Record<Basis, number>> | null;
  /** `imported-estimated`'s share of the consumption, %. */
  readonly estimatedPct: number;
  /** The neighbours whose border flow was estimated this hour, sorted. */
  readonly estimatedBorders: readonly string[];
  /** As `/v1/mix` computes them (factors.ts `cleanShares`), `imported-estimated` in the total. */
  readonly renewablePct: number;
  readonly lowCarbonPct: number;
}

export interface HourTrace {
  readonly ts: number;
  /** The solved nodes, in the order of `HourGraph.nodes`. */
  readonly solved: ReadonlyMap<string, TracedNode>;
}

/** A node is solved when its mix is complete and it generated something (extensions §15). */
export function isSolvable(node: HourNode): boolean {
  return node.complete && totalOf(node.generation) > 0;
}

function totalOf(generation: Mix): number {
  // Called for every node of every hour: a loop over the keys, no array of entries.
  let total = 0;
  for (const key in generation) {
    if (!isCategory(key)) throw new RangeError(`mix has an unknown fuel category: ${key}`);
    total += generation[key]!;
  }
  return total;
}

/** One border's net flow in the hour, oriented so that `mwh` is not negative. */
interface Link {
  readonly from: string;
  readonly to: string;
  readonly mwh: number;
  readonly estimated: boolean;
}

/** Adds up the flows of each pair of nodes and orients each pair along its net flow. */
export function netLinks(flows: readonly NetFlow[]): Link[] {
  // Pairs in the order they first appear: the order every later sum over them runs in.
  const pairs: { from: string; to: string; mwh: number; estimated: boolean }[] = [];
  const byFrom = new Map<string, Map<string, (typeof pairs)[number]>>();
  for (const flow of flows) {
    if (flow.from === flow.to) throw new RangeError(`a flow from ${flow.from} to itself`);
    if (!Number.isFinite(flow.mwh))
      throw new RangeError(`flow ${flow.from}->${flow.to} is not finite`);
    const forward = flow.from < flow.to;
    const from = forward ? flow.from : flow.to;
    const to = forward ? flow.to : flow.from;
    const ofFrom = byFrom.get(from) ?? new Map<string, (typeof pairs)[number]>();
    byFrom.set(from, ofFrom);
    let pair = ofFrom.get(to);
    if (pair === undefined) {
      pair = { from, to, mwh: 0, estimated: false };
      ofFrom.set(to, pair);
      pairs.push(pair);
    }
    pair.mwh += forward ? flow.mwh : -flow.mwh;
    pair.estimated ||= flow.estimated;
  }
  return pairs.map(({ from, to, mwh, estimated }) =>
    mwh < 0 ? { from: to, to: from, mwh: -mwh, estimated } : { from, to, mwh, estimated },
  );
}

/** Per solved node, what its borders carry in the hour, in the order of netLinks. */
interface Borders {
  readonly imports: [neighbour: string, mwh: number][];
  readonly exports: [neighbour: string, mwh: number][];
  readonly estimated: string[];
}

/** Right-hand sides an hour solves at most: one per category, imported-estimated, two bases. */
const SOLUTIONS = CATEGORIES.length + 3;

/**
 * The buffers one hour is solved in, kept from hour to hour: a window of hours traced with one
 * workspace allocates no typed array per hour. What an hour returns holds nothing of it.
 */
export class TraceWorkspace {
  private capacity = -1;
  private buffers!: ReturnType<typeof allocate>;

  reserve(size: number): ReturnType<typeof allocate> {
    if (size > this.capacity) {
      this.capacity = Math.max(size, 2 * this.capacity);
      this.buffers = allocate(this.capacity);
    }
    return this.buffers;
  }
}

function allocate(capacity: number) {
  const vector = () => new Float64Array(capacity);
  return {
    matrix: new Float64Array(capacity * capacity),
    pivots: new Int32Array(capacity),
    throughflow: vector(),
    estimatedInflow: vector(),
    estimatedEmissions: { lifecycle: vector(), direct: vector() },
    categoryRhs: vector(),
    rhs: vector(),
    solutions: Array.from({ length: SOLUTIONS }, vector),
  };
}

/**
 * Solves one hour. Throws a RangeError on a mix with an unknown category, a flow from a node to
 * itself, a flow that is not finite, a node listed twice, or a system too close to singular to
 * solve: that takes a loop of nodes that pass on nearly all they import and generate less than
 * 1e-12 of what flows through them, which consistent data never gives (every solved node
 * generates, so the system always has one solution).
 */
export function traceHour(graph: HourGraph, workspace = new TraceWorkspace()): HourTrace {
  const seen = new Set<string>();
  const nodes: HourNode[] = [];
  const generation: number[] = [];
  for (const node of graph.nodes) {
    if (seen.has(node.id)) throw new RangeError(`node ${node.id} is listed twice`);
    seen.add(node.id);
    if (!node.complete) continue;
    const total = totalOf(node.generation);
    if (!(total > 0)) continue;
    nodes.push(node);
    generation.push(total);
  }
  const size = nodes.length;
  const index = new Map<string, number>();
  for (let i = 0; i < size; i++) index.set(nodes[i]!.id, i);
  const borders: Borders[] = nodes.map(() => ({ imports: [], exports: [], estimated: [] }));
  for (const link of netLinks(graph.flows)) {
    const from = index.get(link.from);
    const to = index.get(link.to);
    if (from !== undefined && link.estimated) borders[from]!.estimated.push(link.to);
    if (to !== undefined && link.estimated) borders[to]!.estimated.push(link.from);
    if (link.mwh === 0) continue;
    if (from !== undefined) borders[from]!.exports.push([link.to, link.mwh]);
    if (to !== undefined) borders[to]!.imports.push([link.from, link.mwh]);
  }
  if (size === 0) return { ts: graph.ts, solved: new Map() };

  // Each row divided by T[i], so the diagonal is 1 and a pivot is small only for a nearly
  // singular system, whatever the node's size.
  const work = workspace.reserve(size);
  const { matrix, throughflow, estimatedInflow, estimatedEmissions } = work;
  matrix.fill(0, 0, size * size);
  estimatedInflow.fill(0, 0, size);
  for (const basis of BASES) estimatedEmissions[basis].fill(0, 0, size);
  // Each unsolved neighbour's intensity, once per hour however many nodes it exports to.
  const intensities = new Map<string, Readonly<Record<Basis, number>>>();
  for (let i = 0; i < size; i++) {
    const imports = borders[i]!.imports;
    let imported = 0;
    // Indexed loops here and below: the hottest code of a re-solve allocates no iterator.
    for (let k = 0; k < imports.length; k++) imported += imports[k]![1];
    const through = generation[i]! + imported;
    throughflow[i] = through;
    matrix[i * size + i] = 1;
    for (let k = 0; k < imports.length; k++) {
      const [neighbour, mwh] = imports[k]!;
      const j = index.get(neighbour);
      if (j !== undefined) {
        matrix[i * size + j] = -mwh / through;
        continue;
      }
      let intensity = intensities.get(neighbour);
      if (intensity === undefined) {
        intensity = estimateIntensity(graph.estimates.get(neighbour) ?? { kind: 'other' });
        intensities.set(neighbour, intensity);
      }
      estimatedInflow[i]! += mwh / through;
      for (let b = 0; b < BASES.length; b++) {
        const basis = BASES[b]!;
        estimatedEmissions[basis][i]! += (mwh * intensity[basis]) / through;
      }
    }
  }
  const factored = factorLuInPlace(matrix, size, work.pivots);
  // The k-th solution of the hour, into the workspace's k-th vector.
  let solutions = 0;
  const solve = (rhs: Float64Array): Float64Array => {
    const x = work.solutions[solutions++]!;
    for (let i = 0; i < size; i++) work.rhs[i] = rhs[i]!;
    if (!factored || !solveLuInto(matrix, work.pivots, size, work.rhs, x)) {
      throw new RangeError(`flow tracing: singular system at ${graph.ts}`);
    }
    return x;
  };

  // m[., f] per traced category, in the order of TRACED_CATEGORIES; undefined: 0 everywhere.
  const shares: (Float64Array | undefined)[] = [];
  const rhs = work.categoryRhs;
  for (let c = 0; c < CATEGORIES.length; c++) {
    const category = CATEGORIES[c]!;
    let any = false;
    for (let i = 0; i < size; i++) {
      rhs[i] = (nodes[i]!.generation[category] ?? 0) / throughflow[i]!;
      if (rhs[i] !== 0) any = true;
    }
    shares.push(any ? solve(rhs) : undefined);
  }
  // Emissions traced per MWh through each node, from the imports of unsolved neighbours.
  let tracedEmissions: Record<Basis, Float64Array> | undefined;
  let anyEstimated = false;
  for (let i = 0; i < size; i++) if (estimatedInflow[i] !== 0) anyEstimated = true;
  if (anyEstimated) {
    shares.push(solve(estimatedInflow));
    tracedEmissions = {
      lifecycle: solve(estimatedEmissions.lifecycle),
      direct: solve(estimatedEmissions.direct),
    };
  }

  const solved = new Map<string, TracedNode>();
  for (let i = 0; i < size; i++) {
    const node = nodes[i]!;
    const { imports, exports, estimated } = borders[i]!;
    let exportsMwh = 0;
    let exportsToUnsolvedMwh = 0;
    for (let k = 0; k < exports.length; k++) {
      const [neighbour, mwh] = exports[k]!;
      exportsMwh += mwh;
      if (!index.has(neighbour)) exportsToUnsolvedMwh += mwh;
    }
    const consumptionMwh = throughflow[i]! - exportsMwh;
    const mix: Partial<Record<TracedCategory, number>> = {};
    const consumption: Partial<Record<TracedCategory, number>> = {};
    let totalShare = 0;
    for (let c = 0; c < TRACED_CATEGORIES.length; c++) {
      const category = TRACED_CATEGORIES[c]!;
      const share = shares[c]?.[i] ?? 0;
      if (share === 0 && node.generation[category] === undefined) continue;
      mix[category] = share;
      consumption[category] = share * consumptionMwh;
      totalShare += share;
    }
    const estimatedShare = mix[IMPORTED_ESTIMATED] ?? 0;
    const intensity = {} as Record<Basis, number>;
    const estimatedFactor = {} as Record<Basis, number>;
    for (let b = 0; b < BASES.length; b++) {
      const basis = BASES[b]!;
      let value = 0;
      for (let c = 0; c < CATEGORIES.length; c++) {
        const category = CATEGORIES[c]!;
        value += (mix[category] ?? 0) * FACTORS[basis][category].value;
      }
      const traced = tracedEmissions?.[basis][i] ?? 0;
      intensity[basis] = value + traced;
      if (estimatedShare > 0) estimatedFactor[basis] = traced / estimatedShare;
    }
    const { renewablePct, lowCarbonPct } = cleanShares(mix, TRACED_CATEGORIES);
    solved.set(node.id, {
      id: node.id,
      mix,
      generationMwh: generation[i]!,
      throughflowMwh: throughflow[i]!,
      exportsMwh,
      exportsToUnsolvedMwh,
      consumptionMwh,
      consumption,
      imports: byNeighbour(imports),
      exports: byNeighbour(exports),
      intensity,
      estimatedFactor: estimatedShare > 0 ? estimatedFactor : null,
      estimatedPct: (100 * estimatedShare) / totalShare,
      estimatedBorders: sortInPlace(estimated, (name) => name),
      renewablePct,
      lowCarbonPct,
    });
  }
  return { ts: graph.ts, solved };
}

/** MWh per neighbour, keyed in sorted order: rows store the same text whatever the flows' order. */
function byNeighbour(flows: [neighbour: string, mwh: number][]): Record<string, number> {
  sortInPlace(flows, ([neighbour]) => neighbour);
  const record: Record<string, number> = {};
  for (let k = 0; k < flows.length; k++) record[flows[k]![0]] = flows[k]![1];
  return record;
}

/**
 * `items` sorted by their distinct names, in place, by insertion: a node has a few neighbours,
 * and Array.prototype.sort allocates its work space even for those, thousands of times an hour.
 */
function sortInPlace<T>(items: T[], nameOf: (item: T) => string): T[] {
  for (let k = 1; k < items.length; k++) {
    const item = items[k]!;
    const name = nameOf(item);
    let j = k - 1;
    for (; j >= 0 && nameOf(items[j]!) > name; j--) items[j + 1] = items[j]!;
    items[j + 1] = item;
  }
  return items;
}
