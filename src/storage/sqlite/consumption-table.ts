import type Database from 'better-sqlite3';
import type { ConsumptionMixPoint } from '../../core/consumption/series-row.js';
import type { Basis } from '../../core/factors.js';
import type { FlowGraphId } from '../../core/flows.js';
import { CONSUMPTION_METHOD, type Reading, type ZoneReading } from '../../core/reading.js';
import {
  changedFromSql,
  CONSUMPTION_WRITES_KEPT,
  type ConsumptionColumns,
  consumptionColumns,
  consumptionCursorKey,
  MIX_POINT_COLUMNS,
  PRUNED_FROM_KEY,
  PRUNED_VERSION_KEY,
  readingColumns,
  toConsumptionMixPoint,
  VALUE_COLUMNS,
} from '../consumption-rows.js';
import type { ConsumptionTable } from '../sql-store-base.js';
import type { ConsumptionWrite } from '../store.js';
import { SQLITE_WINDOW_PARAMS, zoneWindowSql } from '../zone-window.js';

const keyOf = (zone: string, ts: number): string => `${zone}\u0000${ts}`;

/** A row's JSON columns as text: written once per row, both to compare and to store. */
interface RowText {
  readonly mix: string;
  readonly imports: string;
  readonly exports: string;
  readonly estimatedBorders: string;
}

const textOf = (row: ConsumptionColumns): RowText => ({
  mix: JSON.stringify(row.mix),
  imports: JSON.stringify(row.imports),
  exports: JSON.stringify(row.exports),
  estimatedBorders: JSON.stringify(row.estimated_borders),
});

/**
 * Whether a stored row (zone, ts, then VALUE_COLUMNS, as `storedRows` reads it) holds `row`'s
 * values: its JSON columns compared as text with `row`'s, written the one way JSON.stringify
 * writes them (text stored otherwise is found different, and written again).
 */
