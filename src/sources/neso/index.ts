import type { Logger } from 'pino';
import type { ZoneReadings } from '../../core/method.js';
import {
  operatorMixes,
  operatorReadings,
  type OperatorHalfHour,
  type OperatorMixHalfHour,
  type ZoneMixes,
} from '../../core/uk-operator.js';
import { nesoForecastIssuedAt } from '../../core/forecast-issue.js';
import type { StoredForecast } from '../../core/reading.js';
import type { Zone } from '../../core/zones.js';
import { payloadFailure, type PayloadFailure } from '../adapter.js';
import { isInWindow, splitWindow, type TimeWindow } from '../../core/time.js';
import type { RequestLimits, UpstreamError, UpstreamHttp } from '../http.js';
import { type HalfHoursResult, parseGeneration, parseIntensity } from './parse.js';
import {
  NESO_HEADERS,
  NESO_MAX_WINDOW_SECONDS,
  nesoForecastUrl,
  nesoGenerationUrl,
  nesoRangeUrl,
} from './request.js';

export interface NesoClient {
  readonly http: UpstreamHttp;
  readonly baseUrl: string;
  readonly logger?: Logger;
}

/**
 * The operator's national half-hours over `window`, in requests of at most 14 days (upstreams
 * README §3.1), as GB readings as of `nowTs` (method.md, "Great Britain (NESO)").
 * Rejects with an UpstreamError when a request fails.
 */
export async function fetchNesoZone(
  client: NesoClient,
  zone: Zone,
  window: TimeWindow,
  nowTs: number,
  limits: RequestLimits = {},
): Promise<ZoneReadings> {
  const pieces = await askInPieces(client, INTENSITY, nesoRangeUrl, window, limits);
  // A `from` on a boundary may also bring the half hour before it (README §3.1): keep the piece.
  const halfHours = pieces.flatMap(({ piece, halfHours }) =>
    halfHours.filter(({ start }) => isInWindow(start, piece)),
  );
  return operatorReadings(zone.code, halfHours, nowTs);
}

/**
 * The operator's national generation mix over `window`, in requests of at most 14 days, as GB
 * mixes with their values on each basis (docs/method.md, "Great Britain"). A second feed beside
 * the intensity: fetched over the same window, so the trailing re-fetch brings revisions of the
 * provisional current mix (docs/upstreams.md §3.4). Rejects with an UpstreamError when a request
 * fails.
 */
export async function fetchNesoMixes(
  client: NesoClient,
  zone: Zone,
  window: TimeWindow,
  limits: RequestLimits = {},
): Promise<ZoneMixes> {
  const pieces = await askInPieces(client, GENERATION_MIX, nesoGenerationUrl, window, limits);
  // Every reply also brings the half-hour before its `from`, which the piece before already had:
  // all of them go to operatorMixes, which keeps the later (fresher) one. The store keeps what
  // lies in the window.
  return operatorMixes(
    zone.code,
    pieces.flatMap(({ halfHours }) => halfHours),
  );
}

/**
 * The forecast feed: the operator's national 48-hour forecast (`/intensity/{from}/fw48h`) as
 * issued now, one request from one minute past the current half hour. Every half hour from the
 * one in progress on is stored as `uk-operator:fw48h` (gCO2/kWh as published), issued at the
 * fetch time floored to the half hour. Only the present can be asked: the API answers a past
 * `{from}` with its latest forecasts, not the ones issued then, so backfill has none.
 */
export async function fetchNesoForecasts(
  client: NesoClient,
  zone: Zone,
  fetchedAt: () => number,
  limits: RequestLimits = {},
): Promise<StoredForecast[]> {
  const asked = fetchedAt();
  const url = nesoForecastUrl(client.baseUrl, nesoForecastIssuedAt(asked) + 60);
  const halfHours = await askHalfHours(client, FORECAST, url, limits);
  return nesoStoredForecasts(zone, halfHours, fetchedAt());
}

/** The fw48h half hours as stored forecasts issued at `fetchedAt` floored to the half hour. Pure. */
export function nesoStoredForecasts(
  zone: Zone,
  halfHours: readonly OperatorHalfHour[],
  fetchedAt: number,
): StoredForecast[] {
  const issuedAt = nesoForecastIssuedAt(fetchedAt);
  const byStart = new Map<number, StoredForecast>();
  for (const { start, forecast } of halfHours) {
    // A half hour before the one in progress (the boundary quirk) is not a forecast any more.
    if (forecast === null || start < issuedAt) continue;
    byStart.set(start, {
      zone: zone.code,
      ts: start,
      kind: 'uk-operator:fw48h',
      issuedAt,
      value: forecast,
    });
  }
  return [...byStart.values()].sort((a, b) => a.ts - b.ts);
}

type FeedName = 'intensity' | 'generation mix' | 'forecast';

/** One of the operator's feeds: what its messages call it, and how its replies are read. */
interface NesoFeed<HalfHour> {
  readonly name: FeedName;
  readonly parse: (body: string) => HalfHoursResult<string, HalfHour>;
}

const INTENSITY: NesoFeed<OperatorHalfHour> = { name: 'intensity', parse: parseIntensity };
const GENERATION_MIX: NesoFeed<OperatorMixHalfHour> = {
  name: 'generation mix',
  parse: parseGeneration,
};
const FORECAST: NesoFeed<OperatorHalfHour> = { name: 'forecast', parse: parseIntensity };

/**
 * `window` asked in pieces of at most 14 days (upstreams README §3.1), one after the other: each
 * piece with the half-hours its reply holds. Rejects as `askHalfHours` does.
 */
async function askInPieces<HalfHour>(
  client: NesoClient,
  feed: NesoFeed<HalfHour>,
  urlOf: (baseUrl: string, piece: TimeWindow) => string,
  window: TimeWindow,
  limits: RequestLimits,
): Promise<{ piece: TimeWindow; halfHours: readonly HalfHour[] }[]> {
  const pieces = [];
  for (const piece of splitWindow(window, NESO_MAX_WINDOW_SECONDS)) {
    const url = urlOf(client.baseUrl, piece);
    pieces.push({ piece, halfHours: await askHalfHours(client, feed, url, limits) });
  }
  return pieces;
}

/**
 * One request's half-hours, the entries dropped from them logged. Rejects with an UpstreamError
 * when the request fails or its reply holds no data.
 */
async function askHalfHours<HalfHour>(
  client: NesoClient,
  feed: NesoFeed<HalfHour>,
  url: string,
  limits: RequestLimits,
): Promise<readonly HalfHour[]> {
  const { body } = await client.http.getText(url, { ...limits, headers: NESO_HEADERS });
  const parsed = feed.parse(body);
  if (!('halfHours' in parsed)) throw replyError(parsed, feed.name);
  logDropped(client, parsed.dropped, feed.name);
  return parsed.halfHours;
}

/**
 * A reply that is not data: the upstream's refusal, or a payload we cannot use. The messages name
 * the feed, but for the intensity's, which keep their words.
 */
function replyError(parsed: PayloadFailure, feed: FeedName): UpstreamError {
  const of = feed === 'intensity' ? '' : `${feed} `;
  return payloadFailure(parsed, 'uk-operator', {
    refusal: ({ code, message }) => `${code} ${message}`,
    request: `${of}request`,
    payload: `${of}payload`,
  });
}

function logDropped(client: NesoClient, dropped: readonly string[], feed: FeedName): void {
  if (dropped.length === 0) return;
  client.logger?.warn(
    { dropped: dropped.length, first: dropped.slice(0, 3) },
    `uk-operator: entries dropped from a ${feed} reply`,
  );
}
