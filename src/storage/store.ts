import type { ConsumptionMixPoint, ConsumptionRow } from '../core/consumption/series-row.js';
import type { Basis } from '../core/factors.js';
import type { DirectedFlow, FlowBorder, FlowGraphId } from '../core/flows.js';
import type { BacktestRun } from '../core/forecast/backtest.js';
import type {
  ForecastColumns,
  IngestReport,
  Method,
  Mix,
  Reading,
  StoredForecast,
  StoredMix,
  StoredReading,
  ZoneReading,
} from '../core/reading.js';
import type { ForecastKind, SourceId } from '../core/sources.js';
import type { WebhookStore } from './webhook-store.js';

/** What a backtest's next run resumes from, by `zone|basis`: bytes the store does not read. */
export type BacktestStates = ReadonlyMap<string, Uint8Array>;

/** Backtests a store keeps: the newest is served, a few before it are kept for comparison. */
export const BACKTESTS_KEPT = 10;

export interface StoreKey {
  readonly zone: string;
  readonly ts: number;
}

/** A reading written after some data version, as caches need it. */
export interface ReadingChange {
  readonly zone: string;
  readonly ts: number;
  readonly value: number | null;
  readonly method: Method;
  /** False when the reading is not served on the default basis (incomplete). */
  readonly published: boolean;
  /** The interval's values on each basis; null where it is not published on that basis. */
  readonly lifecycle: number | null;
  readonly direct: number | null;
  /**
   * The data version of the write that left the row so: what a follower (a stream client)
   * resumes after. Several rows share one version when they were written in one transaction.
   */
  readonly version: number;
}

/** Hours `[fromTs, toTs)` of one zone. */
export interface ZoneWindow {
  /**
   * A zone's code, or a flow graph's extra node's; in the backfilled windows also the key of a
   * border's flows, `flows:<graph>:<border>` (src/ingest/backfill-graph.ts).
   */
  readonly zone: string;
  readonly fromTs: number;
  readonly toTs: number;
}

/**
 * What one fetch writes: one backfill chunk, or one zone (one request, where zones share it) of
 * an ingestion run. Written whole or not at all, so that a process killed at any point leaves
 * no chunk with its readings but without its mixes or upstream forecasts.
 */
export interface ChunkWrite {
  readonly readings: readonly StoredReading[];
  readonly mixes: readonly StoredMix[];
  readonly forecasts: readonly StoredForecast[];
  /**
   * Windows of zones whose readings, mixes and upstream forecasts this write completes: a later
   * backfill skips them (`backfilledWindows`).
   */
  readonly backfilled?: readonly ZoneWindow[];
}

/** A published mix: the generation behind one interval's values. */
export interface MixPoint {
  readonly ts: number;
  readonly mix: Mix;
}

export interface ReadingChanges {
  /** The data version these changes bring a follower to. */
  readonly version: number;
  /**
   * In the order they were written (ascending `version`, then zone and ts); a later change of the
   * same key wins. Each key appears once, with the version of its last write.
   */
  readonly changes: readonly ReadingChange[];
  /**
   * Forecasts of the kind served in place of a reading (SERVED_FORECAST_KIND) written since, in
   * the order they were written. Upstream forecasts of other kinds feed the forecast models,
   * which read them with `forecastColumnsInWindow`.
   */
  readonly forecasts: readonly StoredForecast[];
  /** False when there were more than the limit: the follower reloads instead. */
  readonly complete: boolean;
}

/** Hours of one flow graph whose flows changed after a data version. */
export interface FlowChanges {
  /** The data version these changes bring the caller to. */
  readonly version: number;
  /** Hour starts, ascending, each once. */
  readonly hours: readonly number[];
}

/** What one solve of a flow graph writes (extensions §15): the consumption series of some hours. */
export interface ConsumptionWrite {
  /** Hour starts solved: every stored row of the graph in these hours is replaced by `rows`. */
  readonly hours: readonly number[];
  /** The series points of those hours: each row's ts is one of `hours`, each (zone, ts) once. */
  readonly rows: readonly ConsumptionRow[];
  /**
   * The data version up to which the graph's inputs (mixes, flows) are solved, once this write
   * is in: what `consumptionCursor` answers next. Unset: the cursor stays as it is.
   */
  readonly cursor?: number;
}

/**
 * The one storage interface of gridco2. It declares only what the API, ingestion and the CLI
 * need; each backend keeps its own SQL, types and locking inside its adapter.
 * Times are epoch seconds (UTC). Only complete (published) readings are ever returned as
 * `Reading`s; incomplete ones are visible through `readStored`.
 */
