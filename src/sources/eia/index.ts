import type { Logger } from 'pino';
import type { GenerationByCode } from '../../core/generation.js';
import { computeReadings, type ZoneReadings } from '../../core/method.js';
import { eiaFuelTypesOf } from '../../core/production-types.js';
import type { Zone } from '../../core/zones.js';
import { UpstreamError, type RequestLimits, type TimeWindow, type UpstreamHttp } from '../http.js';
import { parseFuelTypeData } from './parse.js';
import { eiaFuelTypeUrl } from './request.js';

export interface EiaClient {
  readonly http: UpstreamHttp;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly logger?: Logger;
}

/**
 * Hourly generation of several zones over `window` in one paged query (upstreams README §2.1),
 * turned into readings by the method, one entry per zone (empty when EIA has no rows for it).
 * Every page is read before anything is computed, so an hour cut by a page boundary is whole.
 * Rejects with an UpstreamError when any page fails: a partial set of pages is not used.
 */
export async function fetchEiaZones(
  client: EiaClient,
  zones: readonly Zone[],
  window: TimeWindow,
  limits: RequestLimits = {},
): Promise<Map<string, ZoneReadings>> {
  const respondents = zones.map((zone) => zone.upstreamId);
  const collected = new Map<string, Map<string, Map<number, number>>>();
  for (let offset = 0, total = Infinity; offset < total;) {
    const url = eiaFuelTypeUrl({ ...client, respondents, window, offset });
    const { body } = await client.http.getText(url, limits);
    const page = parseFuelTypeData(body);
    if (page.kind === 'upstream-error') {
      const text = client.http.scrub(`${page.code} ${page.message}`.trim());
      const kind = /API_KEY/i.test(text) ? 'auth' : 'invalid';
      throw new UpstreamError(kind, `us-agency: request refused: ${text}`, {
        failure: kind === 'auth' ? 'auth' : 'rejected',
      });
    }
    if (page.kind === 'invalid-payload') {
      throw new UpstreamError('invalid', `us-agency: unusable payload: ${page.detail}`);
    }
    if (page.dropped.length > 0) {
      client.logger?.warn(
        { offset, dropped: page.dropped.length, first: page.dropped.slice(0, 3) },
        'us-agency: rows dropped from a fuel-type-data page',
      );
    }
    if (page.rows === 0 && offset < page.total) {
      throw new UpstreamError(
        'invalid',
        `us-agency: empty page at offset ${offset} of ${page.total}`,
      );
    }
    total = page.total;
    // Step by what came back: a server that caps pages lower than asked loses no rows.
    offset += page.rows;
    merge(collected, page.respondents);
  }
  return new Map(
    zones.map((zone) => [
      zone.code,
      computeReadings(
        zone.code,
        collected.get(zone.upstreamId) ?? new Map(),
        eiaFuelTypesOf(zone.upstreamId),
      ),
    ]),
  );
}

function merge(
  into: Map<string, Map<string, Map<number, number>>>,
  page: ReadonlyMap<string, GenerationByCode>,
): void {
  for (const [respondent, byFuelType] of page) {
    const target = into.get(respondent) ?? new Map<string, Map<number, number>>();
    into.set(respondent, target);
    for (const [fueltype, series] of byFuelType) {
      const merged = target.get(fueltype) ?? new Map<number, number>();
      target.set(fueltype, merged);
      for (const [ts, mwh] of series) merged.set(ts, mwh);
    }
  }
}
