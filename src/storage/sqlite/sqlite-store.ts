import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import type { Basis } from '../../core/factors.js';
import {
  type ForecastColumns,
  type IngestReport,
  type Reading,
  type StoredForecast,
  type StoredReading,
  type ZoneReading,
} from '../../core/reading.js';
import type { DirectedFlow, FlowBorder, FlowGraphId } from '../../core/flows.js';
import { forecastColumns, type ForecastRow, toForecast } from '../forecast-row.js';
import { firstHours, lastFlowPerKey } from '../flow-rows.js';
import {
  CHANGE_COLUMNS,
  changesPage,
  changesPageParams,
  publishedOn,
  READING_COLUMNS,
  type ReadingChangeRow,
  type ReadingRow,
  toStoredReading,
} from '../reading-rows.js';
import { backtestStateParam, SqlStoreBase } from '../sql-store-base.js';
import { SQLITE_WINDOW_PARAMS, zoneWindowSql } from '../zone-window.js';
import type { BacktestRun } from '../../core/forecast/backtest.js';
import { BACKTESTS_KEPT } from '../store.js';
import type {
  BacktestStates,
  ChunkWrite,
  FlowChanges,
  MixPoint,
  ReadingChanges,
  Store,
  StoreKey,
  ZoneWindow,
} from '../store.js';
import { SqliteConsumptionTable } from './consumption-table.js';
import { SQLITE_MIGRATIONS } from './migrations.js';
import { SqliteWebhookStore } from './webhook-tables.js';
import type { ForecastKind, SourceId } from '../../core/sources.js';

/** The flows of a graph's window, in the order of the flows table's key. */
const FLOWS_IN_WINDOW = `WHERE graph = @graph AND ts >= @fromTs AND ts < @toTs
  ORDER BY ts, from_node, to_node`;

/**
 * The embedded default store: one SQLite file in WAL mode, so the API keeps reading while an
 * ingester (or a backfill in another process) writes.
 */
export class SqliteStore extends SqlStoreBase implements Store {
  private readonly db: Database.Database;
  private readonly statements;
  /** The file this process opened (absolute path, device and inode); null in memory. */
  private readonly file: { path: string; dev: number; ino: number } | null;
  /** Whether SQLite refused the newest write (the writer logs why), until one succeeds. */
  private writeRefused = false;
  protected readonly consumption: SqliteConsumptionTable;
  readonly webhooks: SqliteWebhookStore;

