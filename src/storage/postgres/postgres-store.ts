import { Client, Pool, TypeOverrides, types } from 'pg';
import type { PoolClient } from 'pg';
import { pino, type Logger } from 'pino';
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
  lastForecastPerKey,
  lastReadingPerKey,
  publishedOn,
  READING_COLUMNS,
  type ReadingChangeRow,
  type ReadingRow,
  toStoredReading,
} from '../reading-rows.js';
import { backtestStateParam, SqlStoreBase } from '../sql-store-base.js';
import {
  DATA_CHANNEL,
  lockNextVersion,
  newestPerZoneSql,
  nextVersion,
  queryZoneWindow,
  readVersion,
  upsertInPieces,
} from './versioned-writes.js';
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
import { PostgresConsumptionTable } from './consumption-table.js';
import { POSTGRES_MIGRATIONS } from './migrations.js';
import { PostgresWebhookStore } from './webhook-tables.js';
import type { ForecastKind, SourceId } from '../../core/sources.js';

export interface PostgresStoreOptions {
  /** Most connections this instance opens (default 10); instances share `max_connections`. */
  readonly maxConnections?: number;
  /** How long a query waits for a connection before it rejects, in ms (default 5000). */
  readonly connectionTimeoutMs?: number;
  /** How long an unused connection stays open, in ms (default 30000). */
  readonly idleTimeoutMs?: number;
  /**
   * Told when an idle connection fails (e.g. the server restarted). The pool has already dropped
   * it and opens a new one on demand; the default logs a warning through `logger`.
   */
  readonly onConnectionError?: (error: Error) => void;
  /**
   * Where the store's own warnings go. Every log line of the service is JSON (pino); without one,
   * a pino logger of the same shape as the service's writes to stdout.
   */
  readonly logger?: Logger;
}

// BIGINT comes back as a string by default (node20.md, trap 7); epoch seconds, counters and ids
// stay far below 2^53, so numbers are exact. Set per pool, not globally, to leave other pg users be.
const typeParsers = new TypeOverrides();
typeParsers.setTypeParser(types.builtins.INT8, Number);

// Made on first use: a store given a logger never opens a second writer on stdout.
let fallback: Logger | undefined;
const fallbackLogger = () => (fallback ??= pino({ base: { service: 'gridco2' } }));

/** Fixed key of the advisory lock that serializes migrations of instances starting together. */
const MIGRATION_LOCK_KEY = 0x67726964; // "grid"

const UPSERT_SQL = `
  INSERT INTO readings (${READING_COLUMNS}, version)
  SELECT ${READING_COLUMNS}, $2 FROM json_to_recordset($1::json) AS chunk (
    zone text, ts bigint, value double precision, method text, complete boolean, mix jsonb,
    lifecycle double precision, direct double precision)
  ON CONFLICT (zone, ts) DO UPDATE SET value = excluded.value, method = excluded.method,
    complete = excluded.complete,
    mix = CASE WHEN excluded.mix IS NULL THEN readings.mix ELSE excluded.mix END,
    lifecycle = CASE WHEN excluded.mix IS NULL THEN readings.lifecycle ELSE excluded.lifecycle END,
    direct = CASE WHEN excluded.mix IS NULL THEN readings.direct ELSE excluded.direct END,
    version = excluded.version`;

// A row made by a mix alone is unpublished on the default basis; its method is a stand-in.
const UPSERT_MIX_SQL = `
  INSERT INTO readings (zone, ts, value, method, complete, mix, lifecycle, direct, version)
  SELECT zone, ts, NULL, 'computed:v1', false, mix, lifecycle, direct, $2
  FROM json_to_recordset($1::json) AS chunk (
    zone text, ts bigint, mix jsonb, lifecycle double precision, direct double precision)
  ON CONFLICT (zone, ts) DO UPDATE SET mix = excluded.mix, lifecycle = excluded.lifecycle,
    direct = excluded.direct, version = excluded.version`;

const UPSERT_FORECAST_SQL = `
  INSERT INTO forecasts (zone, ts, kind, issued_at, value, version)
  SELECT zone, ts, kind, "issuedAt", value, $2 FROM json_to_recordset($1::json) AS chunk (
    zone text, ts bigint, kind text, "issuedAt" bigint, value double precision)
  ON CONFLICT (zone, kind, ts, issued_at) DO UPDATE SET value = excluded.value,
    version = excluded.version`;

