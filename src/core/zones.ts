/**
 * The zone registry: the 45 zones of the contract, in the order of the zone table of docs/api.md
 * (which is also the order of `/v1/zones` and of the all-zones latest response).
 * Upstream identifiers: docs/upstreams.md §1.6 (EIC codes) and §2.4 (EIA respondents).
 */
import type { Category } from './factors.js';
import { isExcluded } from './production-types.js';
import { resolutionOf, SOURCE_INFO, SOURCES, type SourceId, zoneRowsOf } from './sources.js';

// The per-source facts live in sources.ts; the zone registry hands them on to its many readers.

export interface Zone {
  /** Canonical code, as served. */
  readonly code: string;
  readonly name: string;
  readonly source: SourceId;
  readonly resolutionMin: 60 | 30;
  /** ENTSO-E EIC (in_Domain), EIA respondent code, or `national` for NESO. */
  readonly upstreamId: string;
}

export const ZONES: readonly Zone[] = Object.freeze(
  SOURCES.flatMap((source) => {
    const resolutionMin = resolutionOf(source);
    return zoneRowsOf(source).map(([code, name, upstreamId]): Zone => ({
      code,
      name,
      source,
      resolutionMin,
      upstreamId,
    }));
  }),
);

/**
 * Every source's production codes and what each is booked as: a category, or `excluded` (storage
 * and imports are in neither sum), for `/v1/factors` (docs/api.md).
 */
export function codeMappings(): Record<SourceId, Record<string, Category | 'excluded'>> {
  return Object.fromEntries(
    SOURCES.map((source) => [
      source,
      Object.fromEntries(
        [...SOURCE_INFO[source].codes].map(([code, codeClass]) => [
          code,
          isExcluded(codeClass) ? 'excluded' : codeClass,
        ]),
      ),
    ]),
  ) as Record<SourceId, Record<string, Category | 'excluded'>>;
}

const byCode = new Map(ZONES.map((zone) => [zone.code, zone]));

/** Looks a zone up the way the API accepts it: case-insensitive, surrounding whitespace trimmed. */
export function findZone(input: string): Zone | undefined {
  return byCode.get(input.trim().toUpperCase());
}

/**
 * Whether a code is a served zone. The extra nodes of the flow graphs (`EE`, `US-AECI`, ...) are
 * ingested and stored under their codes like zones, but never served (extensions §16): every
 * reader of the store that is not asked for a zone by name keeps only the codes this accepts.
 */
export function isServedZone(code: string): boolean {
  return byCode.has(code);
}

/**
 * Whether a zone has a consumption series (extensions §15): a zone whose operator publishes
 * shares, not quantities (GB), is never solved in the flow graph.
 */
export function hasConsumptionSeries(zone: Zone): boolean {
  return SOURCE_INFO[zone.source].mixUnit === 'MWh';
}

export function zonesOfSource(source: SourceId): Zone[] {
  return ZONES.filter((zone) => zone.source === source);
}

/**
 * Whether a zone's own value (no basis) is its lifecycle value computed from the mix, rather
 * than an operator's figure. An unknown code counts as computed.
 */
export function ownValueIsLifecycle(code: string): boolean {
  const zone = findZone(code);
  return zone === undefined || SOURCE_INFO[zone.source].defaultValue === 'lifecycle';
}

/** The basis a forecast asked without one is on: the operator's figure where it is the zone's own. */
export function defaultForecastBasis(code: string): 'operator' | 'lifecycle' {
  return ownValueIsLifecycle(code) ? 'lifecycle' : 'operator';
}
