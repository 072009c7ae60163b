import { EUROPE_BORDERS, EUROPE_NODES, type EntsoeBorder } from '../../core/grid-graph/europe.js';
import type { Zone } from '../../core/zones.js';
import { eachBorder, eachZone, type UpstreamDefinition } from '../adapter.js';
import { ENTSOE_FORECAST_DOCUMENTS } from '../../core/sources.js';
import { fetchEntsoeBorder } from './flows.js';
import { fetchEntsoeForecasts, fetchEntsoeZone } from './index.js';
import { ENTSOE_RATE_LIMIT } from './request.js';

const DAY = 24 * 3600;

/** The European graph's borders by name, `a/b`. */
const BORDERS: ReadonlyMap<string, EntsoeBorder> = new Map(
  EUROPE_BORDERS.map((border) => [`${border.a}/${border.b}`, border]),
);

function borderNamed(name: string): EntsoeBorder {
  const border = BORDERS.get(name);
  if (border === undefined) throw new Error(`europe-tso: no border ${name}`);
  return border;
}

/**
 * ENTSO-E Transparency Platform (docs/upstreams.md §1): one A75 request per zone, and when asked
 * the zone's day-ahead forecasts (A69, A65, A71; docs/upstreams.md §8). The European flow graph:
 * A75 of its extra nodes like a zone's, and two A11 requests per link of each border, one border
 * after the other (docs/upstreams.md §9), all through the one client and its rate limit.
 */
export const ENTSOE_UPSTREAM: UpstreamDefinition = {
  settings: {
    baseUrl: { variable: 'ENTSOE_BASE_URL', default: 'https://web-api.tp.entsoe.eu/api' },
    credential: { variable: 'ENTSOE_TOKEN' },
  },
  createFetcher: ({ settings, http, clock, logger }) => {
    const client = {
      http: http({ rateLimit: ENTSOE_RATE_LIMIT }),
      baseUrl: settings.baseUrl,
      token: settings.credential ?? '',
      ...(logger && { logger }),
    };
    return {
      zonesShareRequests: false,
      mixFeed: false,
      // Well inside the one-year limit: a month per request keeps documents small and a resumed
      // backfill loses at most a month of one zone.
      backfillChunkSeconds: 30 * DAY,
      fetch: (zones, window, limits = {}, forecasts) =>
        eachZone(
          zones,
          limits,
          { kind: 'readings', fetch: (zone) => fetchEntsoeZone(client, zone, window, limits) },
          // The day-ahead forecasts, one feed per document type, after the actuals.
          ...ENTSOE_FORECAST_DOCUMENTS.map((documentType) =>
            forecasts
              ? {
                  kind: 'forecasts' as const,
                  fetch: (zone: Zone) =>
                    fetchEntsoeForecasts(
                      client,
                      zone,
                      documentType,
                      forecasts.window,
                      () => Math.floor(clock.now() / 1000),
                      limits,
                    ),
                }
              : undefined,
          ),
        ),
      graph: {
        graph: 'europe',
        nodes: EUROPE_NODES,
        borders: [...BORDERS.keys()],
        // A11 allows a year per request; a month, as for A75, keeps documents small and a
        // resumed backfill loses at most a month of one border.
        backfillChunkSeconds: 30 * DAY,
        fetchFlows: (window, limits = {}, borders = [...BORDERS.keys()]) =>
          eachBorder(borders, limits, (name) =>
            fetchEntsoeBorder(client, borderNamed(name), window, limits),
          ),
      },
    };
  },
};
