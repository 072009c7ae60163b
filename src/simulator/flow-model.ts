import { EUROPE_BORDERS, EUROPE_NODES } from '../core/grid-graph/europe.js';
import type { GraphNode } from '../core/grid-graph/graph.js';
import { US_INTERCHANGES, US_NODES } from '../core/grid-graph/us.js';
import { computeDemand, computeMix, type MixProfile } from './mix-model.js';
import { hashString, NOISE_CHANNEL, smoothNoise } from './noise.js';
import { EUROPE_EXTRA_PROFILES, US_EXTRA_PROFILES } from './node-profiles.js';
import { EUROPE_PROFILES, GB_PROFILE, US_PROFILES } from './zone-profiles.js';

/**
 * The physical flows between the simulated nodes (extensions §16). In every hour each node's net
 * position is its generation minus its load, from the same model as the mix it publishes; the
 * flows on the graph's borders are a trade on every border (smooth noise, either way) plus the
 * least-squares correction that balances every node (`generation - exports + imports = load`),
 * a DC-power-flow-like distribution:
 *
 *     minimise sum over borders of correction² / weight, subject to every node's balance
 *     => correction(a -> b) = weight * (potential[a] - potential[b]),
 *        Laplacian * potential = net position - what the trade already takes out
 *
 * Boundary nodes (Türkiye, Ukraine, Canadian and Mexican balancing authorities, ...) have no
 * mix upstream and no balance to keep: their potential is 0 and they take whatever the simulated
 * nodes do not balance among themselves (the rest of the interconnected world). The mix model
 * balances no zone against its neighbours (a sunny noon leaves Europe with a surplus of tens of
 * GW), so flows towards boundary nodes are often far larger than real ones.
 *
 * A border's weight is the smaller of its two nodes' sizes: a small node's borders carry less.
 * Everything is a pure function of (seed, hour); the solved days are memoised (bounded), so the
 * order of requests changes nothing.
 */

export type FlowGraphName = 'europe' | 'us';

/** Generation and load of one simulated node in one hour (MW, the hour's mean). */
export interface NodeBalance {
  /** Every fuel, storage charging negative (GB: without NESO's imports). */
  readonly generation: number;
  readonly load: number;
}

interface SimulatedNode {
  readonly code: string;
  /** Null for a boundary node. */
  readonly profile: MixProfile | null;
  /** Samples per hour of the mix as published (PT15M: 4, NESO's half hours: 2). */
  readonly samplesPerHour: number;
  /** The fuels that count as the node's own generation. */
  readonly generationFuels: readonly number[];
  /** Rough size in MW, for the weights. */
  readonly sizeMw: number;
}