  constructor(path: string) {
    super();
    let opened: Database.Database | undefined;
    try {
      if (path !== ':memory:') createFolder(dirname(resolve(path)));
      this.db = opened = new Database(path);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
      // Another process (a backfill beside `serve`) may hold the write lock for a moment.
      this.db.pragma('busy_timeout = 10000');
      this.migrate();
      this.webhooks = new SqliteWebhookStore(this.db);
      this.consumption = new SqliteConsumptionTable(this.db, (work) =>
        this.inWriteTransaction(work),
      );
    } catch (error) {
      opened?.close();
      throw path === ':memory:' ? error : explainOpenFailure(path, error);
    }
    const identity = path === ':memory:' ? null : statSync(path);
    this.file = identity && { path: resolve(path), dev: identity.dev, ino: identity.ino };
    const db = this.db;
    const onBasis = <T>(make: (basis: Basis | undefined) => T) => ({
      default: make(undefined),
      lifecycle: make('lifecycle'),
      direct: make('direct'),
    });
    this.statements = {
      upsert: db.prepare(
        `INSERT INTO readings (zone, ts, value, method, complete, mix, lifecycle, direct, version)
         VALUES (@zone, @ts, @value, @method, @complete, @mix, @lifecycle, @direct, @version)
         ON CONFLICT (zone, ts) DO UPDATE SET value = excluded.value, method = excluded.method,
           complete = excluded.complete,
           mix = CASE WHEN excluded.mix IS NULL THEN readings.mix ELSE excluded.mix END,
           lifecycle = CASE WHEN excluded.mix IS NULL THEN readings.lifecycle
                            ELSE excluded.lifecycle END,
           direct = CASE WHEN excluded.mix IS NULL THEN readings.direct ELSE excluded.direct END,
           version = excluded.version`,
      ),
      // A row made by a mix alone is unpublished on the default basis; its method is a stand-in.
      upsertMix: db.prepare(
        `INSERT INTO readings (zone, ts, value, method, complete, mix, lifecycle, direct, version)
         VALUES (@zone, @ts, NULL, 'computed:v1', 0, @mix, @lifecycle, @direct, @version)
         ON CONFLICT (zone, ts) DO UPDATE SET mix = excluded.mix,
           lifecycle = excluded.lifecycle, direct = excluded.direct, version = excluded.version`,
      ),
      bumpVersion: db.prepare(`UPDATE meta SET value = value + 1 WHERE key = 'data_version'`),
      dataVersion: db.prepare(`SELECT value FROM meta WHERE key = 'data_version'`).pluck(),
      window: onBasis((basis) => {
        const { value, method, where } = publishedOn(basis);
        const select = `ts, ${value} AS value, ${method} AS method`;
        return db.prepare(zoneWindowSql(select, 'readings', SQLITE_WINDOW_PARAMS, where));
      }),
      latest: onBasis((basis) => {
        const { value, method, where } = publishedOn(basis);
        return db.prepare(
          `SELECT zone, ts, ${value} AS value, ${method} AS method FROM readings
           WHERE zone = ? AND ${where} ORDER BY ts DESC LIMIT 1`,
        );
      }),
      mixes: db.prepare(
        zoneWindowSql('ts, mix', 'readings', SQLITE_WINDOW_PARAMS, 'lifecycle IS NOT NULL'),
      ),
      zones: db.prepare(`SELECT DISTINCT zone FROM readings`).pluck(),
      stored: db.prepare(
        `SELECT ${READING_COLUMNS} FROM readings WHERE zone = ? AND ts >= ? AND ts < ? ORDER BY ts`,
      ),
      newest: db.prepare(`SELECT max(ts) FROM readings WHERE zone = ?`).pluck(),
      storedTimes: db.prepare(`SELECT ts FROM readings WHERE zone = ? ORDER BY ts`).pluck(),
      // readings_version holds (version, zone, ts): the key of a WITHOUT ROWID table follows.
      changes: db.prepare(
        `SELECT ${CHANGE_COLUMNS}
         FROM readings WHERE version > ? ORDER BY version, zone, ts LIMIT ?`,
      ),
      changesAfter: db.prepare(
        `SELECT ${CHANGE_COLUMNS}
         FROM readings WHERE (version, zone, ts) > (?, ?, ?) ORDER BY version, zone, ts LIMIT ?`,
      ),
      forecastChanges: db.prepare(
        `SELECT zone, ts, kind, issued_at, value FROM forecasts WHERE version > ? AND kind = ?
         ORDER BY version LIMIT ?`,
      ),
      // Rows as arrays, read one at a time into columns (forecast-row.ts).
      forecastColumnsInWindow: db
        .prepare(
          `SELECT ts, issued_at, value FROM forecasts
           WHERE zone = ? AND kind = ? AND ts >= ? AND ts < ? ORDER BY ts, issued_at`,
        )
        .raw(),
      insertBacktest: db.prepare(`INSERT INTO backtests (created_at, run) VALUES (?, ?)`),
      dropBacktestStates: db.prepare(`DELETE FROM backtest_states`),
      insertBacktestState: db.prepare(
        `INSERT INTO backtest_states (forecast, state) VALUES (?, ?)`,
      ),
      backtestStates: db.prepare(`SELECT forecast, state FROM backtest_states`).raw(),
      pruneBacktests: db.prepare(
        `DELETE FROM backtests WHERE id NOT IN (SELECT id FROM backtests ORDER BY id DESC LIMIT ?)`,
      ),
      newestBacktest: db
        .prepare(
          `SELECT run FROM backtests WHERE id = (SELECT max(id) FROM backtests)
           AND created_at IS NOT ?`,
        )
        .pluck(),
      upsertForecast: db.prepare(
        `INSERT INTO forecasts (zone, ts, kind, issued_at, value, version)
         VALUES (@zone, @ts, @kind, @issuedAt, @value, @version)
         ON CONFLICT (zone, kind, ts, issued_at) DO UPDATE SET value = excluded.value,
           version = excluded.version`,
      ),
      insertBackfilled: db.prepare(
        `INSERT OR IGNORE INTO backfilled (zone, from_ts, to_ts) VALUES (@zone, @fromTs, @toTs)`,
      ),
      backfilledWindows: db.prepare(
        `SELECT zone, from_ts AS fromTs, to_ts AS toTs FROM backfilled
         WHERE zone = ? AND to_ts > ? AND from_ts < ? ORDER BY from_ts`,
      ),
      newestForecasts: db.prepare(
        // One primary-key seek per row: a NOT EXISTS with an OR scanned each zone's earlier rows,
        // quadratic in a zone's stored forecasts.
        `SELECT zone, ts, kind, issued_at, value FROM forecasts f
         WHERE kind = @kind AND (ts, issued_at) = (
           SELECT ts, issued_at FROM forecasts g WHERE g.zone = f.zone AND g.kind = @kind
           ORDER BY ts DESC, issued_at DESC LIMIT 1)
         ORDER BY zone`,
      ),
      scanFirst: db.prepare(`SELECT ${READING_COLUMNS} FROM readings ORDER BY zone, ts LIMIT ?`),
      scanAfter: db.prepare(
        `SELECT ${READING_COLUMNS} FROM readings WHERE (zone, ts) > (?, ?)
         ORDER BY zone, ts LIMIT ?`,
      ),
      acquireLease: db.prepare(
        `INSERT INTO leases (name, holder, expires_ms) VALUES (@name, @holder, @now + @ttl)
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_ms = excluded.expires_ms
         WHERE leases.holder = excluded.holder OR leases.expires_ms <= @now`,
      ),
      releaseLease: db.prepare(`DELETE FROM leases WHERE name = ? AND holder = ?`),
      insertReport: db.prepare(
        `INSERT INTO ingest_reports (source, started_at, finished_at, report) VALUES (?, ?, ?, ?)`,
      ),
      latestReports: db
        .prepare(
          `SELECT report FROM ingest_reports r WHERE id = (
             SELECT max(id) FROM ingest_reports WHERE source = r.source)`,
        )
        .pluck(),
      // A flow stored again with the same value keeps its version: it did not change.
      upsertFlow: db.prepare(
        `INSERT INTO flows (graph, from_node, to_node, ts, mw, version)
         VALUES (@graph, @from, @to, @ts, @mw, @version)
         ON CONFLICT (graph, ts, from_node, to_node) DO UPDATE SET mw = excluded.mw,
           version = excluded.version
         WHERE flows.mw IS NOT excluded.mw`,
      ),
      upsertFlowBorder: db.prepare(
        `INSERT INTO flow_borders (graph, from_node, to_node, first_ts)
         VALUES (@graph, @from, @to, @firstTs)
         ON CONFLICT (graph, from_node, to_node) DO UPDATE SET first_ts = excluded.first_ts
         WHERE excluded.first_ts < flow_borders.first_ts`,
      ),
      // A window's flows a column at a time, each direction as its number in flowBorders'
      // order (from 1): better-sqlite3 makes an object or a string of a row at a cost several
      // times a number's, and a re-solve reads hundreds of thousands of rows.
      flowsInWindow: {
        numbers: db
          .prepare(
            `WITH direction AS MATERIALIZED (
               SELECT from_node, to_node, row_number() OVER (ORDER BY from_node, to_node) AS n
               FROM flow_borders WHERE graph = @graph)
             SELECT direction.n FROM flows JOIN direction USING (from_node, to_node)
             ${FLOWS_IN_WINDOW}`,
          )
          .pluck(),
        ts: db.prepare(`SELECT ts FROM flows ${FLOWS_IN_WINDOW}`).pluck(),
        mw: db.prepare(`SELECT mw FROM flows ${FLOWS_IN_WINDOW}`).pluck(),
      },
      flowBorders: db.prepare(
        `SELECT from_node AS "from", to_node AS "to", first_ts AS firstTs FROM flow_borders
         WHERE graph = ? ORDER BY from_node, to_node`,
      ),
      flowChanges: db
        .prepare(`SELECT DISTINCT ts FROM flows WHERE graph = ? AND version > ? ORDER BY ts`)
        .pluck(),
      meta: db.prepare(`SELECT value FROM meta WHERE key = ?`).pluck(),
      deleteMeta: db.prepare(`DELETE FROM meta WHERE key = ?`),
    };
  }