const INSERT_BACKFILLED_SQL = `
  INSERT INTO backfilled (zone, from_ts, to_ts)
  SELECT DISTINCT zone, "fromTs", "toTs" FROM json_to_recordset($1::json) AS window_ (
    zone text, "fromTs" bigint, "toTs" bigint)
  ON CONFLICT DO NOTHING`;

// A flow stored again with the same value keeps its version: it did not change.
const UPSERT_FLOWS_SQL = `
  INSERT INTO flows (graph, from_node, to_node, ts, mw, version)
  SELECT $1, "from", "to", ts, mw, $3 FROM json_to_recordset($2::json) AS chunk (
    "from" text, "to" text, ts bigint, mw double precision)
  ON CONFLICT (graph, ts, from_node, to_node) DO UPDATE SET mw = excluded.mw,
    version = excluded.version
  WHERE flows.mw IS DISTINCT FROM excluded.mw`;

const UPSERT_FLOW_BORDERS_SQL = `
  INSERT INTO flow_borders (graph, from_node, to_node, first_ts)
  SELECT $1, "from", "to", "firstTs" FROM json_to_recordset($2::json) AS border (
    "from" text, "to" text, "firstTs" bigint)
  ON CONFLICT (graph, from_node, to_node) DO UPDATE SET first_ts = excluded.first_ts
  WHERE excluded.first_ts < flow_borders.first_ts`;

// Both walk readings_version_key (version, zone, ts).
const CHANGES_SQL = `
  SELECT ${CHANGE_COLUMNS} FROM readings WHERE version > $1 ORDER BY version, zone, ts LIMIT $2`;
const CHANGES_AFTER_SQL = `
  SELECT ${CHANGE_COLUMNS} FROM readings WHERE (version, zone, ts) > ($1, $2, $3)
  ORDER BY version, zone, ts LIMIT $4`;

/**
 * The shared store for several instances: a connection pool over one PostgreSQL database.
 * Open it with `PostgresStore.open`, which applies pending migrations first.
 */
export class PostgresStore extends SqlStoreBase implements Store {
  private closed = false;
  protected readonly consumption: PostgresConsumptionTable;
  readonly webhooks: PostgresWebhookStore;

