/**
 * Pure parser of EIA API v2 `electricity/rto/interchange-data` JSON replies, hourly
 * (docs/upstreams.md §9.4): the net interchange each balancing authority reports with each of
 * its neighbours.
 *
 *     parseInterchangeData(body: string): InterchangeDataResult
 *
 *   - `interchange`: `fromba` -> `toba` -> hour START (EIA's `period` labels the end) -> MW, as
 *     reported: positive when `fromba` exports to `toba`. Both members of a pair report it, and
 *     each report stays its reporter's (`A -> B` is A's, `B -> A` is B's); nothing is netted or
 *     checked against the other side here. With `total`, `rows`, `truncated` and `dropped` as for
 *     fuel-type-data (same envelope, paging and error shapes).
 *   - `upstream-error`, `invalid-payload`: as for fuel-type-data.
 */
import type { PayloadFailure } from '../adapter.js';
import { readKeyedPage, type KeyedPage } from './parse.js';

/** Reporter (`fromba`) -> neighbour (`toba`) -> hour start -> MW from reporter to neighbour. */
export type InterchangeDataResult = KeyedPage<'interchange', 'reported'> | PayloadFailure;

export function parseInterchangeData(body: string): InterchangeDataResult {
  return readKeyedPage(body, ['fromba', 'toba'], 'interchange', 'reported');
}
