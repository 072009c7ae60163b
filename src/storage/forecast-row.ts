import type { ForecastColumns, StoredForecast } from '../core/reading.js';
import type { ForecastKind } from '../core/sources.js';

/** A row of the `forecasts` table, as both backends read it. */
export interface ForecastRow {
  zone: string;
  ts: number;
  kind: ForecastKind;
  issued_at: number;
  value: number;
}

export const toForecast = (row: ForecastRow): StoredForecast => ({
  zone: row.zone,
  ts: row.ts,
  kind: row.kind,
  issuedAt: row.issued_at,
  value: row.value,
});

/**
 * `[ts, issued_at, value]` rows as columns. Given an iterator (SQLite's), no row outlives its
 * turn: a year of a zone's forecasts read whole, a million small arrays, would be copied by the
 * garbage collector until the last is read.
 */
export function forecastColumns(
  rows: Iterable<readonly [ts: number, issuedAt: number, value: number]>,
): ForecastColumns {
  let ts = new Float64Array(1024);
  let issuedAt = new Float64Array(1024);
  let value = new Float64Array(1024);
  let length = 0;
  for (const row of rows) {
    if (length === ts.length) {
      const grow = (column: Float64Array) => {
        const grown = new Float64Array(2 * column.length);
        grown.set(column);
        return grown;
      };
      [ts, issuedAt, value] = [grow(ts), grow(issuedAt), grow(value)];
    }
    ts[length] = row[0];
    issuedAt[length] = row[1];
    value[length++] = row[2];
  }
  return {
    ts: ts.slice(0, length),
    issuedAt: issuedAt.slice(0, length),
    value: value.slice(0, length),
  };
}
