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
import type { PayloadFailure } from '../adapter.js';
import { readKeyedPage, type KeyedPage } from './parse.js';

/** Respondent code → type (`D`, `DF`, `NG`, `TI`) → hour start → MWh. */
export type RegionDataResult = KeyedPage<'region-data', 'respondents'> | PayloadFailure;

export function parseRegionData(body: string): RegionDataResult {
  return readKeyedPage(body, ['respondent', 'type'], 'region-data', 'respondents');
}
