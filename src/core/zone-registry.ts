/**
 * The served zones (extensions §16): by default exactly the 45 zones of the contract; with
 * `ZONES=all`, also every extra node of the two flow graphs (`EE`, `SK`, `US-BPAT`, ...) whose
 * mix was complete at least once in the last 7 days, listed after the 45. Which nodes those are is
 * read from the store (read/served-zones.ts); this is the pure part: the candidates, the rule and
 * the lookups every reader of a served zone goes through.
 */
import { extraNodeZones } from './grid-graph/graph.js';
import { EUROPE_NODES } from './grid-graph/europe.js';
import { US_NODES } from './grid-graph/us.js';
import { HOUR } from './time.js';
import { ZONES, type Zone } from './zones.js';

/** `ZONES`: the 45 zones of the contract (the default), or every node with recent data too. */
export const ZONES_MODES = ['contract', 'all'] as const;
export type ZonesMode = (typeof ZONES_MODES)[number];

/** An extra node is served while its newest complete mix is at most this old. */
const EXTRA_NODE_RECENT_HOURS = 7 * 24;

/**
 * The extra nodes of both graphs as zones of the source that publishes their generation, in the
 * order they are listed after the 45: Europe's (ENTSO-E A75), then the US balancing authorities
 * (EIA-930).
 */
export const EXTRA_ZONES: readonly Zone[] = Object.freeze([
  ...extraNodeZones(EUROPE_NODES, 'europe-tso'),
  ...extraNodeZones(US_NODES, 'us-agency'),
]);

/** The zones served at one time, and the one lookup of a zone by its code. */
export class ZoneRegistry {
  private readonly byCode: ReadonlyMap<string, Zone>;
  private readonly order: ReadonlyMap<string, number>;

  /** `zones`: in the order of `/v1/zones`. */
  constructor(readonly zones: readonly Zone[]) {
    this.byCode = new Map(zones.map((zone) => [zone.code, zone]));
    this.order = new Map(zones.map((zone, index) => [zone.code, index]));
  }

  /** The zone a code names, the way the API accepts it: case-insensitive, trimmed. */
  find(input: string): Zone | undefined {
    return this.byCode.get(input.trim().toUpperCase());
  }

  /** Whether `code` (exactly as stored) is a served zone. */
  has(code: string): boolean {
    return this.byCode.has(code);
  }

  /** The place of a served zone in `/v1/zones`, or undefined for a code that is not served. */
  indexOf(code: string): number | undefined {
    return this.order.get(code);
  }

  /** Whether both serve the same zones in the same order. */
  sameAs(other: ZoneRegistry): boolean {
    return (
      other.zones.length === this.zones.length &&
      other.zones.every((zone, index) => zone === this.zones[index])
    );
  }
}

/** The 45 zones of the contract: what every server serves by default. */
export const CONTRACT_REGISTRY = new ZoneRegistry(ZONES);

/** Every zone a server in `mode` may ever serve: what it holds in memory and follows. */
export const servableZones = (mode: ZonesMode): readonly Zone[] =>
  mode === 'all' ? [...ZONES, ...EXTRA_ZONES] : ZONES;

/**
 * The registry of `ZONES=all` at `now` (epoch seconds): the 45, then each extra node with a
 * complete mix at most EXTRA_NODE_RECENT_HOURS old. `completeAt`: the ts (epoch seconds) of the
 * newest complete mix of each node that has one.
 */
export function registryOfAll(completeAt: ReadonlyMap<string, number>, now: number): ZoneRegistry {
  const since = now - EXTRA_NODE_RECENT_HOURS * HOUR;
  return new ZoneRegistry([
    ...ZONES,
    ...EXTRA_ZONES.filter((zone) => (completeAt.get(zone.code) ?? -Infinity) >= since),
  ]);
}
