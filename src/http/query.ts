import { formatTs, HOUR, isServableInstant, parseInstant, resolveWindow } from '../core/time.js';
import { findZone, ZONES, type Zone } from '../core/zones.js';
import { API_ERRORS } from './api-errors.js';
import { ExportQuery, HistoryQuery, LatestQuery, MixQuery, StreamQuery } from './schemas.js';
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
export const EXPORT_PARAMS = Object.keys(ExportQuery.properties);
export const STREAM_PARAMS = Object.keys(StreamQuery.properties);

/** The longest window one export may cover (extensions §6). */
export const MAX_EXPORT_DAYS = 400;

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
  return { zone, ...servableWindow(fromMs, toMs, nowMs), basis: interpretBasis(params) };
}

/** The window `from <= ts < to` asked for, with its defaults; throws when it cannot be served. */
function servableWindow(
  fromMs: number | undefined,
  toMs: number | undefined,
  nowMs: number,
): { from: number; to: number } {
  const window = resolveWindow(fromMs, toMs, nowMs);
  // Instants outside years 0000-9999 could not be echoed in the contract's format.
  if (!isServableInstant(window.to)) throw API_ERRORS.invalidInstant('to');
  if (!isServableInstant(window.from)) {
    throw API_ERRORS.invalidInstant(fromMs === undefined ? 'to' : 'from');
  }
  if (window.from >= window.to) throw API_ERRORS.invalidWindow();
  return window;
}

export type ExportFormat = 'csv' | 'ndjson';

export interface ExportRequest {
  /** In the order of /v1/zones. */
  readonly zones: readonly Zone[];
  /** The window `from <= ts < to`, epoch seconds. */
  readonly from: number;
  readonly to: number;
  readonly format: ExportFormat;
  /** Undefined: each zone's own value. */
  readonly basis: Basis | undefined;
  /** Whether each row carries its generation mix (`include=mix`). */
  readonly mix: boolean;
}

/** `/v1/export`: zones, a window of at most MAX_EXPORT_DAYS, a format, a basis, the mix. */
export function interpretExport(params: ReadonlyMap<string, string>, nowMs: number): ExportRequest {
  const given = params.get('zones')?.trim();
  if (given === undefined || given === '') throw API_ERRORS.missingParam('zones');
  const fromMs = instant(params, 'from');
  const toMs = instant(params, 'to');
  const zones = interpretZones(given);
  const window = servableWindow(fromMs, toMs, nowMs);
  if (window.to - window.from > MAX_EXPORT_DAYS * 24 * HOUR) {
    throw API_ERRORS.exportWindowTooLong(MAX_EXPORT_DAYS);
  }
  const format = params.get('format') ?? 'csv';
  if (format !== 'csv' && format !== 'ndjson') throw API_ERRORS.invalidFormat();
  const basis = interpretBasis(params);
  const include = params.get('include');
  if (include !== undefined && include !== 'mix') throw API_ERRORS.invalidInclude();
  return { zones, ...window, format, basis, mix: include === 'mix' };
}

export interface StreamRequest {
  /** In the order of /v1/zones; every zone by default. */
  readonly zones: readonly Zone[];
  /** Undefined: each zone's own value. */
  readonly basis: Basis | undefined;
}

/** `/v1/stream`: zones (default all) and a basis. */
export function interpretStream(params: ReadonlyMap<string, string>): StreamRequest {
  const given = params.get('zones');
  const zones = given === undefined ? ZONES : interpretZones(given);
  return { zones, basis: interpretBasis(params) };
}

/**
 * A zone list: `all`, or comma-separated codes as `zone=` takes them (case-insensitive, spaces
 * around a code ignored, a repeated code counted once). An empty element is 400, an unknown
 * code 404 as on the other endpoints. The zones come back in the order of /v1/zones.
 */
function interpretZones(given: string): readonly Zone[] {
  if (given.trim().toLowerCase() === 'all') return ZONES;
  const parts = given.split(',').map((part) => part.trim());
  if (parts.some((part) => part === '' || part.toLowerCase() === 'all')) {
    throw API_ERRORS.invalidZones();
  }
  const wanted = new Set(parts.map((part) => requireZone(part).code));
  return ZONES.filter((zone) => wanted.has(zone.code));
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