  private constructor(
    private readonly pool: Pool,
    private readonly url: string,
  ) {
    super();
    this.webhooks = new PostgresWebhookStore(pool);
    this.consumption = new PostgresConsumptionTable(pool, (work) => this.inTransaction(work));
  }

  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const pool = new Pool({
      connectionString: url,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
      idleTimeoutMillis: options.idleTimeoutMs ?? 30_000,
      keepAlive: true,
      application_name: 'gridco2',
      types: typeParsers,
    });
    // Without a listener, an idle connection failing would be an unhandled 'error' event and
    // end the process; the pool drops the connection and the next query opens a new one.
    pool.on(
      'error',
      options.onConnectionError ??
        ((error) =>
          // The message and code only: pg's error holds its client, sockets and all.
          (options.logger ?? fallbackLogger()).warn(
            { err: { message: error.message, code: (error as { code?: string }).code } },
            'postgres: idle connection lost',
          )),
    );
    const store = new PostgresStore(pool, url);
    try {
      await store.migrate();
    } catch (error) {
      await pool.end();
      throw error;
    }
    return store;
  }

  private async migrate(): Promise<void> {
    await this.inTransaction(async (client) => {
      // Held until commit; advisory locks are per database, so other databases do not wait.
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
      await client.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
      );
      const { rows } = await client.query<{ version: number }>(
        'SELECT version FROM schema_migrations',
      );
      const applied = new Set(rows.map((row) => row.version));
      for (const migration of POSTGRES_MIGRATIONS) {
        if (applied.has(migration.version)) continue;
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [
          migration.version,
        ]);
      }
    });
  }

  private async inTransaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    // A checked-out client has no pool listener: a connection lost between two statements would
    // otherwise be an unhandled 'error' event. The statement in flight rejects anyway.
    let connectionError: Error | undefined;
    const noteConnectionError = (error: Error) => {
      connectionError = error;
    };
    client.on('error', noteConnectionError);
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      if (connectionError === undefined) {
        await client.query('ROLLBACK').catch(noteConnectionError);
      }
      throw error;
    } finally {
      client.removeListener('error', noteConnectionError);
      // Releasing with an error destroys the connection instead of returning it to the pool.
      client.release(connectionError);
    }
  }

  async writeChunk({ readings, mixes, forecasts, backfilled = [] }: ChunkWrite): Promise<void> {
    if (readings.length + mixes.length + forecasts.length + backfilled.length === 0) return;
    await this.inTransaction(async (client) => {
      const version = await nextVersion(client);
      const withVersion = (piece: string) => [piece, version];
      await upsertInPieces(client, UPSERT_SQL, lastReadingPerKey(readings), withVersion);
      await upsertInPieces(client, UPSERT_MIX_SQL, lastReadingPerKey(mixes), withVersion);
      await upsertInPieces(client, UPSERT_FORECAST_SQL, lastForecastPerKey(forecasts), withVersion);
      if (backfilled.length > 0) {
        await client.query(INSERT_BACKFILLED_SQL, [JSON.stringify(backfilled)]);
      }
    });
  }

  async backfilledWindows(zone: string, fromTs: number, toTs: number): Promise<ZoneWindow[]> {
    const { rows } = await this.pool.query<ZoneWindow>(
      `SELECT zone, from_ts AS "fromTs", to_ts AS "toTs" FROM backfilled
       WHERE zone = $1 AND to_ts > $2 AND from_ts < $3 ORDER BY from_ts`,
      [zone, fromTs, toTs],
    );
    return rows;
  }

  async readingsInWindow(
    ...[zone, fromTs, toTs, limit, basis]: Parameters<Store['readingsInWindow']>
  ): Promise<Reading[]> {
    const { value, method, where } = publishedOn(basis);
    const select = `ts, ${value} AS value, ${method} AS method`;
    return queryZoneWindow(this.pool, select, 'readings', [zone, fromTs, toTs, limit], where);
  }

  async latestPerZone(basis?: Basis): Promise<ZoneReading[]> {
    const { value, method, where } = publishedOn(basis);
    const { rows } = await this.pool.query<ZoneReading>(
      newestPerZoneSql('readings', value, method, where),
    );
    return rows;
  }

  async mixesInWindow(...window: Parameters<Store['mixesInWindow']>): Promise<MixPoint[]> {
    return queryZoneWindow(this.pool, 'ts, mix', 'readings', window, 'lifecycle IS NOT NULL');
  }

  async forecastColumnsInWindow(
    ...window: Parameters<Store['forecastColumnsInWindow']>
  ): Promise<ForecastColumns> {
    const { rows } = await this.pool.query<[ts: number, issuedAt: number, value: number]>({
      text: `SELECT ts, issued_at, value FROM forecasts
       WHERE zone = $1 AND kind = $2 AND ts >= $3 AND ts < $4 ORDER BY ts, issued_at`,
      values: window,
      rowMode: 'array',
    });
    return forecastColumns(rows);
  }

  async upsertFlows(graph: FlowGraphId, flows: readonly DirectedFlow[]): Promise<number> {
    if (flows.length === 0) return 0;
    return this.inTransaction(async (client) => {
      const version = await lockNextVersion(client);
      const unique = lastFlowPerKey(flows);
      const changed = await upsertInPieces(client, UPSERT_FLOWS_SQL, unique, (piece) => [
        graph,
        piece,
        version,
      ]);
      await client.query(UPSERT_FLOW_BORDERS_SQL, [graph, JSON.stringify(firstHours(unique))]);
      if (changed > 0) await nextVersion(client);
      return changed;
    });
  }

  async flowsInWindow(graph: FlowGraphId, fromTs: number, toTs: number): Promise<DirectedFlow[]> {
    const { rows } = await this.pool.query<DirectedFlow>(
      `SELECT from_node AS "from", to_node AS "to", ts, mw FROM flows
       WHERE graph = $1 AND ts >= $2 AND ts < $3 ORDER BY ts, from_node, to_node`,
      [graph, fromTs, toTs],
    );
    return rows;
  }

  async flowBorders(graph: FlowGraphId): Promise<FlowBorder[]> {
    const { rows } = await this.pool.query<FlowBorder>(
      `SELECT from_node AS "from", to_node AS "to", first_ts AS "firstTs" FROM flow_borders
       WHERE graph = $1 ORDER BY from_node, to_node`,
      [graph],
    );
    return rows;
  }

  async flowChangesSince(graph: FlowGraphId, sinceVersion: number): Promise<FlowChanges> {
    return this.inTransaction(async (client) => {
      // One snapshot for the version and the hours, so nothing committed in between is missed.
      await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      const version = await readVersion(client);
      const { rows } = await client.query<{ ts: number }>(
        `SELECT DISTINCT ts FROM flows WHERE graph = $1 AND version > $2 ORDER BY ts`,
        [graph, sinceVersion],
      );
      return { version, hours: rows.map((row) => row.ts) };
    });
  }

  async saveBacktest(run: BacktestRun, states?: BacktestStates): Promise<void> {
    await this.inTransaction(async (client) => {
      await client.query(`INSERT INTO backtests (created_at, run) VALUES ($1, $2)`, [
        run.createdAt,
        JSON.stringify(run),
      ]);
      await client.query(`DELETE FROM backtest_states`);
      for (const [forecast, state] of states ?? []) {
        await client.query(`INSERT INTO backtest_states (forecast, state) VALUES ($1, $2)`, [
          forecast,
          backtestStateParam(state),
        ]);
      }
      await client.query(
        `DELETE FROM backtests WHERE id NOT IN (SELECT id FROM backtests ORDER BY id DESC LIMIT $1)`,
        [BACKTESTS_KEPT],
      );
    });
  }

  async newestBacktest(unlessCreatedAt?: number): Promise<BacktestRun | null> {
    const { rows } = await this.pool.query<{ run: string }>(
      `SELECT run FROM backtests WHERE id = (SELECT max(id) FROM backtests)
       AND created_at IS DISTINCT FROM $1`,
      [unlessCreatedAt ?? null],
    );
    return rows[0] ? (JSON.parse(rows[0].run) as BacktestRun) : null;
  }

  async newestBacktestStates(): Promise<BacktestStates> {
    const { rows } = await this.pool.query<{ forecast: string; state: Buffer }>(
      `SELECT forecast, state FROM backtest_states`,
    );
    return new Map(rows.map(({ forecast, state }) => [forecast, state]));
  }

  async newestForecasts(kind: ForecastKind): Promise<StoredForecast[]> {
    const { rows } = await this.pool.query<ForecastRow>(
      `SELECT DISTINCT ON (zone) zone, ts, kind, issued_at, value FROM forecasts
       WHERE kind = $1 ORDER BY zone, ts DESC, issued_at DESC`,
      [kind],
    );
    return rows.map(toForecast);
  }

  async readStored(zone: string, fromTs: number, toTs: number): Promise<StoredReading[]> {
    const { rows } = await this.pool.query<ReadingRow>(
      `SELECT ${READING_COLUMNS} FROM readings
       WHERE zone = $1 AND ts >= $2 AND ts < $3 ORDER BY ts`,
      [zone, fromTs, toTs],
    );
    return rows.map(toStoredReading);
  }

  async newestStoredTs(zone: string): Promise<number | null> {
    const { rows } = await this.pool.query<{ newest: number | null }>(
      'SELECT max(ts) AS newest FROM readings WHERE zone = $1',
      [zone],
    );
    return rows[0]?.newest ?? null;
  }

  async storedTimes(zone: string): Promise<number[]> {
    const { rows } = await this.pool.query<{ ts: number }>(
      'SELECT ts FROM readings WHERE zone = $1 ORDER BY ts',
      [zone],
    );
    return rows.map(({ ts }) => ts);
  }

  async scanStored(after: StoreKey | null, limit: number): Promise<StoredReading[]> {
    const { rows } = after
      ? await this.pool.query<ReadingRow>(
          `SELECT ${READING_COLUMNS} FROM readings
           WHERE (zone, ts) > ($1, $2) ORDER BY zone, ts LIMIT $3`,
          [after.zone, after.ts, limit],
        )
      : await this.pool.query<ReadingRow>(
          `SELECT ${READING_COLUMNS} FROM readings ORDER BY zone, ts LIMIT $1`,
          [limit],
        );
    return rows.map(toStoredReading);
  }

  async changesSince(
    sinceVersion: number,
    limit: number,
    after?: StoreKey,
  ): Promise<ReadingChanges> {
    return this.inTransaction(async (client) => {
      // One snapshot for the version and the rows, so nothing committed in between is missed.
      await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
      const version = await readVersion(client);
      const params = changesPageParams(sinceVersion, limit, after);
      const { rows } = await client.query<ReadingChangeRow>(
        after ? CHANGES_AFTER_SQL : CHANGES_SQL,
        params.readings,
      );
      const forecasts = await client.query<ForecastRow>(
        `SELECT zone, ts, kind, issued_at, value FROM forecasts WHERE version > $1 AND kind = $2
         ORDER BY version LIMIT $3`,
        params.forecasts,
      );
      return changesPage(version, rows, forecasts.rows, limit);
    });
  }

  async dataVersion(): Promise<number> {
    return readVersion(this.pool);
  }

  async acquireLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    // The server's clock, not the instances': their clocks may disagree.
    const { rowCount } = await this.pool.query(
      `INSERT INTO leases (name, holder, expires_at)
       VALUES ($1, $2, clock_timestamp() + $3 * interval '1 millisecond')
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
       WHERE leases.holder = excluded.holder OR leases.expires_at <= clock_timestamp()`,
      [name, holder, ttlMs],
    );
    return rowCount === 1;
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await this.pool.query(`DELETE FROM leases WHERE name = $1 AND holder = $2`, [name, holder]);
  }

  async recordIngestReport(report: IngestReport): Promise<void> {
    await this.pool.query(
      `INSERT INTO ingest_reports (source, started_at, finished_at, report)
       VALUES ($1, $2, $3, $4)`,
      [report.source, report.startedAt, report.finishedAt, JSON.stringify(report)],
    );
  }

  async latestIngestReports(): Promise<Partial<Record<SourceId, IngestReport>>> {
    const { rows } = await this.pool.query<{ report: IngestReport }>(
      `SELECT DISTINCT ON (source) report FROM ingest_reports ORDER BY source, id DESC`,
    );
    const reports: Partial<Record<SourceId, IngestReport>> = {};
    for (const { report } of rows) reports[report.source] = report;
    return reports;
  }

  // A row of the meta table, there since schema version 1: no migration, and every store made
  // before the mark existed reads as not synthetic.
  async markSynthetic(): Promise<void> {
    await this.pool.query(
      `INSERT INTO meta (key, value) VALUES ('synthetic', 1) ON CONFLICT (key) DO NOTHING`,
    );
  }

  async isSynthetic(): Promise<boolean> {
    const { rowCount } = await this.pool.query(`SELECT 1 FROM meta WHERE key = 'synthetic'`);
    return rowCount === 1;
  }

  async recomputeNeeded(): Promise<boolean> {
    const { rowCount } = await this.pool.query(`SELECT 1 FROM meta WHERE key = 'recompute_needed'`);
    return rowCount === 1;
  }

  async recomputeDone(): Promise<void> {
    await this.pool.query(`DELETE FROM meta WHERE key = 'recompute_needed'`);
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async problems(): Promise<readonly string[]> {
    // A hot standby, or a database set read-only, answers reads and refuses every write.
    const { rows } = await this.pool.query<{ read_only: string }>(
      `SELECT current_setting('transaction_read_only') AS read_only`,
    );
    return rows[0]?.read_only === 'on'
      ? [
          'the PostgreSQL database is read-only (a standby, or default_transaction_read_only): nothing new is stored',
        ]
      : [];
  }

  async subscribe(listener: () => void): Promise<() => Promise<void>> {
    let stopped = false;
    let client: Client | undefined;
    let retry: NodeJS.Timeout | undefined;
    const reconnect = () => {
      if (!stopped) retry = setTimeout(() => void listen().catch(reconnect), 1000);
    };
    // One dedicated connection outside the pool; when it drops (a restart), listen again.
    const listen = async (): Promise<void> => {
      const next = new Client({ connectionString: this.url, application_name: 'gridco2-listen' });
      next.on('error', () => undefined);
      try {
        await next.connect();
        await next.query(`LISTEN ${DATA_CHANNEL}`);
      } catch (error) {
        await next.end().catch(() => undefined);
        throw error;
      }
      client = next;
      next.on('notification', () => listener());
      next.on('end', () => {
        if (stopped) return;
        // Whatever was written while disconnected is picked up by this call or the next poll.
        listener();
        reconnect();
      });
    };
    await listen();
    return async () => {
      stopped = true;
      clearTimeout(retry);
      await client?.end().catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    // pool.end() throws when called twice; closing stays idempotent as with SQLite.
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
