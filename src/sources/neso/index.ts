import type { Logger } from 'pino';
import type { ZoneReadings } from '../../core/method.js';
import { operatorReadings, type OperatorHalfHour } from '../../core/uk-operator.js';
import type { Zone } from '../../core/zones.js';
import {
  splitWindow,
  UpstreamError,
  type RequestLimits,
  type TimeWindow,
  type UpstreamHttp,
} from '../http.js';
import { parseIntensity } from './parse.js';
import { NESO_HEADERS, NESO_MAX_WINDOW_SECONDS, nesoRangeUrl } from './request.js';

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
    if (parsed.kind === 'upstream-error') {
      throw new UpstreamError(
        'invalid',
        `uk-operator: request refused: ${parsed.code} ${parsed.message}`,
        { failure: 'rejected' },
      );
    }
    if (parsed.kind === 'invalid-payload') {
      throw new UpstreamError('invalid', `uk-operator: unusable payload: ${parsed.detail}`);
    }
    if (parsed.dropped.length > 0) {
      client.logger?.warn(
        { dropped: parsed.dropped.length, first: parsed.dropped.slice(0, 3) },
        'uk-operator: entries dropped from an intensity reply',
      );
    }
    // A `from` on a boundary may also bring the half hour before it (README §3.1): keep the chunk.
    halfHours.push(
      ...parsed.halfHours.filter(({ start }) => start >= chunk.fromTs && start < chunk.toTs),
    );
  }
  return operatorReadings(zone.code, halfHours, nowTs);
}
