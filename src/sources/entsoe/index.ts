import type { Logger } from 'pino';
import type { GenerationByCode } from '../../core/generation.js';
import { computeReadings, type ZoneReadings } from '../../core/method.js';
import { entsoeDayAheadIssuedAt } from '../../core/forecast-issue.js';
import { PSR_TYPES } from '../../core/production-types.js';
import type { StoredForecast } from '../../core/reading.js';
import {
  type EntsoeForecastDocument,
  type ForecastKind,
  forecastKindsOf,
} from '../../core/sources.js';
import type { Zone } from '../../core/zones.js';
import { isInWindow, splitWindow, type TimeWindow } from '../../core/time.js';
import { UpstreamError, type RequestLimits, type UpstreamHttp } from '../http.js';
import { payloadFailure } from '../adapter.js';
import { parseA75 } from './parse.js';
import {
  parseEntsoeForecast,
  type EntsoeForecastQuantity,
  type EntsoeForecastResult,
} from './parse-forecast.js';
import { ENTSOE_MAX_WINDOW_SECONDS, entsoeA75Url, entsoeForecastUrl } from './request.js';

export interface EntsoeClient {
  readonly http: UpstreamHttp;
  readonly baseUrl: string;
  readonly token: string;
  readonly logger?: Logger;
}

/**
 * Actual generation of one zone over `window` (whole hours), turned into readings by the method.
 * One A75 request per zone per at most one year (upstreams README §1.1). Rejects with an
 * UpstreamError when a request fails; "no matching data" is not a failure, it yields no readings.
 */
export async function fetchEntsoeZone(
  client: EntsoeClient,
  zone: Zone,
  window: TimeWindow,
  limits: RequestLimits = {},
): Promise<ZoneReadings> {
  const parts: ZoneReadings[] = [];
  for (const chunk of splitWindow(window, ENTSOE_MAX_WINDOW_SECONDS)) {
    const generation = await fetchGeneration(client, zone, chunk, limits);
    if (generation) parts.push(computeReadings(zone.code, clip(generation, chunk), PSR_TYPES));
  }
  return concatenate(zone.code, parts);
}

async function fetchGeneration(
  client: EntsoeClient,
  zone: Zone,
  window: TimeWindow,
  limits: RequestLimits,
): Promise<GenerationByCode | undefined> {
  const url = entsoeA75Url(client.baseUrl, client.token, zone.upstreamId, window);
  const where = `europe-tso: ${zone.code}`;
  const parsed = await fetchDocument(client, url, limits, parseA75);
  switch (parsed.kind) {
    case 'no-data':
      return undefined;
    case 'upstream-error':
    case 'invalid-payload':
      throw payloadFailure(parsed, where, { payload: 'A75 payload' });
    case 'generation':
      if (parsed.dropped.length > 0) {
        client.logger?.warn(
          { zone: zone.code, dropped: parsed.dropped.length, first: parsed.dropped.slice(0, 3) },
          'europe-tso: records dropped from an A75 document',
        );
      }
      // The document root names no area: the zone is matched through its TimeSeries (§1.2).
      return parsed.areas.get(zone.upstreamId) ?? new Map();
  }
}

/**
 * GETs one document and parses it. Older servers answered "no matching data" with HTTP 400 and
 * the Acknowledgement (§1.5): that reply reads as the no-data it is; any other failure rejects.
 */
export async function fetchDocument<Result extends { readonly kind: string }>(
  client: EntsoeClient,
  url: string,
  limits: RequestLimits,
  parse: (xml: string) => Result,
): Promise<Result> {
  try {
    const { body } = await client.http.getText(url, limits);
    return parse(body);
  } catch (error) {
    if (error instanceof UpstreamError && error.status === 400 && error.body) {
      const acknowledged = parse(error.body);
      if (acknowledged.kind === 'no-data') return acknowledged;
    }
    throw error;
  }
}

/** Keeps the hours inside the requested window: a document may cover more than was asked. */
function clip(generation: GenerationByCode, window: TimeWindow): GenerationByCode {
  return new Map(
    [...generation].map(([code, series]) => [
      code,
      new Map([...series].filter(([ts]) => isInWindow(ts, window))),
    ]),
  );
}

