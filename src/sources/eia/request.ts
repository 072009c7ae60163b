import type { TimeWindow } from '../../core/time.js';

/**
 * EIA API v2 requests of the hourly `electricity/rto` routes (docs/upstreams.md §2.1, §2.3):
 * `start` and `end` are both inclusive and, with `frequency=hourly`, label the END of each UTC
 * hour.
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
  return eiaPageUrl('fuel-type-data', request);
}

/**
 * `electricity/rto/region-data` (docs/upstreams.md §2.6) for the given types: `D` demand and `DF`
 * day-ahead demand forecast for the forecast feed.
 */
export function eiaRegionDataUrl(request: EiaPageRequest, types: readonly string[]): string {
  return eiaPageUrl('region-data', request, {
    facets: types.map((type): Param => ['facets[type][]', type]),
  });
}

/**
 * `electricity/rto/interchange-data` (docs/upstreams.md §9.4): what `respondents` report as
 * `fromba`, with every neighbour. Sorted by period, then reporter and neighbour, so that pages
 * cut the rows of one period in a stable order.
 */
export function eiaInterchangeUrl(request: EiaPageRequest): string {
  return eiaPageUrl('interchange-data', request, {
    sorts: [
      ['sort[1][column]', 'fromba'],
      ['sort[1][direction]', 'asc'],
      ['sort[2][column]', 'toba'],
      ['sort[2][direction]', 'asc'],
    ],
  });
}

type Param = readonly [name: string, value: string];

/** The facet naming who reports: interchange-data has `fromba` (and `toba`) for `respondent`. */
const REPORTER_FACET = {
  'fuel-type-data': 'respondent',
  'region-data': 'respondent',
  'interchange-data': 'fromba',
} as const;

function eiaPageUrl(
  route: keyof typeof REPORTER_FACET,
  request: EiaPageRequest,
  { facets = [], sorts = [] }: { facets?: readonly Param[]; sorts?: readonly Param[] } = {},
): string {
  const { fromTs, toTs } = request.window;
  const facet = `facets[${REPORTER_FACET[route]}][]`;
  // Hour-starts [a, b) are the hour-ending labels a+1h ... b.
  const params: Param[] = [
    ['api_key', request.apiKey],
    ['frequency', 'hourly'],
    ['data[0]', 'value'],
    ...request.respondents.map((code): Param => [facet, code]),
    ...facets,
    ['start', eiaHour(fromTs + 3600)],
    ['end', eiaHour(toTs)],
    // Paging is only stable with an explicit sort (docs/upstreams.md §2.1).
    ['sort[0][column]', 'period'],
    ['sort[0][direction]', 'asc'],
    ...sorts,
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
