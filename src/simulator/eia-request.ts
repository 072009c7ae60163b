import { EIA_RESPONDENTS } from './node-profiles.js';
import { US_DATA_START_MS, type UsProfile } from './zone-profiles.js';

/**
 * The query and the envelope every EIA API v2 `electricity/rto` route shares (apiVersion 2.1.8,
 * docs/upstreams.md §2.1): facets, inclusive hour-ending `start` and `end`, sorting, paging by
 * at most 5000 rows, the request echoed with its key.
 */

const MAX_ROWS = 5000;
const HOUR_MS = 3_600_000;
export const EIA_DATE_FORMAT = 'YYYY-MM-DD"T"HH24';
const PERIOD_BOUND = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}))?$/;
const FACET_KEY = /^facets\[([^\]]*)\]\[\]$/;
const DATA_KEY = /^data\[\d*\]$/;

/** What every route's query asks besides its facets. */
export interface EiaQuery {
  readonly withValues: boolean;
  /** Hour-end instants, inclusive. */
  readonly firstPeriodMs: number;
  readonly lastPeriodMs: number;
  readonly descending: boolean;
  readonly offset: number;
  readonly length: number;
  readonly lengthAsked: boolean;
  /** `request.params` as the API echoes it, api_key included. */
  readonly echo: Record<string, unknown>;
}

/** A fuel-type-data or region-data query. */
export interface EiaRequest extends EiaQuery {
  readonly respondents: readonly UsProfile[];
  readonly fueltypes: ReadonlySet<string> | null;
}

export function parseEiaRequest(
  query: URLSearchParams,
  codeFacet: 'fueltype' | 'type',
): EiaRequest | string {
  const parsed = parseEiaQuery(query, ['respondent', codeFacet], ['period']);
  if (typeof parsed === 'string') return parsed;
  const { facets, ...common } = parsed;
  const wanted = facets.respondent ? new Set(facets.respondent) : null;
  return {
    ...common,
    // An unknown respondent or fuel type is not an error: it just matches no rows.
    respondents: EIA_RESPONDENTS.filter((profile) => !wanted || wanted.has(profile.respondent)),
    fueltypes: facets[codeFacet] ? new Set(facets[codeFacet]) : null,
  };
}

/**
 * A query of a route with the given facets, sortable by `sortColumns` in that order (the first
 * in either direction, the others ascending only). A refusal is the API's message.
 */
