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
import { readKeyedPage, type PageCounts } from './parse.js';

export type RegionDataResult =
  | ({
      readonly kind: 'region-data';
      /** Respondent code → type (`D`, `DF`, `NG`, `TI`) → hour start → MWh. */
      readonly respondents: ReadonlyMap<string, ReadonlyMap<string, ReadonlyMap<number, number>>>;
    } & PageCounts)
  | PayloadFailure;

export function parseRegionData(body: string): RegionDataResult {
  const page = readKeyedPage(body, ['respondent', 'type']);
  if (page.kind !== 'rows') return page;
  const { byKeys, ...counts } = page;
  return { ...counts, kind: 'region-data', respondents: byKeys };
}
