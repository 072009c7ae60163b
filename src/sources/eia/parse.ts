/**
 * Pure parser of EIA API v2 `electricity/rto/fuel-type-data` JSON replies (hourly frequency).
 * Format and quirks: docs/upstreams.md §2.1–2.5.
 *
 * Stable contract for the fetching side (`index.ts`):
 *
 *     parseFuelTypeData(body: string): FuelTypeDataResult
 *
 *   - `generation`: hourly generation per fueltype for every respondent in the page, values as
 *     published (storage codes included: the method excludes them), keyed by the hour's START
 *     (EIA's `period` labels the end). `total` is the number of rows matching the query over all
 *     pages; `truncated` is EIA's warning that this page stops at its row limit (page on with
 *     `offset`); `rows` is how many rows this page held; `dropped` lists unusable rows.
 *     An empty result (`total: 0, data: []`) is a valid `generation` with no respondents.
 *   - `upstream-error`: an error body, whatever the HTTP status (both shapes EIA uses).
 *   - `invalid-payload`: not JSON, or JSON of another shape.
 *
 * EIA echoes the caller's API key in `request.params.api_key`: nothing of `request` is kept, and the
 * key is blanked out of error messages. The parser never throws on a bad payload.
 */
import type { HourlySeries } from '../../core/generation.js';
import { isPlainObject, parseDecimal, parseJson, type PlainObject } from '../../core/payload.js';
import { HOUR, parseInstant } from '../../core/time.js';
import type { PayloadFailure } from '../adapter.js';

/** What a page of any EIA v2 data route tells besides its rows (module header). */
interface PageCounts {
  readonly total: number;
  readonly rows: number;
  readonly truncated: boolean;
  readonly dropped: readonly string[];
}

/**
 * A page of a route whose rows are keyed by two codes, read as a result of `Kind`: first code ->
 * second code -> hour start -> MWh under `Field`, with the page's counts.
 */
export type KeyedPage<Kind extends string, Field extends string> = {
  readonly kind: Kind;
} & {
  readonly [field in Field]: ReadonlyMap<string, ReadonlyMap<string, HourlySeries>>;
} & PageCounts;

/** Respondent code (`PJM`, `US48`…) → hourly generation per fueltype. */
export type FuelTypeDataResult = KeyedPage<'generation', 'respondents'> | PayloadFailure;

// Both names have been seen for the "only 5000 rows returned" warning (docs/upstreams.md §2.1).
const PAGING_WARNINGS = new Set(['incomplete return', 'parameter out of range']);

export function parseFuelTypeData(body: string): FuelTypeDataResult {
  return readKeyedPage(body, ['respondent', 'fueltype'], 'generation', 'respondents');
}

/**
 * One page of a route whose rows are keyed by two codes (its envelope, then its rows), as a
 * result of `kind` with the rows under `field`.
 */
export function readKeyedPage<Kind extends string, Field extends string>(
  body: string,
  keys: readonly [string, string],
  kind: Kind,
  field: Field,
): KeyedPage<Kind, Field> | PayloadFailure {
  const page = readPageEnvelope(body);
  if (page.kind !== 'page') return page;
  const dropped: string[] = [];
  // A key computed from a type parameter widens to `string`: the cast names the field it is.
  return {
    kind,
    [field]: readHourlyRows(page.data, keys, dropped),
    total: page.total,
    rows: page.data.length,
    truncated: page.truncated,
    dropped,
  } as KeyedPage<Kind, Field>;
}

/**
 * The rows of a page keyed by two codes (`respondent` and `fueltype`, `respondent` and `type`,
 * `fromba` and `toba`): first code -> second code -> hour START (EIA's `period` labels the end)
 * -> MWh, the mean MW of the hour. Keyed on codes, never on the names beside them, whose wording
 * changes (§2.2). A `null` value is no figure for that hour; numbers as strings are read; a row
 * that cannot be used, or repeats an hour, is dropped and listed.
 */
function readHourlyRows(
  data: readonly unknown[],
  [outerKey, innerKey]: readonly [string, string],
  dropped: string[],
): Map<string, Map<string, Map<number, number>>> {
  const rows = new Map<string, Map<string, Map<number, number>>>();
  for (const [index, row] of data.entries()) {
    const read = readKeyedRow(row, outerKey, innerKey);
    if (typeof read === 'string') dropped.push(`row ${index}: ${read}`);
    if (typeof read === 'string' || read.mwh === null) continue;
    const { outer, inner, hourStart, mwh } = read;
    const byInner = rows.get(outer) ?? new Map<string, Map<number, number>>();
    rows.set(outer, byInner);
    const series = byInner.get(inner) ?? new Map<number, number>();
    byInner.set(inner, series);
    if (series.has(hourStart)) {
      dropped.push(`row ${index}: repeats ${outer} ${inner} ${read.period}`);
      continue;
    }
    series.set(hourStart, mwh);
  }
  return rows;
}

