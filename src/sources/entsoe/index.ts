import type { Logger } from 'pino';
import type { GenerationByCode } from '../../core/generation.js';
import { computeReadings, type ZoneReadings } from '../../core/method.js';
import { PSR_TYPES } from '../../core/production-types.js';
import type { Zone } from '../../core/zones.js';
import {
  splitWindow,
  UpstreamError,
  type RequestLimits,
  type TimeWindow,
  type UpstreamHttp,
} from '../http.js';
import { parseA75 } from './parse.js';
import { ENTSOE_MAX_WINDOW_SECONDS, entsoeA75Url } from './request.js';

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
  let body: string;
  try {
    ({ body } = await client.http.getText(url, limits));
  } catch (error) {
    // Older servers answered "no matching data" with HTTP 400 and the Acknowledgement (§1.5).
    if (error instanceof UpstreamError && error.status === 400 && error.body) {
      if (parseA75(error.body).kind === 'no-data') return undefined;
    }
    throw error;
  }
  const where = `europe-tso: ${zone.code}`;
  const parsed = parseA75(body);
  switch (parsed.kind) {
    case 'no-data':
      return undefined;
    case 'upstream-error':
      throw new UpstreamError('invalid', `${where}: request refused: ${parsed.message}`, {
        failure: 'rejected',
      });
    case 'invalid-payload':
      throw new UpstreamError('invalid', `${where}: unusable A75 payload: ${parsed.detail}`);
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

/** Keeps the hours inside the requested window: a document may cover more than was asked. */
function clip(generation: GenerationByCode, window: TimeWindow): GenerationByCode {
  return new Map(
    [...generation].map(([code, series]) => [
      code,
      new Map([...series].filter(([ts]) => ts >= window.fromTs && ts < window.toTs)),
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
