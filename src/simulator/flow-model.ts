import { EUROPE_BORDERS, EUROPE_NODES } from '../core/grid-graph/europe.js';
import type { GraphNode } from '../core/grid-graph/graph.js';
import { US_INTERCHANGES, US_NODES } from '../core/grid-graph/us.js';
import {
  adjustedMix,
  computeMix,
  ownDispatch,
  type MixProfile,
  type OwnDispatch,
} from './mix-model.js';
import { hashString, NOISE_CHANNEL, smoothNoise } from './noise.js';
import { EUROPE_EXTRA_PROFILES, US_EXTRA_PROFILES } from './node-profiles.js';
import { EUROPE_PROFILES, GB_PROFILE, US_PROFILES } from './zone-profiles.js';

/**
 * The physical flows between the simulated nodes (extensions §16), and the dispatch that makes
 * them plausible. Every hour of a graph is one market:
 *
 * 1. Each node's plants meet its own load (mix-model.ts), which leaves a surplus where must-run
 *    plants, sun and wind exceed it (noon) and a deficit where its plants fall short (peaks).
 * 2. Each node would rather import or export a little (up to POSITION_SHARE of its size, moving
 *    over hours; the nodes' wishes sum to 0), within how far its generation can move.
 * 3. What the graph still has too much of is taken off every node's flexible generation alike
 *    (dispatchable plants down to minimum load, then curtailed sun and wind); what it lacks is
 *    added to every node's spare dispatchable capacity alike, then to the short nodes' peakers.
 *
 * Each node's published mix is its own dispatch moved by what the market gave it
 * (`publishedMix`), so its generation is its load plus its net exports and the graph's nodes
 * balance among themselves. The flows on the borders are a trade on every border (smooth noise,
 * either way) plus the least-squares correction that balances every node
 * (`generation - exports + imports = load`), a DC-power-flow-like distribution:
 *
 *     minimise sum over borders of correction² / weight, subject to every node's balance
 *     => correction(a -> b) = weight * (potential[a] - potential[b]),
 *        Laplacian * potential = net position - what the trade already takes out
 *
 * Boundary nodes (Türkiye, Ukraine, Canadian and Mexican balancing authorities, ...) have no
 * mix upstream and no balance to keep: their potential is 0 and they take what the simulated
 * nodes do not balance among themselves (only when sun and wind are curtailed to nothing), and
 * their borders' trade.
 *
 * A border's weight is the smaller of its two nodes' sizes, within LINK_MW (BOUNDARY_LINK_MW to
 * a boundary node): a small node's borders carry less.
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

/** One solved UTC day of a graph: its market, and its flows once asked (a mix needs only the market). */
interface SolvedDay {
  /** What the market moves each simulated node's generation by (MW), at `row * 24 + hour`. */
  readonly adjust: Float64Array;
  /** The net flow a -> b of every border, at `hour * borders + border`. */
  flows?: Float64Array;
}

