/**
 * The US flow graph (extensions §15-16): every EIA-930 balancing authority that reports
 * fuel-type data, the foreign ones its members trade with, and the pairs that report interchange.
 * Sources: docs/upstreams.md §9.5. Region aggregates (`US48`, `CAL`, `MIDA`, ...) and the country
 * totals (`CAN`, `MEX`) share EIA's namespace and are never nodes.
 */
import { directedFlows, type DirectedFlow } from '../flows.js';
import type { HourlySeries } from '../generation.js';
import type { TimeWindow } from '../time.js';
import { zonesOfSource } from '../zones.js';
import { indexNodes, nodesOf, zoneNode, type GraphNode } from './graph.js';

export const US_NODES: readonly GraphNode[] = Object.freeze([
  // US48 is the aggregate of every other: a zone, never a node.
  ...zonesOfSource('us-agency')
    .filter((zone) => zone.upstreamId !== 'US48')
    .map((zone) => zoneNode(zone.code)),
  ...nodesOf('extra', [
    ['US-AECI', 'Associated Electric Cooperative', 'AECI'],
    ['US-AVA', 'Avista', 'AVA'],
    ['US-AVRN', 'Avangrid Renewables', 'AVRN'],
    ['US-AZPS', 'Arizona Public Service', 'AZPS'],
    ['US-BANC', 'Balancing Authority of Northern California', 'BANC'],
    ['US-CHPD', 'Chelan County PUD', 'CHPD'],
    ['US-CPLE', 'Duke Energy Progress East', 'CPLE'],
    ['US-CPLW', 'Duke Energy Progress West', 'CPLW'],
    ['US-DEAA', 'Arlington Valley', 'DEAA'],
    ['US-DOPD', 'Douglas County PUD', 'DOPD'],
    ['US-DUK', 'Duke Energy Carolinas', 'DUK'],
    ['US-EPE', 'El Paso Electric', 'EPE'],
    ['US-FMPP', 'Florida Municipal Power Pool', 'FMPP'],
    ['US-FPC', 'Duke Energy Florida', 'FPC'],
    ['US-FPL', 'Florida Power & Light', 'FPL'],
    ['US-GCPD', 'Grant County PUD', 'GCPD'],
    ['US-GRID', 'Gridforce Energy Management', 'GRID'],
    ['US-GVL', 'Gainesville Regional Utilities', 'GVL'],
    ['US-GWA', 'NaturEner Power Watch', 'GWA'],
    ['US-HGMA', 'New Harquahala Generating Company', 'HGMA'],
    ['US-HST', 'City of Homestead', 'HST'],
    ['US-IID', 'Imperial Irrigation District', 'IID'],
    ['US-IPCO', 'Idaho Power', 'IPCO'],
    ['US-JEA', 'JEA', 'JEA'],
    ['US-LDWP', 'Los Angeles Department of Water and Power', 'LDWP'],
    ['US-LGEE', 'Louisville Gas and Electric and Kentucky Utilities', 'LGEE'],
    ['US-NEVP', 'Nevada Power', 'NEVP'],
    ['US-NWMT', 'NorthWestern Energy', 'NWMT'],
    ['US-PACE', 'PacifiCorp East', 'PACE'],
    ['US-PACW', 'PacifiCorp West', 'PACW'],
    ['US-PGE', 'Portland General Electric', 'PGE'],
    ['US-PNM', 'Public Service Company of New Mexico', 'PNM'],
    ['US-PSCO', 'Public Service Company of Colorado', 'PSCO'],
    ['US-PSEI', 'Puget Sound Energy', 'PSEI'],
    ['US-SC', 'South Carolina Public Service Authority', 'SC'],
    ['US-SCEG', 'Dominion Energy South Carolina', 'SCEG'],
    ['US-SCL', 'Seattle City Light', 'SCL'],
    ['US-SEC', 'Seminole Electric Cooperative', 'SEC'],
    ['US-SEPA', 'Southeastern Power Administration', 'SEPA'],
    ['US-SPA', 'Southwestern Power Administration', 'SPA'],
    ['US-SRP', 'Salt River Project', 'SRP'],
    ['US-TAL', 'City of Tallahassee', 'TAL'],
    ['US-TEC', 'Tampa Electric', 'TEC'],
    ['US-TEPC', 'Tucson Electric Power', 'TEPC'],
    ['US-TIDC', 'Turlock Irrigation District', 'TIDC'],
    ['US-TPWR', 'Tacoma Power', 'TPWR'],
    ['US-WACM', 'WAPA Rocky Mountain', 'WACM'],
    ['US-WALC', 'WAPA Desert Southwest', 'WALC'],
    ['US-WAUW', 'WAPA Upper Great Plains West', 'WAUW'],
    ['US-WWA', 'NaturEner Wind Watch', 'WWA'],
    ['US-YAD', 'Alcoa Power Generating, Yadkin Division', 'YAD'],
    // Retired since the US history starts (2019): their hours before are still traced.
    ['US-AEC', 'PowerSouth Energy Cooperative', 'AEC'],
    ['US-EEI', 'Electric Energy, Inc.', 'EEI'],
    ['US-GLHB', 'GridLiance', 'GLHB'],
    ['US-GRIF', 'Griffith Energy', 'GRIF'],
    ['US-NSB', 'Utilities Commission of New Smyrna Beach', 'NSB'],
  ]),
  // Foreign: only ever `toba`, with no generation at EIA. Under EIA's codes, which the annual
  // intensities of src/core/consumption/fallback.ts are keyed by.
  ...nodesOf('boundary', [
    ['AESO', 'Alberta Electric System Operator', 'AESO'],
    ['BCHA', 'British Columbia Hydro and Power Authority', 'BCHA'],
    ['HQT', 'Hydro-Québec TransÉnergie', 'HQT'],
    ['IESO', 'Ontario IESO', 'IESO'],
    ['MHEB', 'Manitoba Hydro', 'MHEB'],
    ['NBSO', 'New Brunswick System Operator', 'NBSO'],
    ['SPC', 'SaskPower', 'SPC'],
    ['CEN', 'Centro Nacional de Control de Energía (Mexico)', 'CEN'],
  ]),
]);

