import { US_NODES } from '../../core/grid-graph/us.js';
import type { ZoneReadings } from '../../core/method.js';
import type { StoredForecast } from '../../core/reading.js';
import { asUpstreamError, eachBorder, type UpstreamDefinition } from '../adapter.js';
import { fetchEiaForecasts, fetchEiaInterchange, fetchEiaZones } from './index.js';

const DAY = 24 * 3600;

/** The US graph's borders come in one interchange-data query of every pair: one "border". */
const INTERCHANGE = 'interchange';

/**
 * EIA API v2 (docs/upstreams.md §2): one paged query for every zone, and when asked one paged
 * region-data query for their demand and day-ahead demand forecast (docs/upstreams.md §8). The
 * US flow graph: fuel-type data of its extra nodes in one paged query like the zones', and one
 * paged interchange-data query of every pair (docs/upstreams.md §9.4).
 */
export const EIA_UPSTREAM: UpstreamDefinition = {
  settings: {
    baseUrl: { variable: 'EIA_BASE_URL', default: 'https://api.eia.gov/v2' },
    credential: { variable: 'EIA_API_KEY' },
  },
  createFetcher: ({ settings, http, clock, logger }) => {
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
      async *fetch(zones, window, limits = {}, forecasts) {
        let computed: Map<string, ZoneReadings> | undefined;
        try {
          computed = await fetchEiaZones(client, zones, window, limits);
        } catch (error) {
          // One query for every zone: its failure is every zone's (one error, so a stop rule
          // counts it once).
          const upstreamError = asUpstreamError(error, limits.signal);
          for (const zone of zones) {
            yield { kind: 'actuals-failed', zone: zone.code, error: upstreamError };
          }
        }
        for (const [zone, readings] of computed ?? []) {
          yield { zone, ...readings, kind: 'readings' };
        }
        // The forecast feed (region-data D and DF) after the actuals, whatever became of them:
        // a failure of one never stops the other (docs/upstreams.md §8.4).
        if (!forecasts || limits.signal?.aborted) return;
        let fetched: Map<string, StoredForecast[]>;
        try {
          fetched = await fetchEiaForecasts(
            client,
            zones,
            forecasts.window,
            () => Math.floor(clock.now() / 1000),
            limits,
          );
        } catch (error) {
          const upstreamError = asUpstreamError(error, limits.signal);
          for (const zone of zones) {
            yield { kind: 'forecasts-failed', zone: zone.code, error: upstreamError };
          }
          return;
        }
        for (const [zone, stored] of fetched) yield { kind: 'forecasts', zone, forecasts: stored };
      },
      graph: {
        graph: 'us',
        nodes: US_NODES,
        borders: [INTERCHANGE],
        // About 295 series x 168 hours: a week is ten pages, as for fuel-type data.
        backfillChunkSeconds: 7 * DAY,
        fetchFlows: (window, limits = {}, borders = [INTERCHANGE]) =>
          eachBorder(
            borders.filter((border) => border === INTERCHANGE),
            limits,
            async () => (await fetchEiaInterchange(client, window, limits)).flows,
          ),
      },
    };
  },
};