  private migrate(): void {
    this.db.exec(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`,
    );
    const applied = new Set(
      this.db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[],
    );
    for (const migration of SQLITE_MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      // IMMEDIATE takes the write lock first, so two processes starting together do not race.
      this.db
        .transaction(() => {
          const already = this.db
            .prepare('SELECT 1 FROM schema_migrations WHERE version = ?')
            .get(migration.version);
          if (already) return;
          this.db.exec(migration.sql);
          this.db
            .prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)')
            .run(migration.version, Math.floor(Date.now() / 1000));
        })
        .immediate();
    }
  }

  async writeChunk({ readings, mixes, forecasts, backfilled = [] }: ChunkWrite): Promise<void> {
    if (readings.length + mixes.length + forecasts.length + backfilled.length === 0) return;
    const { upsert, upsertMix, upsertForecast, insertBackfilled } = this.statements;
    this.inWriteTransaction(() => {
      const version = this.nextVersion();
      for (const reading of readings) {
        upsert.run({
          version,
          zone: reading.zone,
          ts: reading.ts,
          value: reading.value,
          method: reading.method,
          complete: reading.complete ? 1 : 0,
          mix: reading.mix === null ? null : JSON.stringify(reading.mix),
          lifecycle: reading.lifecycle,
          direct: reading.direct,
        });
      }
      for (const row of mixes) {
        upsertMix.run({
          version,
          zone: row.zone,
          ts: row.ts,
          mix: JSON.stringify(row.mix),
          lifecycle: row.lifecycle,
          direct: row.direct,
        });
      }
      for (const forecast of forecasts) upsertForecast.run({ ...forecast, version });
      for (const window of backfilled) insertBackfilled.run(window);
    });
  }

  async backfilledWindows(zone: string, fromTs: number, toTs: number): Promise<ZoneWindow[]> {
    return this.statements.backfilledWindows.all(zone, fromTs, toTs) as ZoneWindow[];
  }

  async readingsInWindow(
    ...[zone, fromTs, toTs, limit, basis]: Parameters<Store['readingsInWindow']>
  ): Promise<Reading[]> {
    return this.statements.window[basis ?? 'default'].all(zone, fromTs, toTs, limit) as Reading[];
  }

  async latestPerZone(basis?: Basis): Promise<ZoneReading[]> {
    const zones = this.statements.zones.all() as string[];
    const statement = this.statements.latest[basis ?? 'default'];
    const latest: ZoneReading[] = [];
    for (const zone of zones) {
      const row = statement.get(zone) as ZoneReading | undefined;
      if (row) latest.push(row);
    }
    return latest;
  }

  async mixesInWindow(...window: Parameters<Store['mixesInWindow']>): Promise<MixPoint[]> {
    const rows = this.statements.mixes.all(...window) as {
      ts: number;
      mix: string;
    }[];
    return rows.map((row) => ({ ts: row.ts, mix: JSON.parse(row.mix) as Record<string, number> }));
  }

  async newestForecasts(kind: ForecastKind): Promise<StoredForecast[]> {
    return (this.statements.newestForecasts.all({ kind }) as ForecastRow[]).map(toForecast);
  }

  async forecastColumnsInWindow(
    ...window: Parameters<Store['forecastColumnsInWindow']>
  ): Promise<ForecastColumns> {
    return forecastColumns(
      this.statements.forecastColumnsInWindow.iterate(...window) as Iterable<
        [ts: number, issuedAt: number, value: number]
      >,
    );
  }

  async upsertFlows(graph: FlowGraphId, flows: readonly DirectedFlow[]): Promise<number> {
    if (flows.length === 0) return 0;
    const { upsertFlow, upsertFlowBorder, bumpVersion, dataVersion } = this.statements;
    return this.inWriteTransaction(() => {
      // The version this write takes if it changes a flow: the write lock is held.
      const version = (dataVersion.get() as number) + 1;
      const unique = lastFlowPerKey(flows);
      let changed = 0;
      for (const flow of unique) changed += upsertFlow.run({ graph, ...flow, version }).changes;
      for (const border of firstHours(unique)) upsertFlowBorder.run({ graph, ...border });
      if (changed > 0) bumpVersion.run();
      return changed;
    });
  }

  async flowsInWindow(graph: FlowGraphId, fromTs: number, toTs: number): Promise<DirectedFlow[]> {
    const { flowsInWindow: read, flowBorders } = this.statements;
    const window = { graph, fromTs, toTs };
    // One snapshot for the reads (a deferred transaction), so that their rows line up.
    return this.db.transaction(() => {
      const directions = flowBorders.all(graph) as FlowBorder[];
      const numbers = read.numbers.all(window) as number[];
      const ts = read.ts.all(window) as number[];
      const mw = read.mw.all(window) as number[];
      // upsertFlows writes each flow's direction to flow_borders in the flow's transaction.
      if (numbers.length !== ts.length) throw new Error(`flows of ${graph} without their border`);
      const flows = new Array<DirectedFlow>(ts.length);
      for (let i = 0; i < ts.length; i++) {
        const { from, to } = directions[numbers[i]! - 1]!;
        flows[i] = { from, to, ts: ts[i]!, mw: mw[i]! };
      }
      return flows;
    })();
  }

  async flowBorders(graph: FlowGraphId): Promise<FlowBorder[]> {
    return this.statements.flowBorders.all(graph) as FlowBorder[];
  }

  async flowChangesSince(graph: FlowGraphId, sinceVersion: number): Promise<FlowChanges> {
    // A deferred transaction reads one snapshot, even while another process writes.
    return this.db.transaction(() => ({
      version: this.statements.dataVersion.get() as number,
      hours: this.statements.flowChanges.all(graph, sinceVersion) as number[],
    }))();
  }

  async saveBacktest(run: BacktestRun, states?: BacktestStates): Promise<void> {
    const { insertBacktest, dropBacktestStates, insertBacktestState, pruneBacktests } =
      this.statements;
    this.write(() =>
      this.db.transaction(() => {
        insertBacktest.run(run.createdAt, JSON.stringify(run));
        dropBacktestStates.run();
        for (const [forecast, state] of states ?? []) {
          insertBacktestState.run(forecast, backtestStateParam(state));
        }
        pruneBacktests.run(BACKTESTS_KEPT);
      })(),
    );
  }

  async newestBacktestStates(): Promise<BacktestStates> {
    return new Map(this.statements.backtestStates.all() as [string, Buffer][]);
  }

  async newestBacktest(unlessCreatedAt?: number): Promise<BacktestRun | null> {
    const text = this.statements.newestBacktest.get(unlessCreatedAt ?? null) as string | undefined;
    return text === undefined ? null : (JSON.parse(text) as BacktestRun);
  }

  async readStored(zone: string, fromTs: number, toTs: number): Promise<StoredReading[]> {
    return (this.statements.stored.all(zone, fromTs, toTs) as ReadingRow[]).map(toStoredReading);
  }

  async newestStoredTs(zone: string): Promise<number | null> {
    return (this.statements.newest.get(zone) as number | null) ?? null;
  }

  async storedTimes(zone: string): Promise<number[]> {
    return this.statements.storedTimes.all(zone) as number[];
  }

  async scanStored(after: StoreKey | null, limit: number): Promise<StoredReading[]> {
    const rows = after
      ? this.statements.scanAfter.all(after.zone, after.ts, limit)
      : this.statements.scanFirst.all(limit);
    return (rows as ReadingRow[]).map(toStoredReading);
  }

  /** Bumps the data version inside the caller's write transaction and returns the new one. */
  private nextVersion(): number {
    this.statements.bumpVersion.run();
    return this.statements.dataVersion.get() as number;
  }

  async changesSince(
    sinceVersion: number,
    limit: number,
    after?: StoreKey,
  ): Promise<ReadingChanges> {
    // A deferred transaction reads one snapshot, even while another process writes.
    return this.db.transaction(() => {
      const version = this.statements.dataVersion.get() as number;
      const params = changesPageParams(sinceVersion, limit, after);
      const rows = (after ? this.statements.changesAfter : this.statements.changes).all(
        ...params.readings,
      ) as ReadingChangeRow[];
      const forecasts = this.statements.forecastChanges.all(...params.forecasts) as ForecastRow[];
      return changesPage(version, rows, forecasts, limit);
    })();
  }

  async dataVersion(): Promise<number> {
    return this.statements.dataVersion.get() as number;
  }

  async acquireLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    // All processes sharing the file share this machine's clock.
    const { changes } = this.write(() =>
      this.statements.acquireLease.run({ name, holder, now: Date.now(), ttl: ttlMs }),
    );
    return changes === 1;
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    this.write(() => this.statements.releaseLease.run(name, holder));
  }

  async recordIngestReport(report: IngestReport): Promise<void> {
    this.write(() =>
      this.statements.insertReport.run(
        report.source,
        report.startedAt,
        report.finishedAt,
        JSON.stringify(report),
      ),
    );
  }

  async latestIngestReports(): Promise<Partial<Record<SourceId, IngestReport>>> {
    const reports: Partial<Record<SourceId, IngestReport>> = {};
    for (const json of this.statements.latestReports.all() as string[]) {
      const report = JSON.parse(json) as IngestReport;
      reports[report.source] = report;
    }
    return reports;
  }

  // A row of the meta table, there since schema version 1: no migration, and every store made
  // before the mark existed reads as not synthetic.
  async markSynthetic(): Promise<void> {
    this.write(() =>
      this.db.prepare(`INSERT OR IGNORE INTO meta (key, value) VALUES ('synthetic', 1)`).run(),
    );
  }

  async isSynthetic(): Promise<boolean> {
    return this.db.prepare(`SELECT 1 FROM meta WHERE key = 'synthetic'`).get() !== undefined;
  }

  async recomputeNeeded(): Promise<boolean> {
    return this.statements.meta.get('recompute_needed') !== undefined;
  }

  async recomputeDone(): Promise<void> {
    this.write(() => this.statements.deleteMeta.run('recompute_needed'));
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async problems(): Promise<readonly string[]> {
    const found: string[] = [];
    if (this.file) {
      const { path, dev, ino } = this.file;
      let now: { dev: number; ino: number } | undefined;
      try {
        now = statSync(path);
      } catch {
        now = undefined;
      }
      // Still open, the old file serves on, frozen; a new one at the path is never read.
      if (now === undefined || now.dev !== dev || now.ino !== ino) {
        // No path here: this is shown in /v1/status; the log line names the store.
        found.push(
          `the SQLite file was ${now ? 'replaced' : 'deleted'} while gridco2 served it: ` +
            'what is served no longer changes; restart gridco2 to open the file now at its path',
        );
      }
    }
    if (this.writeRefused) {
      found.push(
        'the SQLite file refuses writes (read-only, or no space left): nothing new is stored',
      );
    }
    return found;
  }

  /** Runs `work` in an IMMEDIATE transaction: it takes the write lock before it reads. */
  private inWriteTransaction<T>(work: () => T): T {
    return this.write(() => this.db.transaction(work).immediate());
  }

  /** Runs a write, remembering whether SQLite refused it (read-only file, folder or disk). */
  private write<T>(run: () => T): T {
    try {
      const result = run();
      this.writeRefused = false;
      return result;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && /^SQLITE_(READONLY|CANTOPEN|IOERR|FULL|PERM)/.test(code)) {
        this.writeRefused = true;
      }
      throw error;
    }
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

/** The SQLite file cannot be opened: which file, what stands in the way, and what would fix it. */
export class SqliteOpenError extends Error {
  override readonly name = 'SqliteOpenError';

  constructor(
    /** Absolute path of the file. */
    readonly file: string,
    readonly problem: string,
    /** What the user can do about it, when we know. */
    readonly remedy: string | null,
  ) {
    super(`cannot open the SQLite file ${file}: ${problem}${remedy ? `; ${remedy}` : ''}`);
  }
}

/**
 * Creates a folder and the missing ones above it, one level at a time. Not `mkdirSync` with
 * `recursive`: on a folder that cannot hold folders (under /proc) it retries forever at full
 * CPU; here the first refusal throws.
 */
function createFolder(folder: string): void {
  if (existsSync(folder)) return;
  const parent = dirname(folder);
  if (parent !== folder) createFolder(parent);
  try {
    mkdirSync(folder);
  } catch (error) {
    // Another process (a demo's backfill worker) made it meanwhile.
    if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
  }
}

/**
 * Says why `path` could not be opened in terms of files and folders. SQLite's own messages
 * ("unable to open database file") and mkdir's ("EACCES: permission denied, mkdir 'data'") name
 * neither the folder nor what to change; a container whose data volume is not writable by its
 * user is the usual case (docs/deploy.md).
 */
function explainOpenFailure(path: string, error: unknown): SqliteOpenError {
  const file = resolve(path);
  const folder = dirname(file);
  if (!existsSync(folder)) {
    const code = (error as { code?: unknown }).code;
    const why = typeof code === 'string' ? code : String(error);
    return new SqliteOpenError(
      file,
      `its folder ${folder} does not exist and cannot be created (${why})`,
      'create it, writable by this user',
    );
  }
  if (!statSync(folder).isDirectory()) {
    return new SqliteOpenError(file, `${folder} is a file, not a folder`, 'move that file away');
  }
  const folderDenied = writeDenied(folder);
  if (folderDenied) {
    // Even for an existing file: SQLite writes its -wal and -shm files beside it.
    return new SqliteOpenError(file, `its folder ${folder} is ${folderDenied}`, 'make it writable');
  }
  const fileDenied = existsSync(file) ? writeDenied(file) : null;
  if (fileDenied) {
    return new SqliteOpenError(file, `the file is ${fileDenied}`, 'make it writable');
  }
  return new SqliteOpenError(file, error instanceof Error ? error.message : String(error), null);
}

/** Why this process may not write `path`, or null when it may. */
function writeDenied(path: string): string | null {
  try {
    accessSync(path, constants.W_OK);
    return null;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return code === 'EROFS' ? 'on a read-only file system' : 'not writable by this user';
  }
}
