import { eachZone, type UpstreamDefinition } from '../adapter.js';
import { fetchEntsoeZone } from './index.js';
import { ENTSOE_RATE_LIMIT } from './request.js';

const DAY = 24 * 3600;

/** ENTSO-E Transparency Platform (docs/upstreams.md §1): one A75 request per zone. */
export const ENTSOE_UPSTREAM: UpstreamDefinition = {
  settings: {
    baseUrl: { variable: 'ENTSOE_BASE_URL', default: 'https://web-api.tp.entsoe.eu/api' },
    credential: { variable: 'ENTSOE_TOKEN' },
  },
  createFetcher: ({ settings, http, logger }) => {
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
      fetch: (zones, window, limits = {}) =>
        eachZone(zones, limits, (zone) => fetchEntsoeZone(client, zone, window, limits)),
    };
  },
};
