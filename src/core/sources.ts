/**
 * The one table of per-source facts (docs/upstreams.md): what each upstream publishes, how
 * often, how late, what its default value is and the forecasts it issues.
 */
import { type CodeTable, EIA_FUEL_TYPES, NESO_FUELS, PSR_TYPES } from './production-types.js';

export interface SourceInfo {
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
  /** The upstream's production codes and what each is booked as (`/v1/factors` lists them). */
  readonly codes: CodeTable;
  /** How long after an interval its value is usually published (issue 12; docs/forecast.md). */
  readonly publicationLagSeconds: number;
  /**
   * The upstream forecasts the source publishes, each stored as a kind `<source>:<quantity>`
   * (intensities in gCO2eq/kWh, the rest in MW, the mean over the interval), keyed by the name
   * its adapter reads it under.
   */
  readonly forecastKinds: Readonly<Record<string, string>>;
  /**
   * The stored forecasts each model input is read from (core/forecast/zone-state.ts
   * `UpstreamInputs`), by input.
   */
  readonly modelInputs: Readonly<Record<string, string>>;
}

/** One upstream as the core knows it: its facts and its zones. */
interface SourceFacts extends SourceInfo {
  readonly resolutionMin: 60 | 30;
  /** `[code, name, upstream id]`, in the order of the zone table of docs/api.md. */
  readonly zones: readonly (readonly [code: string, name: string, upstreamId: string])[];
  /** The forecast documents a request names by type (ENTSO-E), in the order they are fetched. */
  readonly forecastDocuments?: readonly string[];
}

/**
 * The upstreams, one entry each, in the order of the zone table: the one table of per-source
 * facts, from which the zone registry (zones.ts), the forecast kinds (reading.ts), the forecast
 * inputs and the adapters' kinds derive. How each is configured and fetched is its entry in
 * src/sources/registry.ts, under the same id; the facts stay here so that the core needs nothing
 * outside itself.
 */
const SOURCE_FACTS = {
  'europe-tso': {
    staleAfterHours: 8,
    historyStart: '2024-08-01T00:00:00Z',
    upstreamName: 'ENTSO-E Transparency Platform',
    defaultValue: 'lifecycle',
    mixUnit: 'MWh',
    codes: PSR_TYPES,
    publicationLagSeconds: 3 * 3600,
    // Day-ahead (processType A01): wind (A69 B18+B19), solar (A69 B16), total load (A65), total
    // scheduled generation (A71, the in-series only); by the adapter's quantity names.
    forecastKinds: {
      wind: 'europe-tso:wind',
      solar: 'europe-tso:solar',
      load: 'europe-tso:load',
      generation: 'europe-tso:generation',
    },
    modelInputs: {
      wind: 'europe-tso:wind',
      solar: 'europe-tso:solar',
      load: 'europe-tso:load',
      generation: 'europe-tso:generation',
    },
    forecastDocuments: ['A69', 'A65', 'A71'],
    resolutionMin: 60,
    // EIC codes are exactly 16 characters and the dashes are significant: copied, not retyped.
    zones: [
      // DE is the DE-LU bidding zone, as docs/method.md pins it.
      ['DE', 'Germany (DE-LU bidding zone)', '10Y1001A1001A82H'],
      ['FR', 'France', '10YFR-RTE------C'],
      ['ES', 'Spain', '10YES-REE------0'],
      ['PT', 'Portugal', '10YPT-REN------W'],
      ['IT-NORD', 'Italy North', '10Y1001A1001A73I'],
      ['IT-CNOR', 'Italy Centre-North', '10Y1001A1001A70O'],
      ['IT-CSUD', 'Italy Centre-South', '10Y1001A1001A71M'],
      ['IT-SUD', 'Italy South', '10Y1001A1001A788'],
      ['IT-CALA', 'Italy Calabria', '10Y1001C--00096J'],
      ['IT-SICI', 'Italy Sicily', '10Y1001A1001A75E'],
      ['IT-SARD', 'Italy Sardinia', '10Y1001A1001A74G'],
      ['NL', 'Netherlands', '10YNL----------L'],
      ['BE', 'Belgium', '10YBE----------2'],
      ['AT', 'Austria', '10YAT-APG------L'],
      ['CH', 'Switzerland', '10YCH-SWISSGRIDZ'],
      ['PL', 'Poland', '10YPL-AREA-----S'],
      ['CZ', 'Czech Republic', '10YCZ-CEPS-----N'],
      ['DK-1', 'Denmark West (DK1)', '10YDK-1--------W'],
      ['DK-2', 'Denmark East (DK2)', '10YDK-2--------M'],
      ['SE-1', 'Sweden SE1 (Luleå)', '10Y1001A1001A44P'],
      ['SE-2', 'Sweden SE2 (Sundsvall)', '10Y1001A1001A45N'],
      ['SE-3', 'Sweden SE3 (Stockholm)', '10Y1001A1001A46L'],
      ['SE-4', 'Sweden SE4 (Malmö)', '10Y1001A1001A47J'],
      ['NO-1', 'Norway NO1 (Oslo)', '10YNO-1--------2'],
      ['NO-2', 'Norway NO2 (Kristiansand)', '10YNO-2--------T'],
      ['NO-3', 'Norway NO3 (Trondheim)', '10YNO-3--------J'],
      ['NO-4', 'Norway NO4 (Tromsø)', '10YNO-4--------9'],
      ['NO-5', 'Norway NO5 (Bergen)', '10Y1001A1001A48H'],
      ['FI', 'Finland', '10YFI-1--------U'],
      // IE is the all-island Single Electricity Market bidding zone, as docs/method.md pins it.
      ['IE', 'Ireland (all-island SEM)', '10Y1001A1001A59C'],
      ['GR', 'Greece', '10YGR-HTSO-----Y'],
      ['RO', 'Romania', '10YRO-TEL------P'],
      ['HU', 'Hungary', '10YHU-MAVIR----U'],
    ],
  },
  'us-agency': {
    staleAfterHours: 36,
    historyStart: '2019-01-01T00:00:00Z',
    upstreamName: 'US Energy Information Administration (EIA)',
    defaultValue: 'lifecycle',
    mixUnit: 'MWh',
    // CAISO's own table differs in one code (eiaFuelTypesOf); this is the one every other uses.
    codes: EIA_FUEL_TYPES,
    publicationLagSeconds: 24 * 3600,
    // region-data, by EIA's type codes: day-ahead demand forecast (DF), and demand (D) as published.
    forecastKinds: { DF: 'us-agency:demand-forecast', D: 'us-agency:demand' },
    modelInputs: { demandForecast: 'us-agency:demand-forecast' },
    resolutionMin: 60,
    zones: [
      ['US', 'United States Lower 48', 'US48'],
      ['US-PJM', 'PJM Interconnection', 'PJM'],
      ['US-MISO', 'Midcontinent ISO', 'MISO'],
      ['US-ERCOT', 'Electric Reliability Council of Texas', 'ERCO'],
      ['US-SPP', 'Southwest Power Pool', 'SWPP'],
      ['US-SOCO', 'Southern Company', 'SOCO'],
      ['US-CAISO', 'California ISO', 'CISO'],
      ['US-TVA', 'Tennessee Valley Authority', 'TVA'],
      ['US-NYISO', 'New York ISO', 'NYIS'],
      ['US-ISONE', 'ISO New England', 'ISNE'],
      ['US-BPA', 'Bonneville Power Administration', 'BPAT'],
    ],
  },
  'uk-operator': {
    staleAfterHours: 4,
    historyStart: '2017-09-01T00:00:00Z',
    upstreamName: 'NESO Carbon Intensity API',
    defaultValue: 'operator',
    mixUnit: '%',
    codes: NESO_FUELS,
    publicationLagSeconds: 3600,
    // The operator's intensity forecast of the half hour in progress (served in place of a
    // reading until the actual arrives), and its rolling 48-hour national forecast (fw48h).
    forecastKinds: { intensity: 'uk-operator:intensity', fw48h: 'uk-operator:fw48h' },
    modelInputs: { operatorForecast: 'uk-operator:fw48h' },
    resolutionMin: 30,
    zones: [['GB', 'Great Britain', 'national']],
  },
} as const satisfies Record<string, SourceFacts>;

