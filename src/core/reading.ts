import type { Basis } from './factors.js';
import type { FlowGraphId } from './flows.js';
import type { ForecastKind, SourceId } from './sources.js';

export const METHODS = [
  'computed:v1',
  'computed:v1:direct',
  'upstream:uk-operator:actual',
  'upstream:uk-operator:forecast',
  'computed:v1:consumption',
  'computed:v1:direct:consumption',
] as const;
export type Method = (typeof METHODS)[number];

/** The method of a value computed from a mix on `basis`. */
export const BASIS_METHOD: Readonly<Record<Basis, Method>> = {
  lifecycle: 'computed:v1',
  direct: 'computed:v1:direct',
};

/**
 * Which values a request asks for (extensions §15): what a zone's plants emit per kWh they
 * generate (the contract's values, the default), or what its consumers use, traced through the
 * border flows.
 */
export const ACCOUNTINGS = ['production', 'consumption'] as const;
export type Accounting = (typeof ACCOUNTINGS)[number];

/** The basis of a consumption value asked without one: lifecycle for every zone (§15). */
export const CONSUMPTION_DEFAULT_BASIS: Basis = 'lifecycle';

/** The method of a consumption-based (flow-traced) value on `basis` (extensions §15). */
export const CONSUMPTION_METHOD: Readonly<Record<Basis, Method>> = {
  lifecycle: 'computed:v1:consumption',
  direct: 'computed:v1:direct:consumption',
};

/**
 * Generation per fuel category over one interval: MWh (for an hour, the mean MW) for Europe and
 * the US, the percentage of generation for GB (the operator publishes shares only). Stored beside
 * every computed value so it can be recomputed without refetching.
 */
export type Mix = Readonly<Record<string, number>>;

/** One interval of one zone as the store keeps it. Times are epoch seconds (UTC). */
export interface StoredReading {
  readonly zone: string;
  /** Start of the interval. */
  readonly ts: number;
  /** gCO2eq/kWh at full precision; null when nothing can be computed (no generation). */
  readonly value: number | null;
  readonly method: Method;
  /**
   * Whether the reading is published. An incomplete hour (partial mix) is kept, marked, and not
   * served (decisions.md, "Bad hours").
   */
  readonly complete: boolean;
  /** The generation behind the values; null for a GB operator figure. */
  readonly mix: Mix | null;
  /** gCO2eq/kWh from `mix` with lifecycle factors; null unless the mix is publishable. */
  readonly lifecycle: number | null;
  /** gCO2eq/kWh from `mix` with direct factors; null unless the mix is publishable. */
  readonly direct: number | null;
}

/**
 * The generation mix of one interval and its values on both bases, written apart from the
 * interval's default value where a second feed brings it (GB's generation mix).
 */
export interface StoredMix {
  readonly zone: string;
  readonly ts: number;
  readonly mix: Mix;
  readonly lifecycle: number | null;
  readonly direct: number | null;
}

// Every forecast kind, and what each predicts: sources.ts, the per-source table.

/** One upstream forecast of one interval, as issued at one time. Never mixed with actuals. */
export interface StoredForecast {
  readonly zone: string;
  /** Start of the interval forecast. */
  readonly ts: number;
  readonly kind: ForecastKind;
  /** When the forecast was issued (fetched), epoch seconds. */
  readonly issuedAt: number;
  readonly value: number;
}

/**
 * Stored forecasts of one zone and kind as columns, row `k` of each making one forecast: what the
 * forecast models read, a year of a zone's upstream forecasts at a time (typed arrays, not an
 * object a row).
 */
export interface ForecastColumns {
  /** Starts of the intervals forecast (the store gives them ascending). */
  readonly ts: Float64Array;
  /** When each was issued (the store gives an interval's ascending). */
  readonly issuedAt: Float64Array;
  readonly value: Float64Array;
}

/** A published reading, as the API serves it. */
export interface Reading {
  readonly ts: number;
  readonly value: number;
  readonly method: Method;
}

export interface ZoneReading extends Reading {
  readonly zone: string;
}

/** Quality counters of one zone within one ingestion run. */
export interface ZoneQuality {
  readonly zone: string;
  readonly pointsStored: number;
  readonly incompleteHours: number;
  readonly clampedNegatives: number;
  readonly unknownCodes: readonly string[];
}

/**
 * What went wrong in a run, in words the public status note may repeat: a closed set, because an
 * upstream's own text or URL can name an operator's internal proxy. The first eight sort one
 * zone's upstream failure (src/sources/http.ts decides which); the others are ours.
 */
export type FailureKind =
  | 'timeout'
  | 'unreachable'
  | 'rate-limited'
  | 'server-error'
  | 'auth'
  | 'rejected'
  | 'invalid-payload'
  | 'no-data'
  /** Fetched, but the store refused the write. */
  | 'not-stored'
  /** The source's key is not set: no run. */
  | 'not-configured'
  /** The run was stopped by a signal or a shutdown; its zones are the ones not fetched. */
  | 'interrupted'
  /** The run reached its deadline; its zones are the ones not fetched. */
  | 'deadline'
  /** The source was given up for this run (refused, rate limited, down); zones not fetched. */
  | 'stopped';

export interface IngestFailure {
  readonly kind: FailureKind;
  /** The zones it hit; for the kinds that end a run early, the zones it did not fetch. */
  readonly zones: readonly string[];
  /**
   * How many of the flow graph's extra nodes and borders it hit (or did not fetch): counted,
   * never named, since the note is public and the extra nodes are not served zones.
   */
  readonly graph?: GraphCount;
}

/** Extra nodes and borders of a flow graph (EIA: its one interchange query counts as a border). */
export interface GraphCount {
  readonly nodes: number;
  readonly borders: number;
}

/**
 * A run's part of its source's flow graph (extensions §15-16), when flows are on: the extra
 * nodes' generation, stored like a zone's but never served, and the borders' flows.
 */
interface GraphIngestReport extends GraphCount {
  readonly graph: FlowGraphId;
  /** `nodes`: extra nodes that answered; `nodePoints`: the readings written for them. */
  readonly nodePoints: number;
  /** `borders`: borders that answered; `flowsStored`: the flows inserted or changed. */
  readonly flowsStored: number;
}

/**
 * What one ingestion run of one source did, kept so every instance can report it. Stored as
 * JSON: fields added later are optional, so reports stored before them still read.
 */
export interface IngestReport {
  readonly source: SourceId;
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly zones: number;
  readonly pointsStored: number;
  readonly incompleteHours: number;
  /** One line per failure with its detail (URL, upstream text), credentials redacted: for operators. */
  readonly errors: readonly string[];
  readonly quality: readonly ZoneQuality[];
  /** The same failures by kind, without any upstream text: what the public note shows. */
  readonly failures?: readonly IngestFailure[];
  /** Zones whose upstream answered without a single reading for the window. */
  readonly zonesWithoutData?: readonly string[];
  /** Upstream forecasts written (forecast feeds; never readings). */
  readonly forecastsStored?: number;
  /**
   * The source's part of its flow graph. Its failures are in `errors` and `failures` with the
   * zones' (so that metrics and the status note count them), its nodes never in `zones`,
   * `quality` or the counts above, which are the served zones'.
   */
  readonly graph?: GraphIngestReport;
}
