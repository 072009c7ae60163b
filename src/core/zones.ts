/**
 * The zone registry: the 45 zones of the contract, in the order of the zone table of docs/api.md
 * (which is also the order of `/v1/zones` and of the all-zones latest response).
 * Upstream identifiers: docs/upstreams.md §1.6 (EIC codes) and §2.4 (EIA respondents).
 */

export const SOURCES = ['europe-tso', 'us-agency', 'uk-operator'] as const;
export type SourceId = (typeof SOURCES)[number];

export interface Zone {
  /** Canonical code, as served. */
  readonly code: string;
  readonly name: string;
  readonly source: SourceId;
  readonly resolutionMin: 60 | 30;
  /** ENTSO-E EIC (in_Domain), EIA respondent code, or `national` for NESO. */
  readonly upstreamId: string;
}

interface SourceInfo {
  /** Lag threshold of `/v1/status` (docs/api.md, `GET /v1/status`). */
  readonly staleAfterHours: number;
  /**
   * Start of the stated history (docs/api.md, "Data rules"). A zone with no reading counts its lag
   * from here (docs/api.md, `GET /v1/status`).
   */
  readonly historyStart: string;
  readonly upstreamName: string;
  /**
   * What a value on no basis is: the lifecycle value computed from the mix (`computed:v1`), or
   * the operator's own figure, with the mix computed on each basis beside it.
   */
  readonly defaultValue: 'lifecycle' | 'operator';
  /** Unit of the mix: energy per interval, or the share of generation the operator publishes. */
  readonly mixUnit: 'MWh' | '%';
}

export const SOURCE_INFO: Readonly<Record<SourceId, SourceInfo>> = {
  'europe-tso': {
    staleAfterHours: 8,
    historyStart: '2024-08-01T00:00:00Z',
    upstreamName: 'ENTSO-E Transparency Platform',
    defaultValue: 'lifecycle',
    mixUnit: 'MWh',
  },
  'us-agency': {
    staleAfterHours: 36,
    historyStart: '2019-01-01T00:00:00Z',
    upstreamName: 'US Energy Information Administration (EIA)',
    defaultValue: 'lifecycle',
    mixUnit: 'MWh',
  },
  'uk-operator': {
    staleAfterHours: 4,
    historyStart: '2017-09-01T00:00:00Z',
    upstreamName: 'NESO Carbon Intensity API',
    defaultValue: 'operator',
    mixUnit: '%',
  },
};

const europe = (code: string, name: string, eic: string): Zone => ({
  code,
  name,
  source: 'europe-tso',
  resolutionMin: 60,
  upstreamId: eic,
});
const us = (code: string, name: string, respondent: string): Zone => ({
  code,
  name,
  source: 'us-agency',
  resolutionMin: 60,
  upstreamId: respondent,
});

// EIC codes are exactly 16 characters and the dashes are significant: copied, not retyped.
export const ZONES: readonly Zone[] = Object.freeze([
  // DE is the DE-LU bidding zone, as docs/method.md pins it.
  europe('DE', 'Germany (DE-LU bidding zone)', '10Y1001A1001A82H'),
  europe('FR', 'France', '10YFR-RTE------C'),
  europe('ES', 'Spain', '10YES-REE------0'),
  europe('PT', 'Portugal', '10YPT-REN------W'),
  europe('IT-NORD', 'Italy North', '10Y1001A1001A73I'),
  europe('IT-CNOR', 'Italy Centre-North', '10Y1001A1001A70O'),
  europe('IT-CSUD', 'Italy Centre-South', '10Y1001A1001A71M'),
  europe('IT-SUD', 'Italy South', '10Y1001A1001A788'),
  europe('IT-CALA', 'Italy Calabria', '10Y1001C--00096J'),
  europe('IT-SICI', 'Italy Sicily', '10Y1001A1001A75E'),
  europe('IT-SARD', 'Italy Sardinia', '10Y1001A1001A74G'),
  europe('NL', 'Netherlands', '10YNL----------L'),
  europe('BE', 'Belgium', '10YBE----------2'),
  europe('AT', 'Austria', '10YAT-APG------L'),
  europe('CH', 'Switzerland', '10YCH-SWISSGRIDZ'),
  europe('PL', 'Poland', '10YPL-AREA-----S'),
  europe('CZ', 'Czech Republic', '10YCZ-CEPS-----N'),
  europe('DK-1', 'Denmark West (DK1)', '10YDK-1--------W'),
  europe('DK-2', 'Denmark East (DK2)', '10YDK-2--------M'),
  europe('SE-1', 'Sweden SE1 (Luleå)', '10Y1001A1001A44P'),
  europe('SE-2', 'Sweden SE2 (Sundsvall)', '10Y1001A1001A45N'),
  europe('SE-3', 'Sweden SE3 (Stockholm)', '10Y1001A1001A46L'),
  europe('SE-4', 'Sweden SE4 (Malmö)', '10Y1001A1001A47J'),
  europe('NO-1', 'Norway NO1 (Oslo)', '10YNO-1--------2'),
  europe('NO-2', 'Norway NO2 (Kristiansand)', '10YNO-2--------T'),
  europe('NO-3', 'Norway NO3 (Trondheim)', '10YNO-3--------J'),
  europe('NO-4', 'Norway NO4 (Tromsø)', '10YNO-4--------9'),
  europe('NO-5', 'Norway NO5 (Bergen)', '10Y1001A1001A48H'),
  europe('FI', 'Finland', '10YFI-1--------U'),
  // IE is the all-island Single Electricity Market bidding zone, as docs/method.md pins it.
  europe('IE', 'Ireland (all-island SEM)', '10Y1001A1001A59C'),
  europe('GR', 'Greece', '10YGR-HTSO-----Y'),
  europe('RO', 'Romania', '10YRO-TEL------P'),
  europe('HU', 'Hungary', '10YHU-MAVIR----U'),
  us('US', 'United States Lower 48', 'US48'),
  us('US-PJM', 'PJM Interconnection', 'PJM'),
  us('US-MISO', 'Midcontinent ISO', 'MISO'),
  us('US-ERCOT', 'Electric Reliability Council of Texas', 'ERCO'),
  us('US-SPP', 'Southwest Power Pool', 'SWPP'),
  us('US-SOCO', 'Southern Company', 'SOCO'),
  us('US-CAISO', 'California ISO', 'CISO'),
  us('US-TVA', 'Tennessee Valley Authority', 'TVA'),
  us('US-NYISO', 'New York ISO', 'NYIS'),
  us('US-ISONE', 'ISO New England', 'ISNE'),
  us('US-BPA', 'Bonneville Power Administration', 'BPAT'),
  {
    code: 'GB',
    name: 'Great Britain',
    source: 'uk-operator',
    resolutionMin: 30,
    upstreamId: 'national',
  },
]);

const byCode = new Map(ZONES.map((zone) => [zone.code, zone]));

/** Looks a zone up the way the API accepts it: case-insensitive, surrounding whitespace trimmed. */
export function findZone(input: string): Zone | undefined {
  return byCode.get(input.trim().toUpperCase());
}

export function zonesOfSource(source: SourceId): Zone[] {
  return ZONES.filter((zone) => zone.source === source);
}
