import type Database from 'better-sqlite3';
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

const KEYS = VALUE_COLUMNS.map((column) => `@${column}`).join(', ');

interface MixRow {
  ts: number;
  mix: string;
  imports: string;
  exports: string;
  estimated_pct: number;
  estimated_borders: string;
  renewable_pct: number;
  low_carbon_pct: number;
}

/** The consumption series of the SQLite store (extensions §15). */
export class SqliteConsumptionTable implements ConsumptionTable {
  private readonly statements;

  constructor(
    db: Database.Database,
    /** The store's write transaction, which takes the write lock first. */
    private readonly inWriteTransaction: <T>(work: () => T) => T,
  ) {
    const onBasis = <T>(make: (basis: Basis) => T) => ({
      lifecycle: make('lifecycle'),
      direct: make('direct'),
    });
    this.statements = {
      // Rows of the hour no longer solved; the JSON array lists the zones solved.
      removeUnsolved: db.prepare(
        `DELETE FROM consumption WHERE graph = ? AND ts = ?
         AND zone NOT IN (SELECT value FROM json_each(?))`,
      ),
      // A row stored again with the same values keeps its version: it did not change.
      upsert: db.prepare(
        `INSERT INTO consumption (zone, ts, ${VALUE_COLUMNS.join(', ')}, version)
         VALUES (@zone, @ts, ${KEYS}, @version)
         ON CONFLICT (zone, ts) DO UPDATE SET ${updateValues('excluded')}
         WHERE ${valuesDiffer('consumption', 'excluded', 'IS NOT')}`,
      ),
      recordWrite: db.prepare(
        `INSERT INTO consumption_writes (version, graph, from_ts) VALUES (?, ?, ?)`,
      ),
      changedFrom: db
        .prepare(`SELECT min(from_ts) FROM consumption_writes WHERE version > ?`)
        .pluck(),
      dataVersion: db.prepare(`SELECT value FROM meta WHERE key = 'data_version'`).pluck(),
      bumpVersion: db.prepare(`UPDATE meta SET value = value + 1 WHERE key = 'data_version'`),
      cursor: db.prepare(`SELECT value FROM meta WHERE key = ?`).pluck(),
      setCursor: db.prepare(
        `INSERT INTO meta (key, value) VALUES (?, ?)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      ),
      window: onBasis((basis) =>
        db.prepare(
          `SELECT ts, ${basis} AS value, '${CONSUMPTION_METHOD[basis]}' AS method FROM consumption
           WHERE zone = ? AND ts >= ? AND ts < ? ORDER BY ts LIMIT ?`,
        ),
      ),
      // One probe for the next zone and one for its newest row: the cost grows with the zones,
      // not with the rows.
      latest: onBasis((basis) =>
        db.prepare(
          `WITH RECURSIVE zones (zone) AS (
             SELECT min(zone) FROM consumption
             UNION ALL
             SELECT (SELECT min(zone) FROM consumption WHERE zone > zones.zone) FROM zones
             WHERE zones.zone IS NOT NULL)
           SELECT zones.zone, newest.ts, newest.${basis} AS value,
             '${CONSUMPTION_METHOD[basis]}' AS method
           FROM zones JOIN consumption newest ON newest.zone = zones.zone
             AND newest.ts = (SELECT max(ts) FROM consumption WHERE zone = zones.zone)
           ORDER BY zones.zone`,
        ),
      ),
      mixes: db.prepare(
        `SELECT ts, mix, imports, exports, estimated_pct, estimated_borders, renewable_pct,
           low_carbon_pct FROM consumption
         WHERE zone = ? AND ts >= ? AND ts < ? ORDER BY ts LIMIT ?`,
      ),
    };
  }

  replace(graph: FlowGraphId, write: ConsumptionWrite): number {
    const columns = consumptionColumns(write);
    return this.inWriteTransaction(() => this.replaceLocked(graph, write, columns));
  }

  private replaceLocked(
    graph: FlowGraphId,
    write: ConsumptionWrite,
    columns: readonly ConsumptionColumns[],
  ): number {
    const { removeUnsolved, upsert, recordWrite, dataVersion, bumpVersion, setCursor } =
      this.statements;
    // The version this write takes if it changes a row.
    const version = (dataVersion.get() as number) + 1;
    const solved = new Map<number, string[]>(write.hours.map((hour) => [hour, []]));
    for (const row of columns) solved.get(row.ts)!.push(row.zone);
    let changed = 0;
    for (const [hour, zones] of solved) {
      changed += removeUnsolved.run(graph, hour, JSON.stringify(zones)).changes;
    }
    for (const row of columns) {
      changed += upsert.run({
        ...row,
        graph,
        mix: JSON.stringify(row.mix),
        imports: JSON.stringify(row.imports),
        exports: JSON.stringify(row.exports),
        estimated_borders: JSON.stringify(row.estimated_borders),
        version,
      }).changes;
    }
    if (changed > 0) {
      bumpVersion.run();
      recordWrite.run(version, graph, Math.min(...write.hours));
    }
    if (write.cursor !== undefined) setCursor.run(consumptionCursorKey(graph), write.cursor);
    return changed;
  }

  changedFrom(sinceVersion: number): number | null {
    return (this.statements.changedFrom.get(sinceVersion) as number | null) ?? null;
  }

  cursor(graph: FlowGraphId): number | null {
    return (this.statements.cursor.get(consumptionCursorKey(graph)) as number | undefined) ?? null;
  }

  inWindow(zone: string, fromTs: number, toTs: number, limit: number, basis: Basis): Reading[] {
    return this.statements.window[basis].all(zone, fromTs, toTs, limit) as Reading[];
  }

  latestPerZone(basis: Basis): ZoneReading[] {
    return this.statements.latest[basis].all() as ZoneReading[];
  }

  mixesInWindow(zone: string, fromTs: number, toTs: number, limit: number): ConsumptionMixPoint[] {
    const rows = this.statements.mixes.all(zone, fromTs, toTs, limit) as MixRow[];
    return rows.map((row) =>
      toConsumptionMixPoint({
        ...row,
        mix: JSON.parse(row.mix) as Record<string, number>,
        imports: JSON.parse(row.imports) as Record<string, number>,
        exports: JSON.parse(row.exports) as Record<string, number>,
        estimated_borders: JSON.parse(row.estimated_borders) as string[],
      }),
    );
  }
}