interface FlowModel {
  readonly nodes: readonly SimulatedNode[];
  /** Node indexes, a -> b positive; `key` seeds the border's trade. */
  readonly borders: readonly {
    readonly a: number;
    readonly b: number;
    readonly weight: number;
    readonly key: number;
  }[];
  /** The simulated nodes' indexes, in the order of the Laplacian's rows. */
  readonly interior: readonly number[];
  /** Row of each node in the Laplacian, -1 for a boundary node. */
  readonly row: Int32Array;
  /** Lower-triangular Cholesky factor of the Laplacian, row-major n x n. */
  readonly factor: Float64Array;
  readonly solvedDays: Map<string, Float64Array>;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
// Solved days kept per graph: a year-long request (the platform's limit) and some more.
const SOLVED_DAYS_KEPT = 400;
// Trade on a border: up to this share of its weight, a new direction every few hours.
const TRADE_SHARE = 0.15;
const TRADE_HOURS = 7;

/** Sizes of the boundary nodes (MW), for the weights of their borders only. */
const BOUNDARY_SIZE_MW: Readonly<Record<string, number>> = {
  AL: 800,
  BY: 4000,
  MT: 300,
  RU: 100000,
  'RU-KGD': 500,
  TR: 35000,
  UA: 15000,
  'FR-COR': 250,
  AESO: 10000,
  BCHA: 8000,
  HQT: 20000,
  IESO: 15000,
  MHEB: 3000,
  NBSO: 2000,
  SPC: 3000,
  CEN: 40000,
};

/**
 * The simulated nodes of a graph: its zones and extra nodes with a profile, its boundary nodes;
 * a node without a profile that is no boundary node (a balancing authority retired before 2025)
 * is left out with its borders.
 */
function simulatedNodes(
  nodes: readonly GraphNode[],
  profiles: readonly MixProfile[],
): SimulatedNode[] {
  const byCode = new Map(profiles.map((profile) => [profile.zone, profile]));
  return nodes.flatMap((node): SimulatedNode[] => {
    if (node.role === 'boundary') {
      const sizeMw = BOUNDARY_SIZE_MW[node.code];
      if (sizeMw === undefined) throw new Error(`flow model: no size for ${node.code}`);
      return [{ code: node.code, profile: null, samplesPerHour: 1, generationFuels: [], sizeMw }];
    }
    const profile = byCode.get(node.code);
    if (!profile) return [];
    const resolution = 'resolution' in profile ? profile.resolution : undefined;
    return [
      {
        code: node.code,
        profile,
        samplesPerHour: profile === GB_PROFILE ? 2 : resolution === 'PT15M' ? 4 : 1,
        generationFuels: profile.fuels.flatMap((fuel, index) =>
          fuel.code.startsWith('imports') ? [] : [index],
        ),
        sizeMw: profile.meanOutputMw,
      },
    ];
  });
}

function buildModel(
  nodes: readonly SimulatedNode[],
  pairs: readonly (readonly [string, string])[],
): FlowModel {
  const index = new Map(nodes.map((node, i) => [node.code, i]));
  const borders = pairs.flatMap(([a, b]) => {
    const ia = index.get(a);
    const ib = index.get(b);
    if (ia === undefined || ib === undefined) return [];
    const weight = Math.min(
      (nodes[ia] as SimulatedNode).sizeMw,
      (nodes[ib] as SimulatedNode).sizeMw,
    );
    return [{ a: ia, b: ib, weight, key: hashString(`${a} ${b}`) }];
  });
  const interior = nodes.flatMap((node, i) => (node.profile ? [i] : []));
  const row = new Int32Array(nodes.length).fill(-1);
  interior.forEach((node, r) => (row[node] = r));
  const n = interior.length;
  const laplacian = new Float64Array(n * n);
  for (const { a, b, weight } of borders) {
    const ra = row[a] as number;
    const rb = row[b] as number;
    if (ra >= 0) addAt(laplacian, ra * n + ra, weight);
    if (rb >= 0) addAt(laplacian, rb * n + rb, weight);
    if (ra >= 0 && rb >= 0) {
      addAt(laplacian, ra * n + rb, -weight);
      addAt(laplacian, rb * n + ra, -weight);
    }
  }
  return {
    nodes,
    borders,
    interior,
    row,
    factor: cholesky(laplacian, n, (r) => (nodes[interior[r] as number] as SimulatedNode).code),
    solvedDays: new Map(),
  };
}

function addAt(values: Float64Array, index: number, amount: number): void {
  values[index] = (values[index] as number) + amount;
}

/**
 * L = F Fᵀ. The Laplacian is positive definite exactly when every group of connected simulated
 * nodes borders a boundary node; a group that does not could not balance, which is a graph error.
 */
function cholesky(matrix: Float64Array, n: number, codeOf: (row: number) => string): Float64Array {
  const factor = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let sum = matrix[i * n + j] as number;
      for (let k = 0; k < j; k++)
        sum -= (factor[i * n + k] as number) * (factor[j * n + k] as number);
      if (i === j) {
        if (!(sum > 1e-9)) throw new Error(`flow model: ${codeOf(i)} reaches no boundary node`);
        factor[i * n + i] = Math.sqrt(sum);
      } else {
        factor[i * n + j] = sum / (factor[j * n + j] as number);
      }
    }
  }
  return factor;
}

/** Solves F Fᵀ x = rhs in place. */
function solveInPlace(factor: Float64Array, n: number, rhs: Float64Array): void {
  for (let i = 0; i < n; i++) {
    let sum = rhs[i] as number;
    for (let k = 0; k < i; k++) sum -= (factor[i * n + k] as number) * (rhs[k] as number);
    rhs[i] = sum / (factor[i * n + i] as number);
  }
  for (let i = n - 1; i >= 0; i--) {
    let sum = rhs[i] as number;
    for (let k = i + 1; k < n; k++) sum -= (factor[k * n + i] as number) * (rhs[k] as number);
    rhs[i] = sum / (factor[i * n + i] as number);
  }
}

const MODELS: Readonly<Record<FlowGraphName, FlowModel>> = {
  europe: buildModel(
    simulatedNodes(EUROPE_NODES, [...EUROPE_PROFILES, GB_PROFILE, ...EUROPE_EXTRA_PROFILES]),
    EUROPE_BORDERS.map(({ a, b }) => [a, b] as const),
  ),
  us: buildModel(simulatedNodes(US_NODES, [...US_PROFILES, ...US_EXTRA_PROFILES]), US_INTERCHANGES),
};

