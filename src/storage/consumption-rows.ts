import {
  type ConsumptionMixPoint,
  type ConsumptionRow,
  sortedByKey,
} from '../core/consumption/series-row.js';
import { TRACED_CATEGORIES, type TracedCategory } from '../core/consumption/trace-hour.js';
import type { Basis } from '../core/factors.js';
import type { FlowGraphId } from '../core/flows.js';
import { CONSUMPTION_METHOD } from '../core/reading.js';
import type { ConsumptionWrite } from './store.js';

/** What both backends do with the consumption series of one write before and after storing it. */

/**
 * Writes of consumption series listed for followers (`consumptionChangedFrom`): the newest this
 * many. A follower more writes behind reloads from the first hour of the oldest pruned write, kept
 * in meta with the newest version pruned.
 */
export const CONSUMPTION_WRITES_KEPT = 500;
export const PRUNED_VERSION_KEY = 'consumption_writes_pruned_version';
export const PRUNED_FROM_KEY = 'consumption_writes_pruned_from';

/**
 * `consumptionChangedFrom` of both backends, `since` the follower's version: the first hour of
 * the writes after it, or the first hour of every pruned write if it is older than one of them.
 */
export const changedFromSql = (since: string): string => `
  SELECT min(from_ts) AS from_ts FROM (
    SELECT from_ts FROM consumption_writes WHERE version > ${since}
    UNION ALL
    SELECT value FROM meta WHERE key = '${PRUNED_FROM_KEY}'
      AND ${since} < (SELECT value FROM meta WHERE key = '${PRUNED_VERSION_KEY}')
  ) AS replaced`;

/** The meta key of a graph's consumption cursor. */
export const consumptionCursorKey = (graph: FlowGraphId): string => `consumption_cursor:${graph}`;

/** The columns of the consumption table besides the key (zone, ts) and the version. */
export const VALUE_COLUMNS = [
  'graph',
  'lifecycle',
  'direct',
  'mix',
  'imports',
  'exports',
  'estimated_pct',
  'estimated_borders',
  'renewable_pct',
  'low_carbon_pct',
] as const;

/** `SET` of an upsert: every value column and the version from the row `from`. */
export const updateValues = (from: string): string =>
  [...VALUE_COLUMNS, 'version'].map((column) => `${column} = ${from}.${column}`).join(', ');

/** Whether the value columns of rows `a` and `b` differ, by the backend's null-safe operator. */
export const valuesDiffer = (a: string, b: string, operator: string): string =>
  `(${VALUE_COLUMNS.map((column) => `${a}.${column}`).join(', ')}) ${operator}
   (${VALUE_COLUMNS.map((column) => `${b}.${column}`).join(', ')})`;

/** The columns of a consumption row read as a Reading on `basis`. */
export const readingColumns = (basis: Basis): string =>
  `ts, ${basis} AS value, '${CONSUMPTION_METHOD[basis]}' AS method`;

/** The columns of a consumption row read as its traced mix (`toConsumptionMixPoint`). */
export const MIX_POINT_COLUMNS =
  'ts, mix, imports, exports, estimated_pct, estimated_borders, renewable_pct, low_carbon_pct';

/** A row as the columns of the consumption table, its records as JSON values. */
export interface ConsumptionColumns {
  readonly zone: string;
  readonly ts: number;
  readonly lifecycle: number;
  readonly direct: number;
  readonly mix: ConsumptionRow['consumption'];
  readonly imports: ConsumptionRow['imports'];
  readonly exports: ConsumptionRow['exports'];
  readonly estimated_pct: number;
  readonly estimated_borders: ConsumptionRow['estimatedBorders'];
  readonly renewable_pct: number;
  readonly low_carbon_pct: number;
}

/** The columns a traced mix is read from (MIX_POINT_COLUMNS), its records as JSON values. */
export type MixPointColumns = Omit<ConsumptionColumns, 'zone' | 'lifecycle' | 'direct'>;

function allFinite(record: Readonly<Record<string, number | undefined>>): boolean {
  for (const key in record) if (!Number.isFinite(record[key])) return false;
  return true;
}

const compareKeys = (a: ConsumptionRow, b: ConsumptionRow): number =>
  (a.zone < b.zone ? -1 : a.zone > b.zone ? 1 : 0) || a.ts - b.ts;

/**
 * The rows of a write as columns, in key order (PostgreSQL writers lock rows in one order and
 * cannot deadlock). Throws a RangeError on a row outside the write's hours, a key given twice or
 * a number that is not finite: such a write is a bug of its caller, and nothing of it is stored.
 */
export function consumptionColumns(write: ConsumptionWrite): ConsumptionColumns[] {
  const hours = new Set(write.hours);
  const sorted = [...write.rows].sort(compareKeys);
  return sorted.map((row, i) => {
    const where = `consumption row ${row.zone} ${row.ts}`;
    if (!hours.has(row.ts)) throw new RangeError(`${where} is outside the hours written`);
    const next = sorted[i + 1];
    if (next !== undefined && compareKeys(row, next) === 0) {
      throw new RangeError(`${where} is given twice`);
    }
    const finite =
      Number.isFinite(row.lifecycle) &&
      Number.isFinite(row.direct) &&
      Number.isFinite(row.estimatedPct) &&
      Number.isFinite(row.renewablePct) &&
      Number.isFinite(row.lowCarbonPct) &&
      allFinite(row.consumption) &&
      allFinite(row.imports) &&
      allFinite(row.exports);
    if (!finite) throw new RangeError(`${where} has a value not finite`);
    return {
      zone: row.zone,
      ts: row.ts,
      lifecycle: row.lifecycle,
      direct: row.direct,
      mix: row.consumption,
      imports: row.imports,
      exports: row.exports,
      estimated_pct: row.estimatedPct,
      estimated_borders: row.estimatedBorders,
      renewable_pct: row.renewablePct,
      low_carbon_pct: row.lowCarbonPct,
    };
  });
}

/** The traced mix of a stored row, its records in one order whatever the backend kept. */
export function toConsumptionMixPoint(columns: MixPointColumns): ConsumptionMixPoint {
  const consumption: Partial<Record<TracedCategory, number>> = {};
  for (const category of TRACED_CATEGORIES) {
    const mwh = columns.mix[category];
    if (mwh !== undefined) consumption[category] = mwh;
  }
  return {
    ts: columns.ts,
    consumption,
    imports: sortedByKey(columns.imports),
    exports: sortedByKey(columns.exports),
    estimatedPct: columns.estimated_pct,
    estimatedBorders: columns.estimated_borders,
    renewablePct: columns.renewable_pct,
    lowCarbonPct: columns.low_carbon_pct,
  };
}