/** One row's two codes, hour start and value (null: no figure), or why it cannot be used. */
function readKeyedRow(
  row: unknown,
  outerKey: string,
  innerKey: string,
):
  { outer: string; inner: string; period: string; hourStart: number; mwh: number | null } | string {
  if (!isPlainObject(row)) return 'not an object';
  const { [outerKey]: outer, [innerKey]: inner, period, value } = row;
  if (typeof outer !== 'string' || outer === '') return `no ${outerKey}`;
  if (typeof inner !== 'string' || inner === '') return `no ${innerKey}`;
  const hourEnd = readPeriod(period);
  if (typeof period !== 'string' || hourEnd === undefined) {
    return `period ${JSON.stringify(period)} is not YYYY-MM-DDTHH`;
  }
  const mwh = value === null ? null : parseDecimal(value);
  if (mwh === undefined) return `value ${JSON.stringify(value)} is not a number`;
  return { outer, inner, period, hourStart: hourEnd - HOUR, mwh };
}

/** The envelope every EIA v2 data route shares (fuel-type-data, region-data). */
type PageEnvelope =
  | {
      readonly kind: 'page';
      readonly data: readonly unknown[];
      readonly total: number;
      readonly truncated: boolean;
    }
  | PayloadFailure;

/**
 * Checks the envelope of one page (strictly: an unknown shape is an invalid payload) and returns
 * its rows, unread, with `total` and the paging warning.
 */
function readPageEnvelope(body: string): PageEnvelope {
  const document = parseJson(body);
  if (!isPlainObject(document)) return invalidPayload('body is not a JSON object');
  if (document['error'] !== undefined && document['error'] !== null) return readError(document);

  const response = document['response'];
  if (!isPlainObject(response)) return invalidPayload('no `response` object');
  const data = response['data'];
  const total = parseDecimal(response['total']);
  if (!Array.isArray(data)) return invalidPayload('`response.data` is not a list');
  if (total === undefined) return invalidPayload('`response.total` is not a number');
  const frequency = response['frequency'];
  // Other frequencies label periods differently (local-hourly adds an offset): refuse, not misread.
  if (frequency !== undefined && frequency !== 'hourly') {
    return invalidPayload(`frequency ${String(frequency)}, expected hourly`);
  }
  const warnings = Array.isArray(response['warnings']) ? response['warnings'] : [];
  const truncated = warnings.some(
    (warning) => isPlainObject(warning) && PAGING_WARNINGS.has(String(warning['warning'])),
  );
  return { kind: 'page', data, total, truncated };
}

function invalidPayload(detail: string): { kind: 'invalid-payload'; detail: string } {
  return { kind: 'invalid-payload', detail };
}

/**
 * `{"error": {"code": "…", "message": "…"}}` (gateway and key errors) or
 * `{"error": "…", "code": 400}` (parameter errors), possibly with HTTP 200
 * (docs/upstreams.md §2.2).
 */
function readError(document: PlainObject): {
  kind: 'upstream-error';
  code: string;
  message: string;
} {
  const error = document['error'];
  let code: unknown;
  let message: unknown;
  if (isPlainObject(error)) {
    code = error['code'];
    message = error['message'];
  } else {
    code = document['code'];
    message = error;
  }
  const apiKey = readApiKey(document);
  const scrub = (text: string) => (apiKey ? text.replaceAll(apiKey, 'REDACTED') : text);
  return {
    kind: 'upstream-error',
    code: typeof code === 'string' || typeof code === 'number' ? scrub(String(code)) : '',
    message: typeof message === 'string' ? scrub(message) : '',
  };
}

function readApiKey(document: PlainObject): string | undefined {
  const request = document['request'];
  const params = isPlainObject(request) ? request['params'] : undefined;
  const apiKey = isPlainObject(params) ? params['api_key'] : undefined;
  return typeof apiKey === 'string' && apiKey !== '' ? apiKey : undefined;
}

/** `2025-04-21T03` (UTC) → epoch seconds. */
function readPeriod(period: unknown): number | undefined {
  if (typeof period !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}$/.test(period)) return undefined;
  const ms = parseInstant(`${period}:00Z`);
  return ms === undefined ? undefined : ms / 1000;
}