export function parseEiaQuery(
  query: URLSearchParams,
  facetNames: readonly string[],
  sortColumns: readonly string[],
): (EiaQuery & { readonly facets: Readonly<Record<string, string[]>> }) | string {
  const frequency = query.get('frequency') ?? 'hourly';
  if (frequency !== 'hourly') {
    return `Invalid frequency '${frequency}' provided. This simulator serves 'hourly' only.`;
  }
  const data: string[] = [];
  const facets: Record<string, string[]> = {};
  for (const [key, value] of query) {
    if (DATA_KEY.test(key)) {
      if (value !== 'value')
        return `Invalid data '${value}' provided. The only valid data are 'value'.`;
      data.push(value);
    }
    const facet = FACET_KEY.exec(key)?.[1];
    if (facet !== undefined) {
      if (!facetNames.includes(facet)) {
        const valid = facetNames.map((name) => `'${name}'`).join(', ');
        return `Invalid facet '${facet}' provided. The only valid facets are ${valid}.`;
      }
      (facets[facet] ??= []).push(value);
    }
  }
  const start = query.get('start');
  const end = query.get('end');
  const firstPeriodMs = start === null ? US_DATA_START_MS + HOUR_MS : periodBound(start, 'start');
  const lastPeriodMs = end === null ? Number.POSITIVE_INFINITY : periodBound(end, 'end');
  if (Number.isNaN(firstPeriodMs)) return `Invalid start '${start}' provided. Use YYYY-MM-DDTHH.`;
  if (Number.isNaN(lastPeriodMs)) return `Invalid end '${end}' provided. Use YYYY-MM-DDTHH.`;
  const sorts: { column: string; direction: string }[] = [];
  for (let position = 0; position < sortColumns.length; position++) {
    const column = query.get(`sort[${position}][column]`);
    const direction = query.get(`sort[${position}][direction]`);
    if (column !== null && column !== sortColumns[position]) {
      const order = sortColumns.map((name) => `'${name}'`).join(', then ');
      return `Invalid sort column '${column}'. This simulator sorts by ${order} only.`;
    }
    if (direction !== null && direction !== 'asc' && (position > 0 || direction !== 'desc')) {
      return position === 0
        ? `Invalid sort direction '${direction}'. Use 'asc' or 'desc'.`
        : `Invalid sort direction '${direction}' for '${column}'. This simulator sorts it 'asc' only.`;
    }
    if (column !== null) sorts.push({ column, direction: direction ?? 'asc' });
  }
  const offsetText = query.get('offset');
  const lengthText = query.get('length');
  if (offsetText !== null && !/^\d+$/.test(offsetText)) return `Invalid offset '${offsetText}'.`;
  if (lengthText !== null && !/^\d+$/.test(lengthText)) return `Invalid length '${lengthText}'.`;

  const echo: Record<string, unknown> = {};
  if (query.has('frequency')) echo.frequency = frequency;
  if (data.length > 0) echo.data = data;
  if (Object.keys(facets).length > 0) echo.facets = facets;
  if (start !== null) echo.start = start;
  if (end !== null) echo.end = end;
  if (sorts.length > 0) echo.sort = sorts;
  if (offsetText !== null) echo.offset = offsetText;
  if (lengthText !== null) echo.length = lengthText;
  echo.api_key = query.get('api_key');

  return {
    withValues: data.length > 0,
    facets,
    firstPeriodMs: Math.max(firstPeriodMs, US_DATA_START_MS + HOUR_MS),
    lastPeriodMs,
    descending: query.get('sort[0][direction]') === 'desc',
    offset: offsetText === null ? 0 : Number(offsetText),
    length: Math.min(lengthText === null ? MAX_ROWS : Number(lengthText), MAX_ROWS),
    lengthAsked: lengthText !== null,
    echo,
  };
}

/**
 * The first (start) or last (end) hour-end instant whose label passes the API's string
 * comparison: `end=2025-04-20` keeps no hour of that day, since "2025-04-20T00" > "2025-04-20".
 */
function periodBound(text: string, side: 'start' | 'end'): number {
  const match = PERIOD_BOUND.exec(text);
  if (!match) return Number.NaN;
  const [, year, month, day, hour] = match;
  const ms = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour ?? 0));
  if (new Date(ms).toISOString().slice(0, 10) !== text.slice(0, 10)) return Number.NaN;
  return side === 'end' && hour === undefined ? ms - HOUR_MS : ms;
}

/** The hour-end instants from the first asked to `lastPeriodMs`, in the order the request sorts. */
export function* askedPeriods(request: EiaQuery, lastPeriodMs: number): Generator<number> {
  const hourCount = Math.max(0, (lastPeriodMs - request.firstPeriodMs) / HOUR_MS + 1);
  for (let step = 0; step < hourCount; step++) {
    yield request.descending
      ? lastPeriodMs - step * HOUR_MS
      : request.firstPeriodMs + step * HOUR_MS;
  }
}

/**
 * A page of rows as EIA API v2 (2.1.8) wraps it: the total as a string, the request echoed, and
 * the "incomplete return" warning when more rows match than one page holds.
 */
export function eiaEnvelope(
  request: EiaQuery,
  rows: readonly unknown[],
  total: number,
  description: string,
  route: string,
): unknown {
  const truncated =
    total - request.offset > MAX_ROWS && (!request.lengthAsked || request.length >= MAX_ROWS);
  return {
    response: {
      ...(truncated && {
        warnings: [
          {
            warning: 'incomplete return',
            description:
              'The API can only return 5000 rows in JSON format.  Please consider constraining your request with facet, start, or end, or using offset to paginate results.',
          },
        ],
      }),
      total: String(total),
      dateFormat: EIA_DATE_FORMAT,
      frequency: 'hourly',
      data: rows,
      description,
    },
    request: { command: route, params: request.echo },
    apiVersion: '2.1.8',
    ExcelAddInVersion: '2.1.0',
  };
}