function sameRow(
  stored: readonly unknown[],
  graph: FlowGraphId,
  row: ConsumptionColumns,
  text: RowText,
): boolean {
  return (
    stored[2] === graph &&
    stored[3] === row.lifecycle &&
    stored[4] === row.direct &&
    stored[8] === row.estimated_pct &&
    stored[10] === row.renewable_pct &&
    stored[11] === row.low_carbon_pct &&
    stored[5] === text.mix &&
    stored[6] === text.imports &&
    stored[7] === text.exports &&
    stored[9] === text.estimatedBorders
  );
}

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
      // The stored rows of a write's hours (and of the hours between them), to compare.
      storedRows: db
        .prepare(
          `SELECT zone, ts, ${VALUE_COLUMNS.join(', ')} FROM consumption
           WHERE graph = ? AND ts >= ? AND ts <= ?`,
        )
        .raw(),
      remove: db.prepare(`DELETE FROM consumption WHERE zone = ? AND ts = ?`),
      // Only rows that differ from the stored ones are written: each replaces its row whole.
      upsert: db.prepare(
        `INSERT OR REPLACE INTO consumption (zone, ts, ${VALUE_COLUMNS.join(', ')}, version)
         VALUES (${Array.from({ length: VALUE_COLUMNS.length + 3 }, () => '?').join(', ')})`,
      ),
      recordWrite: db.prepare(
        `INSERT INTO consumption_writes (version, graph, from_ts) VALUES (?, ?, ?)`,
      ),
      changedFrom: db.prepare(changedFromSql('@since')).pluck(),
      // The version of the newest write past the CONSUMPTION_WRITES_KEPT newest.
      pruneHorizon: db
        .prepare(`SELECT version FROM consumption_writes ORDER BY version DESC LIMIT 1 OFFSET ?`)
        .pluck(),
      prunedFrom: db
        .prepare(`SELECT min(from_ts) FROM consumption_writes WHERE version <= ?`)
        .pluck(),
      prune: db.prepare(`DELETE FROM consumption_writes WHERE version <= ?`),
      keepLowest: db.prepare(
        `INSERT INTO meta (key, value) VALUES (?, ?)
         ON CONFLICT (key) DO UPDATE SET value = min(value, excluded.value)`,
      ),
      dataVersion: db.prepare(`SELECT value FROM meta WHERE key = 'data_version'`).pluck(),
      bumpVersion: db.prepare(`UPDATE meta SET value = value + 1 WHERE key = 'data_version'`),
      cursor: db.prepare(`SELECT value FROM meta WHERE key = ?`).pluck(),
      setMeta: db.prepare(
        `INSERT INTO meta (key, value) VALUES (?, ?)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      ),
      window: onBasis((basis) =>
        db.prepare(zoneWindowSql(readingColumns(basis), 'consumption', SQLITE_WINDOW_PARAMS)),
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
      mixes: db.prepare(zoneWindowSql(MIX_POINT_COLUMNS, 'consumption', SQLITE_WINDOW_PARAMS)),
    };
  }

  replace(graph: FlowGraphId, write: ConsumptionWrite): number {
    const columns = consumptionColumns(write);
    return this.inWriteTransaction(() => this.replaceLocked(graph, write, columns));
  }

  /**
   * Runs inside the store's write transaction, which holds the write lock. Reads the stored rows
   * of the hours first and writes only those that differ: re-solving hours whose inputs did not
   * change writes nothing.
   */
  private replaceLocked(
    graph: FlowGraphId,
    write: ConsumptionWrite,
    columns: readonly ConsumptionColumns[],
  ): number {
    const { storedRows, remove, upsert, recordWrite, dataVersion, bumpVersion, setMeta } =
      this.statements;
    // The version this write takes if it changes a row.
    const version = (dataVersion.get() as number) + 1;
    const hours = new Set(write.hours);
    const stored = new Map<string, unknown[]>();
    if (hours.size > 0) {
      const rows = storedRows.all(graph, Math.min(...hours), Math.max(...hours)) as unknown[][];
      for (const row of rows) {
        if (hours.has(row[1] as number)) stored.set(keyOf(row[0] as string, row[1] as number), row);
      }
    }
    let changed = 0;
    for (const row of columns) {
      const text = textOf(row);
      // A first solve finds nothing stored: no key to build.
      if (stored.size > 0) {
        const key = keyOf(row.zone, row.ts);
        const before = stored.get(key);
        stored.delete(key);
        if (before !== undefined && sameRow(before, graph, row, text)) continue;
      }
      upsert.run(
        row.zone,
        row.ts,
        graph,
        row.lifecycle,
        row.direct,
        text.mix,
        text.imports,
        text.exports,
        row.estimated_pct,
        text.estimatedBorders,
        row.renewable_pct,
        row.low_carbon_pct,
        version,
      );
      changed++;
    }
    // What is left of the stored rows: zones no longer solved in their hour.
    for (const [zone, ts] of stored.values()) changed += remove.run(zone, ts).changes;
    if (changed > 0) {
      bumpVersion.run();
      recordWrite.run(version, graph, Math.min(...write.hours));
      this.pruneWrites();
    }
    if (write.cursor !== undefined) setMeta.run(consumptionCursorKey(graph), write.cursor);
    return changed;
  }

  /** Keeps the CONSUMPTION_WRITES_KEPT newest writes listed, and what the others leave. */
  private pruneWrites(): void {
    const { pruneHorizon, prunedFrom, prune, setMeta, keepLowest } = this.statements;
    const horizon = pruneHorizon.get(CONSUMPTION_WRITES_KEPT) as number | undefined;
    if (horizon === undefined) return;
    keepLowest.run(PRUNED_FROM_KEY, prunedFrom.get(horizon) as number);
    setMeta.run(PRUNED_VERSION_KEY, horizon);
    prune.run(horizon);
  }

  changedFrom(sinceVersion: number): number | null {
    return (this.statements.changedFrom.get({ since: sinceVersion }) as number | null) ?? null;
  }

  cursor(graph: FlowGraphId): number | null {
    return (this.statements.cursor.get(consumptionCursorKey(graph)) as number | undefined) ?? null;
  }

  inWindow(
    ...[zone, fromTs, toTs, limit, basis]: Parameters<ConsumptionTable['inWindow']>
  ): Reading[] {
    return this.statements.window[basis].all(zone, fromTs, toTs, limit) as Reading[];
  }

  latestPerZone(basis: Basis): ZoneReading[] {
    return this.statements.latest[basis].all() as ZoneReading[];
  }

  mixesInWindow(...window: Parameters<ConsumptionTable['mixesInWindow']>): ConsumptionMixPoint[] {
    const rows = this.statements.mixes.all(...window) as MixRow[];
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
