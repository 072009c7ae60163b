/**
 * How a zone is named in each API, and the one resolver of a zone name (`resolveZone`). Three
 * grammars, one per front end:
 * - `v1`: our code (`DK-1`, case-insensitive, trimmed) or a cloud region as `provider:region`
 *   (`aws:eu-central-1`); nothing else, so that /v1 answers exactly as its contract says;
 * - `em` (the Electricity Maps compatibility API): those, and an Electricity Maps key (`DK-DK1`);
 * - `ca` (the Carbon Aware SDK compatibility API): those of `em`, and a cloud region by its name
 *   alone (`westeurope`, as the SDK names locations).
 */
import { findCloudRegionByName, zoneOfCloudRegion } from './cloud-regions.js';
import { CONTRACT_REGISTRY, type ZoneRegistry } from './zone-registry.js';
import { findZone, type Zone } from './zones.js';

/**
 * Electricity Maps zone keys of our zones, for the compatibility API (docs/compat.md). Electricity Maps names bidding zones `<country>-<country><n>`
 * (`DK-DK1`, `SE-SE4`, `NO-NO1`), Italian market zones with its own short names (`IT-NO`, `IT-CNO`,
 * `IT-CSO`, `IT-SO`, `IT-SIC`, `IT-SAR`) and US balancing authorities `US-<region>-<EIA code>`
 * (`US-CAL-CISO`, `US-MIDA-PJM`). Every key below is in the copy of Electricity Maps' zone list
 * kept by thegreenwebfoundation/gaw-web-component (src/helpers/zones.js, commit 609e178); see
 * docs/compat.md for the zones whose boundaries differ from ours.
 */
const ELECTRICITY_MAPS_KEYS: Readonly<Record<string, string>> = {
  // Electricity Maps' DE is Germany alone; ours is the DE-LU bidding zone (Luxembourg is ~1%
  // of its load). Same key: that is the zone such a client means.
  DE: 'DE',
  FR: 'FR',
  ES: 'ES',
  PT: 'PT',
  'IT-NORD': 'IT-NO',
  'IT-CNOR': 'IT-CNO',
  'IT-CSUD': 'IT-CSO',
  'IT-SUD': 'IT-SO',
  'IT-SICI': 'IT-SIC',
  'IT-SARD': 'IT-SAR',
  // IT-CALA (Calabria, a market zone since 2021) has no Electricity Maps key: our code only.
  NL: 'NL',
  BE: 'BE',
  AT: 'AT',
  CH: 'CH',
  PL: 'PL',
  CZ: 'CZ',
  'DK-1': 'DK-DK1',
  'DK-2': 'DK-DK2',
  'SE-1': 'SE-SE1',
  'SE-2': 'SE-SE2',
  'SE-3': 'SE-SE3',
  'SE-4': 'SE-SE4',
  'NO-1': 'NO-NO1',
  'NO-2': 'NO-NO2',
  'NO-3': 'NO-NO3',
  'NO-4': 'NO-NO4',
  'NO-5': 'NO-NO5',
  FI: 'FI',
  // Electricity Maps' IE is Ireland alone (Northern Ireland is GB-NIR); ours is the all-island
  // market. Same key: the closest zone such a client means.
  IE: 'IE',
  GR: 'GR',
  RO: 'RO',
  HU: 'HU',
  // Electricity Maps' US is the United States; ours is the Lower 48 (EIA US48), which is where
  // all but a few percent of its load is.
  US: 'US',
  'US-PJM': 'US-MIDA-PJM',
  'US-MISO': 'US-MIDW-MISO',
  'US-ERCOT': 'US-TEX-ERCO',
  'US-SPP': 'US-CENT-SWPP',
  'US-SOCO': 'US-SE-SOCO',
  'US-CAISO': 'US-CAL-CISO',
  'US-TVA': 'US-TEN-TVA',
  'US-NYISO': 'US-NY-NYIS',
  'US-ISONE': 'US-NE-ISNE',
  'US-BPA': 'US-NW-BPAT',
  GB: 'GB',
};

/** Our zone code to its Electricity Maps key, for the zones that have one. */
export const ELECTRICITY_MAPS_KEY: ReadonlyMap<string, string> = new Map(
  Object.entries(ELECTRICITY_MAPS_KEYS),
);

const byKey = new Map(
  Object.entries(ELECTRICITY_MAPS_KEYS).map(([code, key]) => [key, findZone(code)!]),
);

/** The zone an Electricity Maps key names (case-insensitive, trimmed), if it is one of ours. */
export function zoneOfElectricityMapsKey(input: string): Zone | undefined {
  return byKey.get(input.trim().toUpperCase());
}

/** How a zone is named to Electricity Maps clients: its key, or our code where it has none. */
export function electricityMapsKeyOf(zone: Zone): string {
  return ELECTRICITY_MAPS_KEY.get(zone.code) ?? zone.code;
}

/** The key of a zone or graph node by its code (a neighbour that is not served keeps its code). */
export function electricityMapsCodeOf(code: string): string {
  return ELECTRICITY_MAPS_KEY.get(code) ?? code;
}

/**
 * Every zone served (`registry`) with the key Electricity Maps clients know it by, in the order
 * of /v1/zones.
 */
export function electricityMapsZones(
  registry: ZoneRegistry = CONTRACT_REGISTRY,
): { zone: Zone; key: string }[] {
  return registry.zones.map((zone) => ({ zone, key: electricityMapsKeyOf(zone) }));
}

/** The front end a zone name is read by, each with its grammar (see the header). */
export type ZoneGrammar = 'v1' | 'em' | 'ca';

/**
 * The zone `input` names in `grammar`, if any, among the zones served (`registry`; by default the
 * 45 of the contract). With `ZONES=all` the flow graphs' nodes are zones in every grammar, by
 * their code (extensions §16); the keys and cloud regions name zones of the 45.
 */
export function resolveZone(
  input: string,
  grammar: ZoneGrammar,
  registry: ZoneRegistry = CONTRACT_REGISTRY,
): Zone | undefined {
  if (grammar === 'v1') return registry.find(input) ?? zoneOfCloudRegion(input);
  const zone = zoneOfElectricityMapsKey(input) ?? registry.find(input) ?? zoneOfCloudRegion(input);
  if (zone || grammar === 'em') return zone;
  const region = findCloudRegionByName(input);
  return region && findZone(region.zone);
}