const BY_RESPONDENT: ReadonlyMap<string, GraphNode> = new Map(
  [...indexNodes(US_NODES).values()].map((node) => [node.upstreamId ?? '', node]),
);

/** The node of an EIA balancing authority code, or undefined (an aggregate, an unknown code). */
export function usNodeOf(respondent: string): GraphNode | undefined {
  return BY_RESPONDENT.get(respondent);
}

/**
 * Who reports interchange with whom, by EIA code: each balancing authority and its neighbours,
 * from every series of ten days of interchange-data in 2023 (docs/upstreams.md §9.5). A pair is
 * listed under both of its members; a foreign neighbour only under the US one.
 */
const NEIGHBOURS: Readonly<Record<string, string>> = {
  AECI: 'MISO SPA SWPP TVA',
  AVA: 'BPAT CHPD GCPD IPCO NWMT PACW',
  AVRN: 'BPAT PACW',
  AZPS: 'CISO IID LDWP PACE PNM SRP TEPC WACM WALC',
  BANC: 'BPAT CISO TIDC',
  BPAT: 'AVA AVRN BANC BCHA CHPD CISO DOPD GCPD GRID IPCO LDWP NEVP NWMT PACW PGE PSEI SCL TPWR',
  CHPD: 'AVA BPAT DOPD PSEI',
  CISO: 'AZPS BANC BPAT CEN IID LDWP NEVP PACW SRP TIDC WALC',
  CPLE: 'DUK PJM SC SCEG YAD',
  CPLW: 'DUK PJM TVA',
  DEAA: 'SRP',
  DOPD: 'BPAT CHPD',
  DUK: 'CPLE CPLW PJM SC SCEG SEPA SOCO TVA YAD',
  EPE: 'PNM SWPP TEPC',
  ERCO: 'CEN SWPP',
  FMPP: 'FPC FPL JEA TEC',
  FPC: 'FMPP FPL GVL SEC SOCO TAL TEC',
  FPL: 'FMPP FPC GVL HST JEA SEC SOCO TEC',
  GCPD: 'AVA BPAT PACW PSEI',
  GRID: 'BPAT PNM SRP',
  GRIF: 'WALC',
  GVL: 'FPC FPL',
  GWA: 'NWMT',
  HGMA: 'SRP',
  HST: 'FPL',
  IID: 'AZPS CISO WALC',
  IPCO: 'AVA BPAT NEVP NWMT PACE PACW',
  ISNE: 'HQT NBSO NYIS',
  JEA: 'FMPP FPL SEC',
  LDWP: 'AZPS BPAT CISO NEVP PACE WALC',
  LGEE: 'MISO PJM TVA',
  MISO: 'AECI IESO LGEE MHEB PJM SOCO SPA SWPP TVA',
  NEVP: 'BPAT CISO IPCO LDWP PACE WALC',
  NWMT: 'AESO AVA BPAT GWA IPCO PACE WAUW WWA',
  NYIS: 'HQT IESO ISNE PJM',
  PACE: 'AZPS IPCO LDWP NEVP NWMT WACM',
  PACW: 'AVA AVRN BPAT CISO GCPD IPCO PGE',
  PGE: 'BPAT PACW',
  PJM: 'CPLE CPLW DUK LGEE MISO NYIS TVA',
  PNM: 'AZPS EPE GRID PSCO SWPP TEPC WACM',
  PSCO: 'PNM SWPP WACM',
  PSEI: 'BPAT CHPD GCPD SCL TPWR',
  SC: 'CPLE DUK SCEG SEPA SOCO',
  SCEG: 'CPLE DUK SC SEPA SOCO',
  SCL: 'BPAT PSEI',
  SEC: 'FPC FPL JEA TEC',
  SEPA: 'DUK SC SCEG SOCO',
  SOCO: 'DUK FPC FPL MISO SC SCEG SEPA TAL TVA',
  SPA: 'AECI MISO SWPP',
  SRP: 'AZPS CISO DEAA GRID HGMA TEPC WALC',
  SWPP: 'AECI EPE ERCO MISO PNM PSCO SPA SPC WACM WAUW',
  TAL: 'FPC SOCO',
  TEC: 'FMPP FPC FPL SEC',
  TEPC: 'AZPS EPE PNM SRP WALC',
  TIDC: 'BANC CISO',
  TPWR: 'BPAT PSEI',
  TVA: 'AECI CPLW DUK LGEE MISO PJM SOCO',
  WACM: 'AZPS PACE PNM PSCO SWPP WALC WAUW',
  WALC: 'AZPS CISO GRIF IID LDWP NEVP SRP TEPC WACM',
  WAUW: 'NWMT SWPP WACM',
  WWA: 'NWMT',
  YAD: 'CPLE DUK',
};