function concatenate(zone: string, parts: readonly ZoneReadings[]): ZoneReadings {
  const sum = (pick: (part: ZoneReadings) => number) =>
    parts.reduce((total, part) => total + pick(part), 0);
  return {
    readings: parts.flatMap((part) => part.readings),
    quality: {
      zone,
      pointsStored: sum((part) => part.quality.pointsStored),
      incompleteHours: sum((part) => part.quality.incompleteHours),
      clampedNegatives: sum((part) => part.quality.clampedNegatives),
      unknownCodes: [...new Set(parts.flatMap((part) => part.quality.unknownCodes))].sort(),
    },
  };
}

/** The kind each forecast quantity is stored as. */
const FORECAST_KIND: Readonly<Record<EntsoeForecastQuantity, ForecastKind>> =
  forecastKindsOf('europe-tso');

/**
 * The zone's day-ahead forecast of one document type over `window` (whole hours, possibly in the
 * future), as stored forecasts: the document's intervals at its own resolution, kept inside the
 * window (the reply covers every market day the window touches), each issued by the rule of
 * src/core/forecast-issue.ts with `fetchedAt` (epoch seconds). "No matching data" is no
 * forecast; a refusal or an unusable document rejects with an UpstreamError.
 */
export async function fetchEntsoeForecasts(
  client: EntsoeClient,
  zone: Zone,
  documentType: EntsoeForecastDocument,
  window: TimeWindow,
  fetchedAt: () => number,
  limits: RequestLimits = {},
): Promise<StoredForecast[]> {
  const documents: { revision: number; forecasts: StoredForecast[] }[] = [];
  for (const chunk of splitWindow(window, ENTSOE_MAX_WINDOW_SECONDS)) {
    const url = entsoeForecastUrl(
      client.baseUrl,
      client.token,
      documentType,
      zone.upstreamId,
      chunk,
    );
    const parsed = await fetchDocument(client, url, limits, parseEntsoeForecast);
    const where = `europe-tso: ${zone.code} ${documentType}`;
    switch (parsed.kind) {
      case 'no-data':
        continue;
      case 'upstream-error':
      case 'invalid-payload':
        throw payloadFailure(parsed, where);
      case 'not-day-ahead':
        throw new UpstreamError(
          'invalid',
          `${where}: processType ${parsed.processType} is not day-ahead (A01)`,
        );
      case 'forecast':
        if (parsed.documentType !== documentType) {
          throw new UpstreamError('invalid', `${where}: answered with ${parsed.documentType}`);
        }
        if (parsed.dropped.length > 0) {
          client.logger?.warn(
            { zone: zone.code, dropped: parsed.dropped.length, first: parsed.dropped.slice(0, 3) },
            `europe-tso: records dropped from an ${documentType} document`,
          );
        }
        documents.push({
          revision: parsed.revision,
          forecasts: entsoeStoredForecasts(parsed, zone, chunk, fetchedAt()),
        });
    }
  }
  return keepLatestRevision(documents);
}

/**
 * One parsed day-ahead document as stored forecasts of `zone` inside `window`: every interval at
 * the document's resolution, issued at min(fetchedAt, market day start − 6 h). Pure.
 */
export function entsoeStoredForecasts(
  parsed: Extract<EntsoeForecastResult, { kind: 'forecast' }>,
  zone: Zone,
  window: TimeWindow,
  fetchedAt: number,
): StoredForecast[] {
  const forecasts: StoredForecast[] = [];
  const quantities = parsed.areas.get(zone.upstreamId);
  for (const [quantity, intervals] of quantities ?? []) {
    for (const interval of intervals) {
      if (!isInWindow(interval.start, window)) continue;
      forecasts.push({
        zone: zone.code,
        ts: interval.start,
        kind: FORECAST_KIND[quantity],
        issuedAt: entsoeDayAheadIssuedAt(interval.marketDayStart, fetchedAt),
        value: interval.mw,
      });
    }
  }
  return forecasts;
}

/**
 * Documents may be re-issued (revisionNumber above 1): where two documents give one (kind,
 * interval), the higher revision wins, the later document on a tie.
 */
export function keepLatestRevision(
  documents: readonly {
    readonly revision: number;
    readonly forecasts: readonly StoredForecast[];
  }[],
): StoredForecast[] {
  const kept = new Map<string, { revision: number; forecast: StoredForecast }>();
  for (const { revision, forecasts } of documents) {
    for (const forecast of forecasts) {
      const key = `${forecast.kind} ${forecast.ts}`;
      const earlier = kept.get(key);
      if (earlier === undefined || earlier.revision <= revision)
        kept.set(key, { revision, forecast });
    }
  }
  return [...kept.values()].map(({ forecast }) => forecast);
}
