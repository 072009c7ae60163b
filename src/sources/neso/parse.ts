/**
 * Pure parsers of NESO Carbon Intensity API JSON replies (national figures).
 * Formats and quirks: docs/upstreams.md §3.2–3.3 (intensity) and §3.4 (generation mix).
 *
 * Stable contract for the fetching side (`index.ts`):
 *
 *     parseIntensity(body: string): IntensityResult      `/intensity/{from}/{to}` and friends
 *     parseGeneration(body: string): GenerationResult    `/generation`, `/generation/{from}/{to}`
 *
 *   - `half-hours`: one `OperatorHalfHour` (src/core/uk-operator.ts) per entry, in upstream order;
 *     `dropped` lists entries that could not be used. Turn them into readings with
 *     `operatorReadings(zone, halfHours, now)`, which applies the GB rule of docs/method.md.
 *   - `mix-half-hours`: one `OperatorMixHalfHour` per entry (`fuel` → `perc` as published), in
 *     upstream order, and `dropped`. Turn them into mixes with `operatorMixes(zone, halfHours)`.
 *   - `upstream-error`: the `{"error": {"code", "message"}}` body.
 *   - `invalid-payload`: not JSON, or JSON of another shape.
 *
 * The parsers never throw on a bad payload.
 */
import { isPlainObject, parseJson, type PlainObject } from '../../core/payload.js';
import { parseInstant } from '../../core/time.js';
import {
  HALF_HOUR,
  type OperatorHalfHour,
  type OperatorMixHalfHour,
} from '../../core/uk-operator.js';
import type { PayloadFailure } from '../adapter.js';

type UpstreamErrorResult = Extract<PayloadFailure, { kind: 'upstream-error' }>;
type InvalidPayload = Extract<PayloadFailure, { kind: 'invalid-payload' }>;

/** The half-hours a parser read (tagged `Kind`) and the entries it dropped, or why it read none. */
export type HalfHoursResult<Kind extends string, HalfHour> =
  | {
      readonly kind: Kind;
      readonly halfHours: readonly HalfHour[];
      readonly dropped: readonly string[];
    }
  | UpstreamErrorResult
  | InvalidPayload;

export type IntensityResult = HalfHoursResult<'half-hours', OperatorHalfHour>;

export function parseIntensity(body: string): IntensityResult {
  const document = readEnvelope(body);
  if (document.kind !== 'data') return document;
  const { data } = document;
  if (!Array.isArray(data)) return invalidPayload('`data` is not a list');
  const { records: halfHours, dropped } = readEntries(data, readEntry);
  return { kind: 'half-hours', halfHours, dropped };
}

export type GenerationResult = HalfHoursResult<'mix-half-hours', OperatorMixHalfHour>;

/**
 * `/generation` answers `data` as one object (the half-hour in progress), the range routes as a
 * list (docs/upstreams.md §3.4): both are read, nothing else is.
 */
export function parseGeneration(body: string): GenerationResult {
  const document = readEnvelope(body);
  if (document.kind !== 'data') return document;
  const { data } = document;
  const entries = Array.isArray(data) ? data : isPlainObject(data) ? [data] : undefined;
  if (!entries) return invalidPayload('`data` is neither an object nor a list');
  const { records: halfHours, dropped } = readEntries(entries, readMixEntry);
  return { kind: 'mix-half-hours', halfHours, dropped };
}

/** The document's `data`, or the NESO error body, or why it is neither. */
function readEnvelope(
  body: string,
): { readonly kind: 'data'; readonly data: unknown } | UpstreamErrorResult | InvalidPayload {
  const document = parseJson(body);
  if (!isPlainObject(document)) return invalidPayload('body is not a JSON object');
  const error = document['error'];
  if (isPlainObject(error)) {
    const { code, message } = error;
    return {
      kind: 'upstream-error',
      code: typeof code === 'string' ? code : '',
      message: typeof message === 'string' ? message : '',
    };
  }
  if (!('data' in document)) return invalidPayload('no `data`');
  return { kind: 'data', data: document['data'] };
}

function invalidPayload(detail: string): InvalidPayload {
  return { kind: 'invalid-payload', detail };
}

/** Reads every entry, keeping the usable ones and one line for each dropped one. */
function readEntries<T>(
  entries: readonly unknown[],
  read: (entry: PlainObject, start: number) => T | string,
): { records: T[]; dropped: string[] } {
  const records: T[] = [];
  const dropped: string[] = [];
  entries.forEach((entry, index) => {
    const record = readHalfHour(entry, read);
    if (typeof record === 'string') dropped.push(`entry ${index}: ${record}`);
    else records.push(record);
  });
  return { records, dropped };
}

/** The `{from, to, ...}` frame every entry has, then the entry's own reader. */
function readHalfHour<T>(
  entry: unknown,
  read: (entry: PlainObject, start: number) => T | string,
): T | string {
  if (!isPlainObject(entry)) return 'not an object';
  const { from, to } = entry;
  const startMs = typeof from === 'string' ? parseInstant(from) : undefined;
  const endMs = typeof to === 'string' ? parseInstant(to) : undefined;
  if (startMs === undefined || endMs === undefined) return 'unreadable from/to';
  const start = startMs / 1000;
  if (endMs / 1000 - start !== HALF_HOUR || start % HALF_HOUR !== 0) {
    return `${String(from)}–${String(to)} is not a half-hour`;
  }
  return read(entry, start);
}

/** One `{from, to, intensity: {forecast, actual, index}}` entry, or why it cannot be used. */
function readEntry({ intensity }: PlainObject, start: number): OperatorHalfHour | string {
  if (!isPlainObject(intensity)) return 'no intensity';
  const forecast = readFigure(intensity['forecast']);
  const actual = readFigure(intensity['actual']);
  if (forecast === undefined || actual === undefined) return 'forecast/actual not a number or null';
  if (forecast === null && actual === null) return 'neither forecast nor actual';
  return { start, forecast, actual };
}

/**
 * One `{from, to, generationmix: [{fuel, perc}, ...]}` entry, or why it cannot be used. Fuels are
 * keyed by name, never by position (the official reference lists them in another order than the
 * replies); `perc` is kept as published, an int or a float, not assumed to sum to 100.
 */
function readMixEntry({ generationmix }: PlainObject, start: number): OperatorMixHalfHour | string {
  if (!Array.isArray(generationmix)) return 'no generationmix list';
  if (generationmix.length === 0) return 'empty generationmix';
  const shares = new Map<string, number>();
  for (const item of generationmix) {
    if (!isPlainObject(item)) return 'a generationmix item is not an object';
    const { fuel, perc } = item;
    if (typeof fuel !== 'string' || fuel === '') return 'a generationmix item has no fuel';
    if (typeof perc !== 'number' || !Number.isFinite(perc)) return `${fuel}: perc is not a number`;
    if (shares.has(fuel)) return `${fuel} listed twice`;
    shares.set(fuel, perc);
  }
  return { start, shares };
}

/** gCO2/kWh as published (integers today); null (or absent) when not published yet. */
function readFigure(value: unknown): number | null | undefined {
  if (value === null || value === undefined) return null;
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
