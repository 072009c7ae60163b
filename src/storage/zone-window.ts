/**
 * The windowed read of both backends, in one place: a zone's rows of a table with
 * `from <= ts < to`, ascending, at most `limit` (the Store's `...InWindow` reads).
 */

/** How a backend spells the parameters zone, from, to and limit, in that order. */
export type WindowParams = readonly [zone: string, from: string, to: string, limit: string];

export const POSTGRES_WINDOW_PARAMS: WindowParams = ['$1', '$2', '$3', '$4'];
export const SQLITE_WINDOW_PARAMS: WindowParams = ['?', '?', '?', '?'];

/** The query of `select` over a zone's window of `table`, its rows where `where` holds. */
export const zoneWindowSql = (
  select: string,
  table: string,
  [zone, from, to, limit]: WindowParams,
  where = 'true',
): string =>
  `SELECT ${select} FROM ${table}
   WHERE zone = ${zone} AND ts >= ${from} AND ts < ${to} AND ${where} ORDER BY ts LIMIT ${limit}`;
