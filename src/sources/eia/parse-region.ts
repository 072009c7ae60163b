/**
 * Pure parser of EIA API v2 `electricity/rto/region-data` JSON replies, hourly (docs/upstreams.md
 * §2.6): demand (`D`), day-ahead demand forecast (`DF`), net generation (`NG`), total interchange
 * (`TI`) per respondent.
 *
 *     parseRegionData(body: string): RegionDataResult
 *
 *   - `region-data`: respondent → type → hour START (EIA's `period` labels the end) → MWh (the
 *     mean MW of the hour), with `total`, `rows`, `truncated` and `dropped` as for fuel-type-data.
 *     Types are kept as published: every type has its own frontier (DF runs hours past D, D many
 *     hours past NG), so nothing is inferred from one type about another. A `null` value is no
 *     figure for that hour; string numbers are read.
 *   - `upstream-error`, `invalid-payload`: as for fuel-type-data.
 */
import { isPlainObject, parseDecimal } from '../../core/payload.js';
import { HOUR } from '../../core/time.js';
import type { PayloadFailure } from '../adapter.js';
import { readPageEnvelope, readPeriod, type PageCounts } from './parse.js';

export type RegionDataResult =
  | ({
      readonly kind: 'region-data';
      /** Respondent code → type (`D`, `DF`, `NG`, `TI`) → hour start → MWh. */
      readonly respondents: ReadonlyMap<string, ReadonlyMap<string, ReadonlyMap<number, number>>>;
    } & PageCounts)
  | PayloadFailure;

export function parseRegionData(body: string): RegionDataResult {
  const page = readPageEnvelope(body);
  if (page.kind !== 'page') return page;
  const dropped: string[] = [];
  const respondents = new Map<string, Map<string, Map<number, number>>>();
  page.data.forEach((row, index) => {
    if (!isPlainObject(row)) {
      dropped.push(`row ${index}: not an object`);
      return;
    }
    const { respondent, type, period, value } = row;
    if (typeof respondent !== 'string' || respondent === '') {
      dropped.push(`row ${index}: no respondent`);
      return;
    }
    // Keyed on the code, never on `type-name` (whose wording changes).
    if (typeof type !== 'string' || type === '') {
      dropped.push(`row ${index}: no type`);
      return;
    }
    const hourEnd = readPeriod(period);
    if (hourEnd === undefined) {
      dropped.push(`row ${index}: period ${JSON.stringify(period)} is not YYYY-MM-DDTHH`);
      return;
    }
    if (value === null) return;
    const mwh = parseDecimal(value);
    if (mwh === undefined) {
      dropped.push(`row ${index}: value ${JSON.stringify(value)} is not a number`);
      return;
    }
    const byType = respondents.get(respondent) ?? new Map<string, Map<number, number>>();
    respondents.set(respondent, byType);
    const series = byType.get(type) ?? new Map<number, number>();
    byType.set(type, series);
    const hourStart = hourEnd - HOUR;
    if (series.has(hourStart)) {
      dropped.push(`row ${index}: repeats ${respondent} ${type} ${String(period)}`);
      return;
    }
    series.set(hourStart, mwh);
  });
  return {
    kind: 'region-data',
    respondents,
    total: page.total,
    rows: page.data.length,
    truncated: page.truncated,
    dropped,
  };
}
