import { formatTs, isServableInstant, parseInstant, resolveWindow } from '../core/time.js';
import { findZone, type Zone } from '../core/zones.js';
import { API_ERRORS } from './api-errors.js';
import { HistoryQuery, LatestQuery, MixQuery } from './schemas.js';
import { BASES, type Basis } from '../core/factors.js';

/**
 * The one interpreter of the data endpoints' queries, used by the fast path and the framework
 * routes alike: every parameter rule, error and hint lives here. It throws ApiErrors.
 */

/** The query of a request URL: each known parameter once (repeated: 400); unknown ones ignored. */
export function readParams(url: string, known: readonly string[]): Map<string, string> {
  const params = new Map<string, string>();
  const mark = url.indexOf('?');
  if (mark < 0) return params;
  const repeated = new Set<string>();
  for (const part of url.slice(mark + 1).split('&')) {
    if (part === '') continue;
    const equals = part.indexOf('=');
    const key = decode(equals < 0 ? part : part.slice(0, equals));
    if (!known.includes(key)) continue;
    if (params.has(key)) repeated.add(key);
    params.set(key, decode(equals < 0 ? '' : part.slice(equals + 1)));
  }
  // The first of the known parameters, in their declared order, names the error.
  const first = known.find((key) => repeated.has(key));
  if (first !== undefined) throw API_ERRORS.repeatedParam(first);
  return params;
}

/** As application/x-www-form-urlencoded: `+` is a space; a malformed escape is kept as written. */
function decode(text: string): string {
  const spaced = text.includes('+') ? text.replaceAll('+', ' ') : text;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/** The parameters each endpoint reads, in the order their errors are reported: its schema's. */
export const LATEST_PARAMS = Object.keys(LatestQuery.properties);
export const HISTORY_PARAMS = Object.keys(HistoryQuery.properties);
export const MIX_PARAMS = Object.keys(MixQuery.properties);

export interface LatestRequest {
  /** Undefined: every zone. */
  readonly zone: Zone | undefined;
  /** The zone as the client wrote it (trimmed), echoed when it has no reading. */
  readonly given: string | undefined;
  /** Undefined: each zone's own value. */
  readonly basis: Basis | undefined;
}

export function interpretLatest(params: ReadonlyMap<string, string>): LatestRequest {
  const given = params.get('zone')?.trim();
  const zone = given === undefined ? undefined : requireZone(given);
  return { zone, given, basis: interpretBasis(params) };
}

export interface WindowRequest {
  readonly zone: Zone;
  /** The window `from <= ts < to`, epoch seconds. */
  readonly from: number;
  readonly to: number;
  /** Undefined: each zone's own value (and always for a mix, which has no basis). */
  readonly basis: Basis | undefined;
}

/** A zone and a window: `/v1/intensity` and `/v1/mix` (whose query has no basis). */
export function interpretWindow(params: ReadonlyMap<string, string>, nowMs: number): WindowRequest {
  const given = params.get('zone')?.trim();
  if (given === undefined || given === '') throw API_ERRORS.missingParam('zone');
  const fromMs = instant(params, 'from');
  const toMs = instant(params, 'to');
  const zone = requireZone(given);
  const window = resolveWindow(fromMs, toMs, nowMs);
  // Instants outside years 0000-9999 could not be echoed in the contract's format.
  if (!isServableInstant(window.to)) throw API_ERRORS.invalidInstant('to');
  if (!isServableInstant(window.from)) {
    throw API_ERRORS.invalidInstant(fromMs === undefined ? 'to' : 'from');
  }
  if (window.from >= window.to) throw API_ERRORS.invalidWindow();
  return { zone, ...window, basis: interpretBasis(params) };
}

function interpretBasis(params: ReadonlyMap<string, string>): Basis | undefined {
  const given = params.get('basis');
  if (given === undefined) return undefined;
  const basis = BASES.find((candidate) => candidate === given);
  if (!basis) throw API_ERRORS.invalidBasis();
  return basis;
}

function requireZone(given: string): Zone {
  const zone = findZone(given);
  if (!zone) throw API_ERRORS.unknownZone(given);
  return zone;
}

function instant(params: ReadonlyMap<string, string>, param: 'from' | 'to'): number | undefined {
  const text = params.get(param);
  if (text === undefined) return undefined;
  const parsed = parseInstant(text.trim());
  if (parsed === undefined) throw API_ERRORS.invalidInstant(param);
  return parsed;
}

/**
 * `Link: <...>; rel="next"` of a truncated page (RFC 8288): the same request, relative to the
 * service root, with `from` set to the ts the truncation note names.
 */
export function nextPageLink(url: string, nextFrom: number): string {
  const mark = url.indexOf('?');
  const path = mark < 0 ? url : url.slice(0, mark);
  const parts = mark < 0 ? [] : url.slice(mark + 1).split('&');
  const from = `from=${formatTs(nextFrom)}`;
  const at = parts.findIndex((part) => decode(part.split('=')[0]!) === 'from');
  if (at < 0) parts.push(from);
  else parts[at] = from;
  // The raw URL may hold bytes a header value or a Link target cannot carry as they are.
  const target = `${path}?${parts.join('&')}`.replace(/[^\x21-\x7e]|[<>"]/g, (char) =>
    encodeURIComponent(char),
  );
  return `<${target}>; rel="next"`;
}
