import type { ZoneReadings } from '../../core/method.js';
import { asUpstreamError, type UpstreamDefinition } from '../adapter.js';
import { fetchEiaZones } from './index.js';

const DAY = 24 * 3600;

/** EIA API v2 (docs/upstreams.md §2): one paged query for every zone. */
export const EIA_UPSTREAM: UpstreamDefinition = {
  settings: {
    baseUrl: { variable: 'EIA_BASE_URL', default: 'https://api.eia.gov/v2' },
    credential: { variable: 'EIA_API_KEY' },
  },
  createFetcher: ({ settings, http, logger }) => {
    const client = {
      http: http(),
      baseUrl: settings.baseUrl,
      apiKey: settings.credential ?? '',
      ...(logger && { logger }),
    };
    return {
      zonesShareRequests: true,
      mixFeed: false,
      // About 2,600 rows a day for the 11 respondents: a week is a handful of pages.
      backfillChunkSeconds: 7 * DAY,
      async *fetch(zones, window, limits = {}) {
        let computed: Map<string, ZoneReadings>;
        try {
          computed = await fetchEiaZones(client, zones, window, limits);
        } catch (error) {
          // One query for every zone: its failure is every zone's (one error, so a stop rule
          // counts it once).
          const upstreamError = asUpstreamError(error, limits.signal);
          for (const zone of zones) yield { zone: zone.code, error: upstreamError };
          return;
        }
        for (const [zone, readings] of computed) yield { zone, ...readings };
      },
    };
  },
};
