import type { Pool, PoolClient } from 'pg';
import type { ConsumptionMixPoint } from '../../core/consumption/series-row.js';
import type { Basis } from '../../core/factors.js';
import type { FlowGraphId } from '../../core/flows.js';
import { CONSUMPTION_METHOD, type Reading, type ZoneReading } from '../../core/reading.js';
import {
  changedFromSql,
  CONSUMPTION_WRITES_KEPT,
  consumptionColumns,
  consumptionCursorKey,
  MIX_POINT_COLUMNS,
  type MixPointColumns,
  PRUNED_FROM_KEY,
  PRUNED_VERSION_KEY,
  readingColumns,
  toConsumptionMixPoint,
  updateValues,
  VALUE_COLUMNS,
  valuesDiffer,
} from '../consumption-rows.js';
import type { ConsumptionTable } from '../sql-store-base.js';
import type { ConsumptionWrite } from '../store.js';
import {
  lockNextVersion,
  newestPerZoneSql,
  nextVersion,
  queryZoneWindow,
  upsertInPieces,
} from './versioned-writes.js';

// Rows of the hours written that are no longer solved.
const REMOVE_UNSOLVED_SQL = `
  DELETE FROM consumption WHERE graph = $1 AND ts = ANY($2::bigint[])
  AND (zone, ts) NOT IN (SELECT * FROM unnest($3::text[], $4::bigint[]))`;

// A row stored again with the same values keeps its version: it did not change.
const UPSERT_SQL = `
  INSERT INTO consumption (zone, ts, ${VALUE_COLUMNS.join(', ')}, version)
  SELECT zone, ts, $1, ${VALUE_COLUMNS.slice(1).join(', ')}, $3
  FROM json_to_recordset($2::json) AS chunk (
    zone text, ts bigint, lifecycle double precision, direct double precision, mix jsonb,
    imports jsonb, exports jsonb, estimated_pct double precision, estimated_borders jsonb,
    renewable_pct double precision, low_carbon_pct double precision)
  ON CONFLICT (zone, ts) DO UPDATE SET ${updateValues('excluded')}
  WHERE ${valuesDiffer('consumption', 'excluded', 'IS DISTINCT FROM')}`;

// Keeps the $1 newest writes listed: the first hour of those pruned (the lowest yet) and the
// newest version pruned go to meta, in one statement.
const PRUNE_WRITES_SQL = `
  WITH horizon AS (
    SELECT version FROM consumption_writes ORDER BY version DESC LIMIT 1 OFFSET $1
  ), pruned AS (
    DELETE FROM consumption_writes WHERE version <= (SELECT version FROM horizon)
    RETURNING version, from_ts
  ), lowest AS (
    INSERT INTO meta (key, value) SELECT '${PRUNED_FROM_KEY}', min(from_ts) FROM pruned
    HAVING count(*) > 0
    ON CONFLICT (key) DO UPDATE SET value = least(meta.value, excluded.value)
  )
  INSERT INTO meta (key, value) SELECT '${PRUNED_VERSION_KEY}', max(version) FROM pruned
  HAVING count(*) > 0
  ON CONFLICT (key) DO UPDATE SET value = excluded.value`;

const SET_CURSOR_SQL = `
  INSERT INTO meta (key, value) VALUES ($1, $2)
  ON CONFLICT (key) DO UPDATE SET value = excluded.value`;

/** The consumption series of the PostgreSQL store (extensions §15). */
export class PostgresConsumptionTable implements ConsumptionTable {
  constructor(
    private readonly pool: Pool,
    /** The store's write transaction. */
    private readonly inTransaction: <T>(work: (client: PoolClient) => Promise<T>) => Promise<T>,
  ) {}

  async replace(graph: FlowGraphId, write: ConsumptionWrite): Promise<number> {
    const columns = consumptionColumns(write);
    return this.inTransaction(async (client) => {
      const version = await lockNextVersion(client);
      const removed = await client.query(REMOVE_UNSOLVED_SQL, [
        graph,
        write.hours,
        columns.map((row) => row.zone),
        columns.map((row) => row.ts),
      ]);
      const changed =
        (removed.rowCount ?? 0) +
        (await upsertInPieces(client, UPSERT_SQL, columns, (piece) => [graph, piece, version]));
      if (changed > 0) {
        await nextVersion(client);
        await client.query(
          `INSERT INTO consumption_writes (version, graph, from_ts) VALUES ($1, $2, $3)`,
          [version, graph, Math.min(...write.hours)],
        );
        await client.query(PRUNE_WRITES_SQL, [CONSUMPTION_WRITES_KEPT]);
      }
      if (write.cursor !== undefined) {
        await client.query(SET_CURSOR_SQL, [consumptionCursorKey(graph), write.cursor]);
      }
      return changed;
    });
  }

  async changedFrom(sinceVersion: number): Promise<number | null> {
    const { rows } = await this.pool.query<{ from_ts: number | null }>(changedFromSql('$1'), [
      sinceVersion,
    ]);
    return rows[0]?.from_ts ?? null;
  }

  async cursor(graph: FlowGraphId): Promise<number | null> {
    const { rows } = await this.pool.query<{ value: number }>(
      `SELECT value FROM meta WHERE key = $1`,
      [consumptionCursorKey(graph)],
    );
    return rows[0]?.value ?? null;
  }

  async inWindow(
    ...[zone, fromTs, toTs, limit, basis]: Parameters<ConsumptionTable['inWindow']>
  ): Promise<Reading[]> {
    const select = readingColumns(basis);
    return queryZoneWindow(this.pool, select, 'consumption', [zone, fromTs, toTs, limit]);
  }

  async latestPerZone(basis: Basis): Promise<ZoneReading[]> {
    const { rows } = await this.pool.query<ZoneReading>(
      newestPerZoneSql('consumption', basis, `'${CONSUMPTION_METHOD[basis]}'`),
    );
    return rows;
  }

  async mixesInWindow(
    ...window: Parameters<ConsumptionTable['mixesInWindow']>
  ): Promise<ConsumptionMixPoint[]> {
    const rows = await queryZoneWindow<MixPointColumns>(
      this.pool,
      MIX_POINT_COLUMNS,
      'consumption',
      window,
    );
    return rows.map(toConsumptionMixPoint);
  }
}
