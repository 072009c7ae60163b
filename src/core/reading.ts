import type { SourceId } from './zones.js';

export const METHODS = [
  'computed:v1',
  'upstream:uk-operator:actual',
  'upstream:uk-operator:forecast',
] as const;
export type Method = (typeof METHODS)[number];

/**
 * Energy per fuel category over one interval, in MWh (for an hour: the mean MW).
 * Stored beside every computed value so it can be recomputed without refetching.
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
  /** MWh per category behind a computed value; null for upstream figures (GB). */
  readonly mix: Mix | null;
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
export const FAILURE_KINDS = [
  'timeout',
  'unreachable',
  'rate-limited',
  'server-error',
  'auth',
  'rejected',
  'invalid-payload',
  'no-data',
  /** Fetched, but the store refused the write. */
  'not-stored',
  /** The source's key is not set: no run. */
  'not-configured',
  /** The run was stopped by a signal or a shutdown; its zones are the ones not fetched. */
  'interrupted',
  /** The run reached its deadline; its zones are the ones not fetched. */
  'deadline',
  /** The source was given up for this run (refused, rate limited, down); zones not fetched. */
  'stopped',
] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

export interface IngestFailure {
  readonly kind: FailureKind;
  /** The zones it hit; for the kinds that end a run early, the zones it did not fetch. */
  readonly zones: readonly string[];
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
}
