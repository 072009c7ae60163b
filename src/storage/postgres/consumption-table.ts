import type { Pool, PoolClient } from 'pg';
import type { ConsumptionMixPoint } from '../../core/consumption/series-row.js';
import type { Basis } from '../../core/factors.js';
import type { FlowGraphId } from '../../core/flows.js';
import { CONSUMPTION_METHOD, type Reading, type ZoneReading } from '../../core/reading.js';
import {
  type ConsumptionColumns,
  consumptionColumns,
  consumptionCursorKey,
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
      }
      if (write.cursor !== undefined) {
        await client.query(SET_CURSOR_SQL, [consumptionCursorKey(graph), write.cursor]);
      }
      return changed;
    });
  }

  async changedFrom(sinceVersion: number): Promise<number | null> {
    const { rows } = await this.pool.query<{ from_ts: number | null }>(
      `SELECT min(from_ts) AS from_ts FROM consumption_writes WHERE version > $1`,
      [sinceVersion],
    );
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
    zone: string,
    fromTs: number,
    toTs: number,
    limit: number,
    basis: Basis,
  ): Promise<Reading[]> {
    const { rows } = await this.pool.query<Reading>(
      `SELECT ts, ${basis} AS value, '${CONSUMPTION_METHOD[basis]}' AS method FROM consumption
       WHERE zone = $1 AND ts >= $2 AND ts < $3 ORDER BY ts LIMIT $4`,
      [zone, fromTs, toTs, limit],
    );
    return rows;
  }

  async latestPerZone(basis: Basis): Promise<ZoneReading[]> {
    const { rows } = await this.pool.query<ZoneReading>(
      newestPerZoneSql('consumption', basis, `'${CONSUMPTION_METHOD[basis]}'`),
    );
    return rows;
  }

  async mixesInWindow(
    zone: string,
    fromTs: number,
    toTs: number,
    limit: number,
  ): Promise<ConsumptionMixPoint[]> {
    const { rows } = await this.pool.query<
      Omit<ConsumptionColumns, 'zone' | 'lifecycle' | 'direct'>
    >(
      `SELECT ts, mix, imports, exports, estimated_pct, estimated_borders, renewable_pct,
         low_carbon_pct FROM consumption
       WHERE zone = $1 AND ts >= $2 AND ts < $3 ORDER BY ts LIMIT $4`,
      [zone, fromTs, toTs, limit],
    );
    return rows.map(toConsumptionMixPoint);
  }
}