export type SourceId = keyof typeof SOURCE_FACTS;
export const SOURCES: readonly SourceId[] = Object.freeze(Object.keys(SOURCE_FACTS) as SourceId[]);

export const SOURCE_INFO: Readonly<Record<SourceId, SourceInfo>> = SOURCE_FACTS;

/** What an upstream forecast predicts, `<source>:<quantity>`: every kind of every source. */
export type ForecastKind = {
  [
    Source in SourceId
  ]: (typeof SOURCE_FACTS)[Source]['forecastKinds'][keyof (typeof SOURCE_FACTS)[Source]['forecastKinds']];
}[SourceId];

/** The forecast kinds a source publishes, by the name its adapter reads each under. */
export const forecastKindsOf = <Source extends SourceId>(
  source: Source,
): (typeof SOURCE_FACTS)[Source]['forecastKinds'] => SOURCE_FACTS[source].forecastKinds;

/** ENTSO-E's day-ahead forecast documents (docs/upstreams.md §1.7), in the order fetched. */
export const ENTSOE_FORECAST_DOCUMENTS = SOURCE_FACTS['europe-tso'].forecastDocuments;
export type EntsoeForecastDocument = (typeof ENTSOE_FORECAST_DOCUMENTS)[number];

export const isEntsoeForecastDocument = (
  documentType: string | null,
): documentType is EntsoeForecastDocument =>
  (ENTSOE_FORECAST_DOCUMENTS as readonly (string | null)[]).includes(documentType);

/** Every forecast kind, source after source. */
export const FORECAST_KINDS: readonly ForecastKind[] = Object.freeze(
  SOURCES.flatMap((source) => Object.values(SOURCE_FACTS[source].forecastKinds)),
);

/** The zones of every source, `[code, name, upstream id]`, for the zone registry. */
export const zoneRowsOf = (source: SourceId) => SOURCE_FACTS[source].zones;

/** A source's time resolution, in minutes. */
export const resolutionOf = (source: SourceId): 60 | 30 => SOURCE_FACTS[source].resolutionMin;