interface FlowModel {
  readonly nodes: readonly SimulatedNode[];
  /** Each simulated node's index by code. */
  readonly index: ReadonlyMap<string, number>;
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
  readonly solvedDays: Map<string, SolvedDay>;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
// Solved days kept per graph: a year-long request (the platform's limit) and some more.
const SOLVED_DAYS_KEPT = 400;
// Trade on a border: up to this share of its weight, a new direction every few hours.
const TRADE_SHARE = 0.15;
const TRADE_HOURS = 7;
// What a node would rather import or export: up to this share of its size, over some hours.
const POSITION_SHARE = 0.12;
const POSITION_HOURS = 5;

/**
 * The most a border weighs, about its links' capacity: a border between two large nodes is a few
 * lines, not their size; one to a boundary node (a neighbour outside the graph) fewer still, so
 * that flows through the rest of the world stay what an interconnector carries.
 */
const LINK_MW = 5000;
const BOUNDARY_LINK_MW = 1000;

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
    const boundary = !(nodes[ia] as SimulatedNode).profile || !(nodes[ib] as SimulatedNode).profile;
    const weight = Math.min(
      (nodes[ia] as SimulatedNode).sizeMw,
      (nodes[ib] as SimulatedNode).sizeMw,
      boundary ? BOUNDARY_LINK_MW : LINK_MW,
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
    index,
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

/** Hourly means of every simulated node (by row), MW. */
interface HourlyBalance {
  readonly generation: Float64Array;
  readonly load: Float64Array;
  /** How far generation could fall and rise (before any adjustment). */
  readonly down: Float64Array;
  readonly up: Float64Array;
}

/** Every simulated node's own dispatch (by row) over `hours` hours from `startMs`. */
function ownDispatches(
  model: FlowModel,
  seed: number,
  startMs: number,
  hours: number,
): OwnDispatch[] {
  return model.interior.map((nodeIndex) => {
    const { profile, samplesPerHour } = model.nodes[nodeIndex] as SimulatedNode;
    const samples = hours * samplesPerHour;
    return ownDispatch(profile as MixProfile, seed, startMs, HOUR_MS / samplesPerHour, samples);
  });
}

/**
 * Generation and load of every simulated node over the hours of `dispatches`, its dispatch moved
 * by `adjust` (at `row * hours + hour`) when given.
 */
function hourlyBalances(
  model: FlowModel,
  dispatches: readonly OwnDispatch[],
  hours: number,
  adjust?: Float64Array,
): HourlyBalance[] {
  return model.interior.map((nodeIndex, r) => {
    const { samplesPerHour, generationFuels } = model.nodes[nodeIndex] as SimulatedNode;
    const own = dispatches[r] as OwnDispatch;
    const mix = adjust
      ? adjustedMix(own, (i) => adjust[r * hours + Math.floor(i / samplesPerHour)] as number)
      : own.values;
    const mean = () => new Float64Array(hours);
    const balance = { generation: mean(), load: mean(), down: mean(), up: mean() };
    for (let i = 0; i < hours * samplesPerHour; i++) {
      const hour = Math.floor(i / samplesPerHour);
      for (const fuel of generationFuels) addAt(balance.generation, hour, mix[fuel]?.[i] as number);
      addAt(balance.load, hour, own.demand[i] as number);
      addAt(balance.down, hour, own.down[i] as number);
      addAt(balance.up, hour, own.up[i] as number);
    }
    for (const series of Object.values(balance)) {
      for (let hour = 0; hour < hours; hour++) series[hour] = series[hour]! / samplesPerHour;
    }
    return balance;
  });
}

/**
 * The market of each hour (see the top of this file): what it moves each node's generation by,
 * at `row * hours + hour`, from the nodes' own dispatch.
 */
function marketAdjustments(
  model: FlowModel,
  seed: number,
  firstHour: number,
  own: readonly HourlyBalance[],
): Float64Array {
  const hours = own[0]?.generation.length ?? 0;
  const adjust = new Float64Array(own.length * hours);
  const sizes = model.interior.map((node) => (model.nodes[node] as SimulatedNode).sizeMw);
  const totalSize = sizes.reduce((sum, size) => sum + size, 0);
  const down = new Float64Array(own.length);
  const up = new Float64Array(own.length);
  for (let hour = 0; hour < hours; hour++) {
    // The nodes' wishes, summing to 0, within what each can move.
    const wishes = own.map((_, r) => {
      const code = (model.nodes[model.interior[r] as number] as SimulatedNode).code;
      const swing = smoothNoise(
        seed,
        hashString(code),
        NOISE_CHANNEL.position,
        (firstHour + hour) / POSITION_HOURS,
      );
      return (2 * swing - 1) * POSITION_SHARE * (sizes[r] as number);
    });
    const meanWish = wishes.reduce((sum, wish) => sum + wish, 0) / totalSize;
    let excess = 0;
    own.forEach((balance, r) => {
      const wish = (wishes[r] as number) - meanWish * (sizes[r] as number);
      const moved = Math.min(balance.up[hour] as number, Math.max(-balance.down[hour]!, wish));
      adjust[r * hours + hour] = moved;
      down[r] = (balance.down[hour] as number) + moved;
      up[r] = (balance.up[hour] as number) - moved;
      excess += (balance.generation[hour] as number) - (balance.load[hour] as number) + moved;
    });
    if (excess > 0) {
      // Too much: every node's flexible generation down alike.
      const totalDown = down.reduce((sum, mw) => sum + mw, 0);
      const share = totalDown > 0 ? Math.min(1, excess / totalDown) : 0;
      own.forEach((_, r) => addAt(adjust, r * hours + hour, -(down[r] as number) * share));
    } else if (excess < 0) {
      // Too little: every node's spare capacity up alike, then the short nodes' peakers.
      const totalUp = up.reduce((sum, mw) => sum + mw, 0);
      const share = totalUp > 0 ? Math.min(1, -excess / totalUp) : 0;
      own.forEach((_, r) => addAt(adjust, r * hours + hour, (up[r] as number) * share));
      const rest = -excess - totalUp * share;
      if (rest > 0) {
        const shortOf = own.map((balance, r) =>
          Math.max(0, balance.load[hour]! - balance.generation[hour]! - adjust[r * hours + hour]!),
        );
        const totalShort = shortOf.reduce((sum, mw) => sum + mw, 0);
        own.forEach((balance, r) => {
          const part =
            totalShort > 0 ? shortOf[r]! / totalShort : balance.load[hour]! / totalLoad(own, hour);
          addAt(adjust, r * hours + hour, rest * part);
        });
      }
    }
  }
  return adjust;
}

function totalLoad(balances: readonly HourlyBalance[], hour: number): number {
  return balances.reduce((sum, balance) => sum + (balance.load[hour] as number), 0);
}

/** One UTC day of a graph: the market's adjustments (see the top of this file). */
function solvedDay(model: FlowModel, seed: number, day: number): SolvedDay {
  const key = `${seed}:${day}`;
  const cached = model.solvedDays.get(key);
  if (cached) {
    // Least recently used goes first.
    model.solvedDays.delete(key);
    model.solvedDays.set(key, cached);
    return cached;
  }
  const dispatches = ownDispatches(model, seed, day * DAY_MS, 24);
  const adjust = marketAdjustments(model, seed, day * 24, hourlyBalances(model, dispatches, 24));
  const solved: SolvedDay = { adjust };
  model.solvedDays.set(key, solved);
  if (model.solvedDays.size > SOLVED_DAYS_KEPT) {
    model.solvedDays.delete(model.solvedDays.keys().next().value as string);
  }
  return solved;
}

/**
 * The net flow a -> b of every border in every hour of one UTC day: a trade on every border (up
 * to TRADE_SHARE of its weight either way, moving over hours), plus the least-squares flows that
 * balance every simulated node given that trade.
 */
function dayFlows(model: FlowModel, seed: number, day: number): Float64Array {
  const solved = solvedDay(model, seed, day);
  if (solved.flows) return solved.flows;
  const dispatches = ownDispatches(model, seed, day * DAY_MS, 24);
  const balances = hourlyBalances(model, dispatches, 24, solved.adjust);
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
  solved.flows = flows;
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
  return dayFlows(model, seed, day).subarray(hour * count, (hour + 1) * count);
}

/** The graph a zone or extra node is simulated in, with its row, if any. */
function placeOf(zone: string): { readonly model: FlowModel; readonly row: number } | undefined {
  for (const model of Object.values(MODELS)) {
    const index = model.index.get(zone);
    const row = index === undefined ? -1 : (model.row[index] as number);
    if (row >= 0) return { model, row };
  }
  return undefined;
}

/**
 * The mix a zone or node publishes (computeMix's arguments): its own dispatch moved by what its
 * graph's market gave it in each hour, so that its generation less its net exports is its load.
 */
export function publishedMix(
  profile: MixProfile,
  seed: number,
  startMs: number,
  stepMs: number,
  count: number,
): Float64Array[] {
  const place = placeOf(profile.zone);
  if (!place) return computeMix(profile, seed, startMs, stepMs, count);
  const adjust = (i: number) => {
    const hourMs = Math.floor((startMs + (i + 0.5) * stepMs) / HOUR_MS) * HOUR_MS;
    const day = Math.floor(hourMs / DAY_MS);
    const hour = (hourMs - day * DAY_MS) / HOUR_MS;
    return solvedDay(place.model, seed, day).adjust[place.row * 24 + hour] as number;
  };
  return computeMix(profile, seed, startMs, stepMs, count, adjust);
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
  const day = Math.floor(hourStartMs / DAY_MS);
  const hour = Math.floor((hourStartMs - day * DAY_MS) / HOUR_MS);
  const { adjust } = solvedDay(model, seed, day);
  const balances = hourlyBalances(
    model,
    ownDispatches(model, seed, hourStartMs, 1),
    1,
    Float64Array.from(model.interior, (_, r) => adjust[r * 24 + hour] as number),
  );
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
