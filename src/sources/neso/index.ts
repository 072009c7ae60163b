import type { Logger } from 'pino';
import type { ZoneReadings } from '../../core/method.js';
import {
  operatorMixes,
  operatorReadings,
  type OperatorHalfHour,
  type OperatorMixHalfHour,
  type ZoneMixes,
} from '../../core/uk-operator.js';
import type { Zone } from '../../core/zones.js';
import {
  splitWindow,
  UpstreamError,
  type RequestLimits,
  type TimeWindow,
  type UpstreamHttp,
} from '../http.js';
import { parseGeneration, parseIntensity } from './parse.js';
import {
  NESO_HEADERS,
  NESO_MAX_WINDOW_SECONDS,
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
  const halfHours: OperatorHalfHour[] = [];
  for (const chunk of splitWindow(window, NESO_MAX_WINDOW_SECONDS)) {
    const url = nesoRangeUrl(client.baseUrl, chunk);
    const { body } = await client.http.getText(url, { ...limits, headers: NESO_HEADERS });
    const parsed = parseIntensity(body);
    if (parsed.kind !== 'half-hours') throw replyError(parsed);
    logDropped(client, parsed.dropped, 'intensity');
    // A `from` on a boundary may also bring the half hour before it (README §3.1): keep the chunk.
    halfHours.push(
      ...parsed.halfHours.filter(({ start }) => start >= chunk.fromTs && start < chunk.toTs),
    );
  }
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
  const halfHours: OperatorMixHalfHour[] = [];
  for (const chunk of splitWindow(window, NESO_MAX_WINDOW_SECONDS)) {
    const url = nesoGenerationUrl(client.baseUrl, chunk);
    const { body } = await client.http.getText(url, { ...limits, headers: NESO_HEADERS });
    const parsed = parseGeneration(body);
    if (parsed.kind !== 'mix-half-hours') throw replyError(parsed, 'generation mix');
    logDropped(client, parsed.dropped, 'generation mix');
    // Every reply also brings the half-hour before its `from`, which the chunk before already
    // had: all of them go to operatorMixes, which keeps the later (fresher) one. The store keeps
    // what lies in the window.
    halfHours.push(...parsed.halfHours);
  }
  return operatorMixes(zone.code, halfHours);
}

/**
 * A reply that is not data: the upstream's refusal, or a payload we cannot use. `feed` names the
 * second feed in the message; the intensity's messages keep their words.
 */
function replyError(
  parsed:
    | { readonly kind: 'upstream-error'; readonly code: string; readonly message: string }
    | { readonly kind: 'invalid-payload'; readonly detail: string },
  feed?: string,
): UpstreamError {
  const of = feed === undefined ? '' : `${feed} `;
  if (parsed.kind === 'upstream-error') {
    return new UpstreamError(
      'invalid',
      `uk-operator: ${of}request refused: ${parsed.code} ${parsed.message}`,
      { failure: 'rejected' },
    );
  }
  return new UpstreamError('invalid', `uk-operator: unusable ${of}payload: ${parsed.detail}`);
}

function logDropped(client: NesoClient, dropped: readonly string[], feed: string): void {
  if (dropped.length === 0) return;
  client.logger?.warn(
    { dropped: dropped.length, first: dropped.slice(0, 3) },
    `uk-operator: entries dropped from a ${feed} reply`,
  );
}