/** The pairs of nodes that report interchange, each once, by node code. */
export const US_INTERCHANGES: readonly (readonly [string, string])[] = Object.freeze(
  [
    ...new Set(
      Object.entries(NEIGHBOURS).flatMap(([respondent, neighbours]) =>
        neighbours.split(' ').map((neighbour) => pairKey(respondent, neighbour)),
      ),
    ),
  ].map((key) => key.split(' ') as [string, string]),
);

/**
 * The two nodes of a listed pair of EIA codes, in code order, as one key. Both members of a US
 * pair report it, so each must list the other: a pair listed on one side only is a typo.
 */
function pairKey(respondent: string, neighbour: string): string {
  const nodes = [respondent, neighbour].map((code) => {
    const node = usNodeOf(code);
    if (node === undefined) throw new Error(`grid graph: ${code} is no US node`);
    return node;
  });
  const listedBack = NEIGHBOURS[neighbour]?.split(' ').includes(respondent) ?? false;
  if (nodes[1]?.role !== 'boundary' && !listedBack) {
    throw new Error(`grid graph: ${neighbour} does not list ${respondent} back`);
  }
  return nodes
    .map((node) => node.code)
    .sort()
    .join(' ');
}

const LISTED: ReadonlySet<string> = new Set(US_INTERCHANGES.map((pair) => pair.join(' ')));

/** What one interchange-data query gives the store, and what it left out or did not expect. */
export interface InterchangeFlows {
  /** Every report of a pair of nodes, as reported (DirectedFlow, `us`). */
  readonly flows: readonly DirectedFlow[];
  /** EIA codes that are no node (region aggregates, `CAN`, `MEX`, a new BA): rows left out. */
  readonly unknownCodes: readonly string[];
  /** Pairs of nodes reported but not in US_INTERCHANGES: kept, and worth adding to the list. */
  readonly unlistedPairs: readonly string[];
}

/**
 * Interchange as EIA reports it, `fromba` -> `toba` -> hour start -> MW, as flows between
 * nodes inside `window`: each reporter's value kept as it is (the netting of the two reports of
 * a pair is the solver's).
 */
export function interchangeFlows(
  reported: ReadonlyMap<string, ReadonlyMap<string, HourlySeries>>,
  window: TimeWindow,
): InterchangeFlows {
  const flows: DirectedFlow[] = [];
  const unknownCodes = new Set<string>();
  const unlistedPairs = new Set<string>();
  for (const [fromba, byToba] of reported) {
    const from = usNodeOf(fromba);
    if (from === undefined) unknownCodes.add(fromba);
    for (const [toba, series] of byToba) {
      const to = usNodeOf(toba);
      if (to === undefined) unknownCodes.add(toba);
      if (from === undefined || to === undefined) continue;
      const key = [from.code, to.code].sort().join(' ');
      if (!LISTED.has(key)) unlistedPairs.add(key);
      flows.push(...directedFlows(from.code, to.code, series, window));
    }
  }
  return {
    flows,
    unknownCodes: [...unknownCodes].sort(),
    unlistedPairs: [...unlistedPairs].sort(),
  };
}
