/**
 * The European flow graph (extensions §15-16): every bidding zone of the interconnected ENTSO-E
 * area that borders a served zone, and the borders between them with the EIC pairs the
 * Transparency Platform publishes A11 physical flows for. Sources, row by row: docs/upstreams.md
 * §9.3. EIC codes are exactly 16 characters and their dashes are significant: copied, never
 * retyped; a served zone's comes from the zone registry.
 */
import { zonesOfSource } from '../zones.js';
import { indexNodes, nodesOf, zoneNode, type GraphNode } from './graph.js';

export const EUROPE_NODES: readonly GraphNode[] = Object.freeze([
  ...zonesOfSource('europe-tso').map((zone) => zoneNode(zone.code)),
  // NESO publishes GB's shares, ENTSO-E its borders.
  zoneNode('GB', '10YGB----------A'),
  // ENTSO-E publishes their A75 generation (Electricity Maps reads it there).
  ...nodesOf('extra', [
    ['EE', 'Estonia', '10Y1001A1001A39I'],
    ['LV', 'Latvia', '10YLV-1001A00074'],
    ['LT', 'Lithuania', '10YLT-1001A0008Q'],
    ['SK', 'Slovakia', '10YSK-SEPS-----K'],
    ['SI', 'Slovenia', '10YSI-ELES-----O'],
    ['HR', 'Croatia', '10YHR-HEP------M'],
    ['BG', 'Bulgaria', '10YCA-BULGARIA-R'],
    ['RS', 'Serbia', '10YCS-SERBIATSOV'],
    ['BA', 'Bosnia and Herzegovina', '10YBA-JPCC-----D'],
    ['ME', 'Montenegro', '10YCS-CG-TSO---S'],
    ['MK', 'North Macedonia', '10YMK-MEPSO----8'],
    ['XK', 'Kosovo', '10Y1001C--00100H'],
    ['MD', 'Moldova', '10Y1001A1001A990'],
  ]),
  // No usable hourly generation on the platform (docs/upstreams.md §9.3).
  ...nodesOf('boundary', [
    ['AL', 'Albania', '10YAL-KESH-----5'],
    ['BY', 'Belarus', '10Y1001A1001A51S'],
    ['MT', 'Malta', '10Y1001A1001A93C'],
    ['RU', 'Russia', '10Y1001A1001A49F'],
    ['RU-KGD', 'Russia Kaliningrad', '10Y1001A1001A50U'],
    ['TR', 'Türkiye', '10YTR-TEIAS----W'],
    // The IPS control area: the code every Ukrainian border is published under.
    ['UA', 'Ukraine', '10Y1001C--000182'],
    // No area of its own on the platform: its links are Italian virtual zones (SACO_AC, SACO_DC).
    ['FR-COR', 'Corsica', null],
  ]),
]);

const NODES = indexNodes(EUROPE_NODES);

/** One interconnection of a border: the EIC on each side, as A11 is queried for it. */
interface EntsoeLink {
  /** The EIC standing for the border's node `a`. */
  readonly eicA: string;
  readonly eicB: string;
}

/**
 * A border between two nodes and its links (most have one). A11 (out = eicA, in = eicB) of each
 * link gives the flow a -> b, (out = eicB, in = eicA) the flow b -> a; a border of several links
 * is their sum (src/core/flows.ts `sumLinks`).
 */
export interface EntsoeBorder {
  readonly a: string;
  readonly b: string;
  readonly links: readonly EntsoeLink[];
}

// Query codes that are no node's own (docs/upstreams.md §9.3).
const DE_COUNTRY = '10Y1001A1001A83F';
const SE_COUNTRY = '10YSE-1--------K';
const IT_COUNTRY = '10YIT-GRTN-----B';
const LU = '10YLU-CEGEDEL-NQ';
const IT_SACO_AC = '10Y1001A1001A885';
const IT_SACO_DC = '10Y1001A1001A893';

/**
 * Borders queried with both nodes' own codes, `a/b` (the DE node's is the DE-LU bidding zone's,
 * UA's the IPS control area's): Electricity Maps reads every one from the platform with these
 * codes. Borders between two boundary nodes (BY-UA) change no traced value and are left out.
 */
