import type { IngestReport, Method, Reading, StoredReading, ZoneReading } from '../core/reading.js';
import type { SourceId } from '../core/zones.js';

export interface StoreKey {
  readonly zone: string;
  readonly ts: number;
}

/** A reading written (or removed) after some data version, as caches need it. */
export interface ReadingChange {
  readonly zone: string;
  readonly ts: number;
  readonly value: number | null;
  readonly method: Method;
  /** False when the reading is no longer served: incomplete, or deleted. */
  readonly published: boolean;
}

export interface ReadingChanges {
  /** The data version these changes bring a follower to. */
  readonly version: number;
  /** In the order they were written; a later change of the same key wins. */
  readonly changes: readonly ReadingChange[];
  /** False when there were more than the limit: the follower reloads instead. */
  readonly complete: boolean;
}

/**
 * The one storage interface of gridco2. It declares only what the API, ingestion and the CLI
 * need; each backend keeps its own SQL, types and locking inside its adapter.
 * Times are epoch seconds (UTC). Only complete (published) readings are ever returned as
 * `Reading`s; incomplete ones are visible through `readStored`.
 */
export interface Store {
  /** Inserts or replaces readings keyed by (zone, ts), in one transaction. Returns rows written. */
  upsertReadings(readings: readonly StoredReading[]): Promise<number>;

  /**
   * Published readings of a zone with `fromTs <= ts < toTs`, ascending, at most `limit`.
   */
  readingsInWindow(zone: string, fromTs: number, toTs: number, limit: number): Promise<Reading[]>;

  /** The newest published reading of every zone that has one. */
  latestPerZone(): Promise<ZoneReading[]>;

  /** Every stored row of a zone in `[fromTs, toTs)`, complete or not, ascending. */
  readStored(zone: string, fromTs: number, toTs: number): Promise<StoredReading[]>;

  /** The newest stored ts of a zone (complete or not), or null; ingestion resumes from it. */
  newestStoredTs(zone: string): Promise<number | null>;

  /**
   * Removes the forecast readings of a zone other than the one at `keepTs` (null: all of them),
   * so that at most one forecast exists per zone (decisions.md, "GB forecast").
   */
  deleteForecastsExcept(zone: string, keepTs: number | null): Promise<number>;

  /**
   * Stored rows ordered by (zone, ts), starting after the key `after` (null: from the start),
   * at most `limit`. Keyset paging for whole-store jobs (recompute, migrate-store).
   */
  scanStored(after: StoreKey | null, limit: number): Promise<StoredReading[]>;

  /**
   * A counter that grows with every committed write of readings. Instances compare it to know
   * whether what they cached is still current.
   */
  dataVersion(): Promise<number>;

  /**
   * Every reading written or removed after data version `sinceVersion`, read in one consistent
   * snapshot, at most `limit` of them. Lets every instance follow the store incrementally.
   */
  changesSince(sinceVersion: number, limit: number): Promise<ReadingChanges>;

  /**
   * Calls `listener` soon after any instance commits new data, where the backend can push that
   * (PostgreSQL LISTEN/NOTIFY). Followers poll `dataVersion` as well, so a backend without push
   * (SQLite) simply leaves this out. Resolves to a function that stops listening.
   */
  subscribe?(listener: () => void): Promise<() => Promise<void>>;

  /**
   * Takes or renews the lease `name` for `holder` for `ttlMs`, measured on the store's clock.
   * Succeeds when the lease is free, expired or already held by `holder`. Lets exactly one of
   * several instances run ingestion; a holder that dies loses it when it expires.
   */
  acquireLease(name: string, holder: string, ttlMs: number): Promise<boolean>;

  /** Gives the lease up at once if `holder` holds it. */
  releaseLease(name: string, holder: string): Promise<void>;

  /** Stores the report of one ingestion run. */
  recordIngestReport(report: IngestReport): Promise<void>;

  /** The newest report of each source that has one. */
  latestIngestReports(): Promise<Partial<Record<SourceId, IngestReport>>>;

  /**
   * Marks the store, for good, as holding synthetic data from `gridco2 demo`, so that no other
   * command serves it as real or mixes real data into it (see `openStore`). Idempotent.
   */
  markSynthetic(): Promise<void>;

  /** Whether `markSynthetic` was ever called on this store. */
  isSynthetic(): Promise<boolean>;

  /** Cheap round trip used by readiness checks. Rejects when the store is unreachable. */
  ping(): Promise<void>;

  /**
   * What makes the store unfit to follow although it answers, in words for operators and
   * `/v1/status`: its file deleted or replaced under the process, writes refused (read-only).
   * Empty when there is nothing to say.
   */
  problems(): Promise<readonly string[]>;

  close(): Promise<void>;
}
