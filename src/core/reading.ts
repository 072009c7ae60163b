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

/** What one ingestion run of one source did, kept so every instance can report it. */
export interface IngestReport {
  readonly source: SourceId;
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly zones: number;
  readonly pointsStored: number;
  readonly incompleteHours: number;
  readonly errors: readonly string[];
  readonly quality: readonly ZoneQuality[];
}