const OWN_CODES = `
  AL/GR AL/ME AL/RS AL/XK AT/CH AT/HU AT/SI BA/HR BA/ME BA/RS BE/FR BE/GB BE/NL BG/GR BG/MK
  BG/RO BG/RS BG/TR BY/LT CH/FR CH/IT-NORD DK-1/GB DK-1/SE-3 DK-2/SE-4 EE/FI EE/LV EE/RU ES/FR
  ES/PT FI/NO-4 FI/RU FI/SE-1 FI/SE-3 FR/IT-NORD GB/NO-2 GR/MK GR/TR HR/HU HR/RS HR/SI HU/RO
  HU/RS HU/SI HU/SK IT-CNOR/IT-CSUD IT-CNOR/IT-NORD IT-CSUD/IT-SARD IT-CSUD/IT-SUD IT-NORD/SI
  IT-SICI/MT LT/LV LT/PL LT/RU-KGD LT/SE-4 LV/RU MD/RO ME/RS ME/XK MK/RS MK/XK NL/NO-2 NO-1/NO-2
  NO-1/NO-3 NO-1/NO-5 NO-1/SE-3 NO-2/NO-5 NO-3/NO-4 NO-3/NO-5 NO-3/SE-2 NO-4/SE-1 NO-4/SE-2
  PL/SE-4 PL/SK RO/RS RS/XK SE-1/SE-2 SE-2/SE-3 SE-3/SE-4 IT-SICI/IT-CALA CH/DE DE/NL DE/NO-2
  HU/UA MD/UA PL/UA RO/UA SK/UA
`;

/**
 * Borders Electricity Maps reads from a TSO instead: listed by entsoe-py's NEIGHBOURS with these
 * codes, the platform's publication of each not checked against a recording.
 */
const OWN_CODES_UNCHECKED = `
  DE/DK-1 DE/DK-2 DK-1/DK-2 DK-1/NL DK-1/NO-2 AT/CZ CZ/DE CZ/PL CZ/SK DE/FR FR/GB GB/NL GB/IE
  IT-CALA/IT-SUD
`;

/** Borders queried with another code than a node's own, link by link: `[a, b, [eicA, eicB]...]`. */
const OTHER_CODES: readonly (readonly [string, string, ...(readonly [string, string])[]])[] = [
  // The DE node is the DE-LU bidding zone; these borders are published under Germany's code.
  ['AT', 'DE', ['10YAT-APG------L', DE_COUNTRY]],
  ['DE', 'PL', [DE_COUNTRY, '10YPL-AREA-----S']],
  ['DE', 'SE-4', [DE_COUNTRY, SE_COUNTRY]],
  // BE borders DE-LU twice: Germany (ALEGrO) and Luxembourg.
  ['BE', 'DE', ['10YBE----------2', DE_COUNTRY], ['10YBE----------2', LU]],
  // Italy's country code for the AT-IT_NORD border and the MONITA cable (landing in IT-CSUD).
  ['AT', 'IT-NORD', ['10YAT-APG------L', IT_COUNTRY]],
  ['IT-CSUD', 'ME', [IT_COUNTRY, '10YCS-CG-TSO---S']],
  // GRITA lands in IT-SUD.
  ['GR', 'IT-SUD', ['10YGR-HTSO-----Y', '10Y1001A1001A788']],
  // Corsica: SACOI (DC) to IT-CNOR and IT-SARD, SARCO (AC) to IT-SARD.
  ['FR-COR', 'IT-CNOR', [IT_SACO_DC, '10Y1001A1001A70O']],
  ['FR-COR', 'IT-SARD', [IT_SACO_AC, '10Y1001A1001A74G'], [IT_SACO_DC, '10Y1001A1001A74G']],
];

function ownCodes(list: string): EntsoeBorder[] {
  return list
    .trim()
    .split(/\s+/)
    .map((pair) => {
      const [a = '', b = ''] = pair.split('/');
      return { a, b, links: [{ eicA: eicOf(a), eicB: eicOf(b) }] };
    });
}

function eicOf(code: string): string {
  const eic = NODES.get(code)?.upstreamId;
  if (!eic) throw new Error(`grid graph: no EIC for ${code}`);
  return eic;
}

export const EUROPE_BORDERS: readonly EntsoeBorder[] = Object.freeze([
  ...ownCodes(OWN_CODES),
  ...ownCodes(OWN_CODES_UNCHECKED),
  ...OTHER_CODES.map(([a, b, ...links]) => ({
    a,
    b,
    links: links.map(([eicA, eicB]) => ({ eicA, eicB })),
  })),
]);