export interface Store {
  /** Webhook subscriptions and their delivery queue (extensions §13). */
  readonly webhooks: WebhookStore;

  /**
   * Inserts or replaces readings keyed by (zone, ts), in one transaction. Returns rows written.
   * A reading without a mix (a GB operator figure) leaves the interval's stored mix and its
   * values on each basis as they are: another feed brings those.
   */
  upsertReadings(readings: readonly StoredReading[]): Promise<number>;

  /**
   * Sets the mix and the values on each basis of intervals, leaving their default value as it
   * is (an interval new to the store is created unpublished on the default basis). One
   * transaction. Returns rows written.
   */
  upsertMixes(mixes: readonly StoredMix[]): Promise<number>;

  /**
   * Writes readings (as `upsertReadings`), then mixes (as `upsertMixes`), then upstream forecasts
   * (as `upsertForecasts`) and the backfilled windows, all in one transaction.
   */
  writeChunk(chunk: ChunkWrite): Promise<void>;

  /**
   * The windows recorded by `writeChunk` as backfilled for a zone that overlap `[fromTs, toTs)`,
   * ascending by start (they may overlap each other).
   */
  backfilledWindows(zone: string, fromTs: number, toTs: number): Promise<ZoneWindow[]>;

  /**
   * Published readings of a zone with `fromTs <= ts < toTs`, ascending, at most `limit`: on the
   * default basis (undefined: each zone's own method), or on `basis` (values computed from the
   * mix, method `computed:v1` or `computed:v1:direct`).
   */
  readingsInWindow(
    zone: string,
    fromTs: number,
    toTs: number,
    limit: number,
    basis?: Basis,
  ): Promise<Reading[]>;

  /** The newest published reading of every zone that has one, on the default basis or `basis`. */
  latestPerZone(basis?: Basis): Promise<ZoneReading[]>;

  /** Published mixes of a zone with `fromTs <= ts < toTs`, ascending, at most `limit`. */
  mixesInWindow(zone: string, fromTs: number, toTs: number, limit: number): Promise<MixPoint[]>;

  /** Inserts upstream forecasts keyed by (zone, ts, kind, issuedAt); a repeat replaces. */
  upsertForecasts(forecasts: readonly StoredForecast[]): Promise<number>;

  /**
   * Of each zone with forecasts of `kind`: the forecast of the latest interval, as last issued.
   */
  newestForecasts(kind: ForecastKind): Promise<StoredForecast[]>;

  /**
   * Every stored forecast of `kind` for a zone's intervals in `[fromTs, toTs)`, every issue,
   * ascending by interval then issue time, as columns.
   */
  forecastColumnsInWindow(
    zone: string,
    kind: ForecastKind,
    fromTs: number,
    toTs: number,
  ): Promise<ForecastColumns>;

  /**
   * Inserts or replaces hourly flows of one graph (src/core/flows.ts) keyed by (from, to, ts), in
   * one transaction; of flows repeating a key, the last stands. A flow stored again with the
   * same value is left as it is, its version too, so that refetching a trailing window marks
   * only what the upstream revised; a write that changes nothing takes no data version. Records
   * each direction's first hour (`flowBorders`). Returns the rows inserted or changed.
   */
  upsertFlows(graph: FlowGraphId, flows: readonly DirectedFlow[]): Promise<number>;

  /** The stored flows of a graph with `fromTs <= ts < toTs`, ascending by (ts, from, to). */
  flowsInWindow(graph: FlowGraphId, fromTs: number, toTs: number): Promise<DirectedFlow[]>;

  /**
   * Every direction of a graph with a stored flow and its first stored hour, by (from, to): a
   * border is in the graph from the first hour any flow on it was published (extensions §15).
   */
  flowBorders(graph: FlowGraphId): Promise<FlowBorder[]>;

  /**
   * The hours of a graph with a flow inserted or changed after data version `sinceVersion`, read
   * in one snapshot with the version they bring the caller to: the hours whose consumption
   * values are to be solved again.
   */
  flowChangesSince(graph: FlowGraphId, sinceVersion: number): Promise<FlowChanges>;

  /**
   * Replaces the consumption series of a graph in `write.hours`, in one transaction: a row whose
   * zone is no longer solved in its hour is removed, a row stored again with the same values is
   * left as it is, its version too. A write that inserts, changes or removes a row takes a data
   * version, which the rows it wrote carry. Rejects a row outside `write.hours` or with a value
   * that is not finite. Returns the rows inserted, changed or removed.
   */
  replaceConsumption(graph: FlowGraphId, write: ConsumptionWrite): Promise<number>;

