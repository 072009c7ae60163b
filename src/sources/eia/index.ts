import type { Logger } from 'pino';
import type { GenerationByCode } from '../../core/generation.js';
import { computeReadings, type ZoneReadings } from '../../core/method.js';
import { eiaDemandForecastIssuedAt, eiaDemandIssuedAt } from '../../core/forecast-issue.js';
import { eiaFuelTypesOf } from '../../core/production-types.js';
import type { StoredForecast } from '../../core/reading.js';
import { type ForecastKind, forecastKindsOf } from '../../core/sources.js';
import type { Zone } from '../../core/zones.js';
import { interchangeFlows, US_NODES, type InterchangeFlows } from '../../core/grid-graph/us.js';
import { isInWindow, type TimeWindow } from '../../core/time.js';
import { UpstreamError, type RequestLimits, type UpstreamHttp } from '../http.js';
import { payloadFailure, type PayloadFailure } from '../adapter.js';
import { parseFuelTypeData } from './parse.js';
import { parseRegionData } from './parse-region.js';
import { parseInterchangeData } from './parse-interchange.js';
import { eiaFuelTypeUrl, eiaInterchangeUrl, eiaRegionDataUrl } from './request.js';

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
  await readAllPages(
    client,
    (offset) => eiaFuelTypeUrl({ ...client, respondents, window, offset }),
    parseFuelTypeData,
    'fuel-type-data',
    (page) => merge(collected, page.respondents),
    limits,
  );
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

/** The types of region-data the forecast feed stores, and the kind each is stored as. */
const REGION_KINDS: Readonly<Record<string, ForecastKind>> = forecastKindsOf('us-agency');

/**
 * The forecast feed: EIA's day-ahead demand forecast (`DF`) and demand (`D`) of several zones
 * over `window` (hour starts, possibly in the future) in one paged region-data query, as stored
 * forecasts per zone (MW, the hour's mean), issued by the rules of src/core/forecast-issue.ts
 * with `fetchedAt` (epoch seconds, read when the last page arrived). Rejects like fetchEiaZones.
 */
export async function fetchEiaForecasts(
  client: EiaClient,
  zones: readonly Zone[],
  window: TimeWindow,
  fetchedAt: () => number,
  limits: RequestLimits = {},
): Promise<Map<string, StoredForecast[]>> {
  const respondents = zones.map((zone) => zone.upstreamId);
  const collected = new Map<string, Map<string, Map<number, number>>>();
  await readAllPages(
    client,
    (offset) =>
      eiaRegionDataUrl({ ...client, respondents, window, offset }, Object.keys(REGION_KINDS)),
    parseRegionData,
    'region-data',
    (page) => merge(collected, page.respondents),
    limits,
  );
  const now = fetchedAt();
  return new Map(
    zones.map((zone) => [
      zone.code,
      eiaStoredForecasts(zone, collected.get(zone.upstreamId), window, now),
    ]),
  );
}

/** One respondent's region-data as stored forecasts of `zone` inside `window`. Pure. */
export function eiaStoredForecasts(
  zone: Zone,
  byType: ReadonlyMap<string, ReadonlyMap<number, number>> | undefined,
  window: TimeWindow,
  fetchedAt: number,
): StoredForecast[] {
  const forecasts: StoredForecast[] = [];
  for (const [type, kind] of Object.entries(REGION_KINDS)) {
    for (const [ts, mwh] of byType?.get(type) ?? []) {
      if (!isInWindow(ts, window)) continue;
      const issuedAt =
        type === 'DF' ? eiaDemandForecastIssuedAt(ts, fetchedAt) : eiaDemandIssuedAt(ts);
      forecasts.push({ zone: zone.code, ts, kind, issuedAt, value: mwh });
    }
  }
  return forecasts.sort((a, b) => a.ts - b.ts);
}

/** Who reports interchange: every balancing authority of the US graph (foreign ones never do). */
const INTERCHANGE_REPORTERS: readonly string[] = US_NODES.flatMap((node) =>
  node.role !== 'boundary' && node.upstreamId !== null ? [node.upstreamId] : [],
);

/**
 * The interchange every balancing authority of the US graph reports over `window`, in one paged
 * interchange-data query (docs/upstreams.md §9.4), as stored flows (graph `us`: each report as
 * its reporter gave it), with the codes and pairs the graph does not know. Every page is read
 * first; rejects like fetchEiaZones.
 */
export async function fetchEiaInterchange(
  client: EiaClient,
  window: TimeWindow,
  limits: RequestLimits = {},
): Promise<InterchangeFlows> {
  const collected = new Map<string, Map<string, Map<number, number>>>();
  await readAllPages(
    client,
    (offset) =>
      eiaInterchangeUrl({ ...client, respondents: INTERCHANGE_REPORTERS, window, offset }),
    parseInterchangeData,
    'interchange-data',
    (page) => merge(collected, page.reported),
    limits,
  );
  const flows = interchangeFlows(collected, window);
  if (flows.unlistedPairs.length > 0) {
    client.logger?.warn(
      { pairs: flows.unlistedPairs },
      'us-agency: interchange between nodes the graph does not list as neighbours',
    );
  }
  return flows;
}

/**
 * The codes of the api.data.gov gateway in front of EIA for a refused key
 * (https://developer.nrel.gov/docs/errors, the gateway's list), whatever the HTTP status.
 */
const KEY_REFUSALS: ReadonlySet<string> = new Set([
  'API_KEY_MISSING',
  'API_KEY_INVALID',
  'API_KEY_DISABLED',
  'API_KEY_UNAUTHORIZED',
  'API_KEY_UNVERIFIED',
]);

/**
 * Reads every page of one query (upstreams README §2.1): stops at `offset >= total`, steps by
 * the rows that came back. Rejects with an UpstreamError when any page fails.
 */
async function readAllPages<T extends { rows: number; total: number; dropped: readonly string[] }>(
  client: EiaClient,
  urlAt: (offset: number) => string,
  parse: (
    body: string,
  ) => ({ kind: 'generation' | 'region-data' | 'interchange' } & T) | PayloadFailure,
  route: string,
  take: (page: T) => void,
  limits: RequestLimits,
): Promise<void> {
  for (let offset = 0, total = Infinity; offset < total;) {
    const { body } = await client.http.getText(urlAt(offset), limits);
    const page = parse(body);
    if (page.kind === 'upstream-error' && KEY_REFUSALS.has(page.code)) {
      const text = client.http.scrub(`${page.code} ${page.message}`.trim());
      throw new UpstreamError('auth', `us-agency: request refused: ${text}`, { failure: 'auth' });
    }
    if (page.kind === 'upstream-error' || page.kind === 'invalid-payload') {
      throw payloadFailure(page, 'us-agency', {
        refusal: ({ code, message }) => client.http.scrub(`${code} ${message}`.trim()),
      });
    }
    if (page.dropped.length > 0) {
      client.logger?.warn(
        { offset, dropped: page.dropped.length, first: page.dropped.slice(0, 3) },
        `us-agency: rows dropped from a ${route} page`,
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
    take(page);
  }
}

function merge(
  into: Map<string, Map<string, Map<number, number>>>,
  page: ReadonlyMap<string, GenerationByCode | ReadonlyMap<string, ReadonlyMap<number, number>>>,
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
