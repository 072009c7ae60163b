import type { Basis } from '../core/factors.js';
import {
  BASIS_METHOD,
  type Method,
  type Mix,
  type StoredForecast,
  type StoredReading,
} from '../core/reading.js';
import { SERVED_FORECAST_KIND } from '../core/served-forecast.js';
import { type ForecastRow, toForecast } from './forecast-row.js';
import { lastPerKey } from './last-per-key.js';
import type { ReadingChange, ReadingChanges, StoreKey } from './store.js';

/**
 * Rows of the `readings` table as both backends read them, mapped to the store's types in one
 * place. A flag is a boolean in PostgreSQL and 0 or 1 in SQLite; a mix is JSONB in PostgreSQL
 * and JSON text in SQLite.
 */

export const READING_COLUMNS = 'zone, ts, value, method, complete, mix, lifecycle, direct';

/**
 * A reading published on `basis` (undefined: the default one): the columns of its value and
 * method, and the condition its row meets (`complete` holds 1 or true).
 */
export function publishedOn(basis: Basis | undefined): {
  value: string;
  method: string;
  where: string;
} {
  if (basis === undefined) return { value: 'value', method: 'method', where: 'complete' };
  return { value: basis, method: `'${BASIS_METHOD[basis]}'`, where: `${basis} IS NOT NULL` };
}

export const CHANGE_COLUMNS =
  'zone, ts, value, method, complete AS published, lifecycle, direct, version';

export interface ReadingRow {
  zone: string;
  ts: number;
  value: number | null;
  method: Method;
  complete: boolean | number;
  mix: Mix | string | null;
  lifecycle: number | null;
  direct: number | null;
}

export type ReadingChangeRow = Omit<ReadingChange, 'published'> & { published: boolean | number };

export const toStoredReading = (row: ReadingRow): StoredReading => ({
  zone: row.zone,
  ts: row.ts,
  value: row.value,
  method: row.method,
  complete: Boolean(row.complete),
  mix: typeof row.mix === 'string' ? (JSON.parse(row.mix) as Mix) : row.mix,
  lifecycle: row.lifecycle,
  direct: row.direct,
});

const toReadingChange = (row: ReadingChangeRow): ReadingChange => ({
  zone: row.zone,
  ts: row.ts,
  value: row.value,
  method: row.method,
  published: Boolean(row.published),
  lifecycle: row.lifecycle,
  direct: row.direct,
  version: row.version,
});

/**
 * The parameters of the reads of one page of changes (Store.changesSince), in the order of both
 * backends' queries. Each reads one row more than `limit`, so changesPage can tell a full page
 * from a complete one. The readings follow the version `sinceVersion`, or, with `after`, the key
 * `after` within the write `sinceVersion + 1` that the previous page stopped inside; the
 * forecasts always follow `sinceVersion`.
 */
export function changesPageParams(sinceVersion: number, limit: number, after?: StoreKey) {
  const rows = limit + 1;
  return {
    readings: after ? [sinceVersion + 1, after.zone, after.ts, rows] : [sinceVersion, rows],
    forecasts: [sinceVersion, SERVED_FORECAST_KIND, rows],
  };
}

/**
 * One page of changes from rows read with one more than `limit` each: a page that had more
 * than the limit of either is not complete, and its follower reloads instead.
 */
export function changesPage(
  version: number,
  rows: readonly ReadingChangeRow[],
  forecasts: readonly ForecastRow[],
  limit: number,
): ReadingChanges {
  return {
    version,
    complete: rows.length <= limit && forecasts.length <= limit,
    changes: rows.slice(0, limit).map(toReadingChange),
    forecasts: forecasts.slice(0, limit).map(toForecast),
  };
}

const compareKeys = (a: StoreKey, b: StoreKey): number =>
  a.zone < b.zone ? -1 : a.zone > b.zone ? 1 : a.ts - b.ts;

const compareForecasts = (a: StoredForecast, b: StoredForecast): number =>
  compareKeys(a, b) || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0) || a.issuedAt - b.issuedAt;

/** One reading (or mix) per (zone, ts), in key order. */
export const lastReadingPerKey = <T extends StoreKey>(readings: readonly T[]): T[] =>
  lastPerKey(readings, compareKeys);

/** One forecast per (zone, kind, ts, issuedAt), in key order: several feeds may repeat one. */
export const lastForecastPerKey = (forecasts: readonly StoredForecast[]): StoredForecast[] =>
  lastPerKey(forecasts, compareForecasts);