  /**
   * The first hour replaced by a write of consumption series after data version `sinceVersion`
   * (rows inserted, changed or removed), or null when none changed any: a follower of the store
   * reads the series again from that hour. The store lists only its newest writes: for a
   * follower older than one it no longer lists, an hour at or before the first hour of any write
   * it pruned.
   */
  consumptionChangedFrom(sinceVersion: number): Promise<number | null>;

  /** The `cursor` of the newest `replaceConsumption` of a graph that set one; null if none did. */
  consumptionCursor(graph: FlowGraphId): Promise<number | null>;

  /**
   * Consumption-based values of a zone (extensions §15) with `fromTs <= ts < toTs`, ascending, at
   * most `limit`, on `basis`: method `computed:v1:consumption` or `computed:v1:direct:consumption`.
   */
  consumptionInWindow(
    zone: string,
    fromTs: number,
    toTs: number,
    limit: number,
    basis: Basis,
  ): Promise<Reading[]>;

  /** The newest consumption-based value of every zone that has one, on `basis`. */
  latestConsumptionPerZone(basis: Basis): Promise<ZoneReading[]>;

  /** Traced mixes of a zone with `fromTs <= ts < toTs`, ascending, at most `limit`. */
  consumptionMixesInWindow(
    zone: string,
    fromTs: number,
    toTs: number,
    limit: number,
  ): Promise<ConsumptionMixPoint[]>;

  /**
   * Keeps the result of a walk-forward backtest (`gridco2 backtest`, or `serve` once a day), and
   * the BACKTESTS_KEPT newest only; with `states`, what the next run resumes from, by zone-basis
   * (opaque bytes, forecast/backtest-state-bytes.ts), kept with the newest run only. One
   * transaction: a save that fails, or a process stopped during it, leaves the previous run and
   * its states as they were.
   */
  saveBacktest(run: BacktestRun, states?: BacktestStates): Promise<void>;

  /** The states stored with the newest backtest, by zone-basis (none when it has none). */
  newestBacktestStates(): Promise<BacktestStates>;

  /**
   * The newest backtest saved, or null; also null when the newest is the one created at
   * `unlessCreatedAt`, which the caller already holds (the run is then not read nor parsed).
   */
  newestBacktest(unlessCreatedAt?: number): Promise<BacktestRun | null>;

  /** Every stored row of a zone in `[fromTs, toTs)`, complete or not, ascending. */
  readStored(zone: string, fromTs: number, toTs: number): Promise<StoredReading[]>;

  /** The newest stored ts of a zone (complete or not), or null; ingestion resumes from it. */
  newestStoredTs(zone: string): Promise<number | null>;

  /**
   * Every stored ts of a zone (complete or not), ascending: which hours it has, without reading
   * nor parsing its rows (re-solving a graph's every hour).
   */
  storedTimes(zone: string): Promise<number[]>;

  /**
   * Stored rows ordered by (zone, ts), starting after the key `after` (null: from the start),
   * at most `limit`. Keyset paging for whole-store jobs (recompute, migrate-store).
   */
  scanStored(after: StoreKey | null, limit: number): Promise<StoredReading[]>;

  /**
   * A counter that grows with every committed write of readings (and of flows or consumption
   * series that changed some). Instances compare it to know whether what they cached is still current.
   */
  dataVersion(): Promise<number>;

  /**
   * Every reading written or removed after data version `sinceVersion`, read in one consistent
   * snapshot, at most `limit` of them, ordered by (version, zone, ts). Lets every instance follow
   * the store incrementally. `after` pages inside a write larger than `limit`: the rows of write
   * `sinceVersion + 1` up to the key `after` are left out (its forecasts are not).
   */
  changesSince(sinceVersion: number, limit: number, after?: StoreKey): Promise<ReadingChanges>;

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

  /**
   * Whether stored values must be recomputed from their mixes before they are served: set by a
   * schema upgrade that added a basis (the store's values on it are missing until then).
   */
  recomputeNeeded(): Promise<boolean>;

  /** Clears `recomputeNeeded` once a recompute has run over every stored row. */
  recomputeDone(): Promise<void>;

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

/** Every stored reading, in pages of 1 to `pageRows` (never empty), in scanStored's key order. */
export async function* storedPages(
  store: Store,
  pageRows: number,
): AsyncGenerator<StoredReading[]> {
  let after: StoreKey | null = null;
  for (;;) {
    const page = await store.scanStored(after, pageRows);
    const last = page.at(-1);
    if (!last) return;
    yield page;
    after = { zone: last.zone, ts: last.ts };
  }
}
