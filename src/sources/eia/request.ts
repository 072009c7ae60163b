import type { TimeWindow } from '../../core/time.js';

/**
 * EIA API v2 fuel-type-data requests (docs/upstreams.md §2.1, §2.3): `start` and `end` are both
 * inclusive and, with `frequency=hourly`, label the END of each UTC hour.
 */

/** Rows per JSON page: the most EIA returns. */
const EIA_PAGE_ROWS = 5000;

export interface EiaPageRequest {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly respondents: readonly string[];
  /** Hour starts `[fromTs, toTs)`. */
  readonly window: TimeWindow;
  readonly offset: number;
}

export function eiaFuelTypeUrl(request: EiaPageRequest): string {
  return eiaPageUrl('fuel-type-data', request, []);
}

/**
 * `electricity/rto/region-data` (docs/upstreams.md §2.6) for the given types: `D` demand and `DF`
 * day-ahead demand forecast for the forecast feed.
 */
export function eiaRegionDataUrl(request: EiaPageRequest, types: readonly string[]): string {
  return eiaPageUrl(
    'region-data',
    request,
    types.map((type): [string, string] => ['facets[type][]', type]),
  );
}

function eiaPageUrl(
  route: 'fuel-type-data' | 'region-data',
  request: EiaPageRequest,
  facets: readonly [string, string][],
): string {
  const { fromTs, toTs } = request.window;
  // Hour-starts [a, b) are the hour-ending labels a+1h ... b.
  const params: [string, string][] = [
    ['api_key', request.apiKey],
    ['frequency', 'hourly'],
    ['data[0]', 'value'],
    ...request.respondents.map((code): [string, string] => ['facets[respondent][]', code]),
    ...facets,
    ['start', eiaHour(fromTs + 3600)],
    ['end', eiaHour(toTs)],
    // Paging is only stable with an explicit sort (docs/upstreams.md §2.1).
    ['sort[0][column]', 'period'],
    ['sort[0][direction]', 'asc'],
    ['offset', String(request.offset)],
    ['length', String(EIA_PAGE_ROWS)],
  ];
  // Brackets stay literal, as in EIA's own examples; values are encoded.
  const query = params.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('&');
  return `${request.baseUrl}/electricity/rto/${route}/data/?${query}`;
}

/** `YYYY-MM-DDTHH` in UTC. */
export function eiaHour(epochSeconds: number): string {
  if (epochSeconds % 3600 !== 0) throw new RangeError('EIA hourly periods are whole UTC hours');
  return new Date(epochSeconds * 1000).toISOString().slice(0, 13);
}