/** Generation and load of every simulated node over `hours` hours from `startMs`. */
function hourlyBalances(
  model: FlowModel,
  seed: number,
  startMs: number,
  hours: number,
): { generation: Float64Array; load: Float64Array }[] {
  return model.interior.map((nodeIndex) => {
    const { profile, samplesPerHour, generationFuels } = model.nodes[nodeIndex] as SimulatedNode;
    const samples = hours * samplesPerHour;
    const stepMs = HOUR_MS / samplesPerHour;
    const mix = computeMix(profile as MixProfile, seed, startMs, stepMs, samples);
    const demand = computeDemand(profile as MixProfile, seed, startMs, stepMs, samples);
    const generation = new Float64Array(hours);
    const load = new Float64Array(hours);
    for (let i = 0; i < samples; i++) {
      const hour = Math.floor(i / samplesPerHour);
      for (const fuel of generationFuels) addAt(generation, hour, mix[fuel]?.[i] as number);
      addAt(load, hour, demand[i] as number);
    }
    for (let hour = 0; hour < hours; hour++) {
      generation[hour] = (generation[hour] as number) / samplesPerHour;
      load[hour] = (load[hour] as number) / samplesPerHour;
    }
    return { generation, load };
  });
}

/**
 * The net flow a -> b of every border in every hour of one UTC day, at `hour * borders + border`:
 * a trade on every border (up to TRADE_SHARE of its weight either way, moving over hours), plus
 * the least-squares flows that balance every simulated node given that trade. Without the trade
 * most flows would be 0: the mix model meets each node's load with its own plants whenever it
 * can, so generation equals load in most hours.
 */
function solvedDay(model: FlowModel, seed: number, day: number): Float64Array {
  const key = `${seed}:${day}`;
  const cached = model.solvedDays.get(key);
  if (cached) {
    // Least recently used goes first.
    model.solvedDays.delete(key);
    model.solvedDays.set(key, cached);
    return cached;
  }
  const balances = hourlyBalances(model, seed, day * DAY_MS, 24);
  const n = model.interior.length;
  const count = model.borders.length;
  const flows = new Float64Array(24 * count);
  const trade = new Float64Array(count);
  const potential = new Float64Array(n);
  for (let hour = 0; hour < 24; hour++) {
    balances.forEach(({ generation, load }, r) => {
      potential[r] = (generation[hour] as number) - (load[hour] as number);
    });
    // What the trade already takes out of each node is left to the least-squares part.
    const hourIndex = day * 24 + hour;
    model.borders.forEach(({ a, b, weight, key }, border) => {
      const swing = 2 * smoothNoise(seed, key, NOISE_CHANNEL.trade, hourIndex / TRADE_HOURS) - 1;
      const mw = weight * TRADE_SHARE * swing;
      trade[border] = mw;
      const ra = model.row[a] as number;
      const rb = model.row[b] as number;
      if (ra >= 0) addAt(potential, ra, -mw);
      if (rb >= 0) addAt(potential, rb, mw);
    });
    solveInPlace(model.factor, n, potential);
    const at = (node: number) => {
      const r = model.row[node] as number;
      return r < 0 ? 0 : (potential[r] as number);
    };
    model.borders.forEach(({ a, b, weight }, border) => {
      flows[hour * count + border] = (trade[border] as number) + weight * (at(a) - at(b));
    });
  }
  model.solvedDays.set(key, flows);
  if (model.solvedDays.size > SOLVED_DAYS_KEPT) {
    model.solvedDays.delete(model.solvedDays.keys().next().value as string);
  }
  return flows;
}

/** A simulated border: its two nodes by code, positive flows going from `a` to `b`. */
export interface SimulatedBorder {
  readonly a: string;
  readonly b: string;
}

/** The borders whose flows `netFlows` gives, in its order (pairs with a node not simulated left out). */
export function simulatedBorders(graph: FlowGraphName): readonly SimulatedBorder[] {
  const model = MODELS[graph];
  return model.borders.map(({ a, b }) => ({
    a: (model.nodes[a] as SimulatedNode).code,
    b: (model.nodes[b] as SimulatedNode).code,
  }));
}

/**
 * The net flow (MW, mean of the hour starting `hourStartMs`) of every simulated border, from
 * `a` to `b`, in the order of `simulatedBorders`. Read-only: shared with later calls.
 */
export function netFlows(graph: FlowGraphName, seed: number, hourStartMs: number): Float64Array {
  const model = MODELS[graph];
  const day = Math.floor(hourStartMs / DAY_MS);
  const hour = Math.floor((hourStartMs - day * DAY_MS) / HOUR_MS);
  const count = model.borders.length;
  return solvedDay(model, seed, day).subarray(hour * count, (hour + 1) * count);
}

/**
 * Generation and load of every simulated node (boundary nodes have none) in the hour starting
 * `hourStartMs`: what the flows balance.
 */
export function nodeBalances(
  graph: FlowGraphName,
  seed: number,
  hourStartMs: number,
): ReadonlyMap<string, NodeBalance> {
  const model = MODELS[graph];
  const balances = hourlyBalances(model, seed, hourStartMs, 1);
  return new Map(
    model.interior.map((node, r) => {
      const { generation, load } = balances[r] as (typeof balances)[number];
      return [
        (model.nodes[node] as SimulatedNode).code,
        { generation: generation[0] as number, load: load[0] as number },
      ];
    }),
  );
}
