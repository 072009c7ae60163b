import type { StoredForecast } from '../core/reading.js';
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
