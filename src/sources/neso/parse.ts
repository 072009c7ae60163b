/**
 * Pure parser of NESO Carbon Intensity API `/intensity/...` JSON replies (national figures).
 * Format and quirks: docs/upstreams.md §3.2–3.3.
 *
 * Stable contract for the fetching side (`index.ts`):
 *
 *     parseIntensity(body: string): IntensityResult
 *
 *   - `half-hours`: one `OperatorHalfHour` (src/core/uk-operator.ts) per entry, in upstream order;
 *     `dropped` lists entries that could not be used. Turn them into readings with
 *     `operatorReadings(zone, halfHours, now)`, which applies the GB rule of docs/method.md.
 *   - `upstream-error`: the `{"error": {"code", "message"}}` body.
 *   - `invalid-payload`: not JSON, or JSON of another shape.
 *
 * The parser never throws on a bad payload.
 */
import { isPlainObject, parseJson } from '../../core/payload.js';
import { parseInstant } from '../../core/time.js';
import { HALF_HOUR, type OperatorHalfHour } from '../../core/uk-operator.js';

export type IntensityResult =
  | {
      readonly kind: 'half-hours';
      readonly halfHours: readonly OperatorHalfHour[];
      readonly dropped: readonly string[];
    }
  | { readonly kind: 'upstream-error'; readonly code: string; readonly message: string }
  | { readonly kind: 'invalid-payload'; readonly detail: string };

export function parseIntensity(body: string): IntensityResult {
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
  const data = document['data'];
  if (!Array.isArray(data)) return invalidPayload('`data` is not a list');

  const halfHours: OperatorHalfHour[] = [];
  const dropped: string[] = [];
  data.forEach((entry, index) => {
    const halfHour = readEntry(entry);
    if (typeof halfHour === 'string') dropped.push(`entry ${index}: ${halfHour}`);
    else halfHours.push(halfHour);
  });
  return { kind: 'half-hours', halfHours, dropped };
}

function invalidPayload(detail: string): IntensityResult {
  return { kind: 'invalid-payload', detail };
}

/** One `{from, to, intensity: {forecast, actual, index}}` entry, or why it cannot be used. */
function readEntry(entry: unknown): OperatorHalfHour | string {
  if (!isPlainObject(entry)) return 'not an object';
  const { from, to, intensity } = entry;
  const startMs = typeof from === 'string' ? parseInstant(from) : undefined;
  const endMs = typeof to === 'string' ? parseInstant(to) : undefined;
  if (startMs === undefined || endMs === undefined) return 'unreadable from/to';
  const start = startMs / 1000;
  if (endMs / 1000 - start !== HALF_HOUR || start % HALF_HOUR !== 0) {
    return `${String(from)}–${String(to)} is not a half-hour`;
  }
  if (!isPlainObject(intensity)) return 'no intensity';
  const forecast = readFigure(intensity['forecast']);
  const actual = readFigure(intensity['actual']);
  if (forecast === undefined || actual === undefined) return 'forecast/actual not a number or null';
  if (forecast === null && actual === null) return 'neither forecast nor actual';
  return { start, forecast, actual };
}

/** gCO2/kWh as published (integers today); null (or absent) when not published yet. */
function readFigure(value: unknown): number | null | undefined {
  if (value === null || value === undefined) return null;
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
