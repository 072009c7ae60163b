import { eachZone, type UpstreamDefinition } from '../adapter.js';
import { fetchNesoForecasts, fetchNesoMixes, fetchNesoZone } from './index.js';
import { NESO_MAX_WINDOW_SECONDS } from './request.js';

/**
 * NESO Carbon Intensity API (docs/upstreams.md §3): the national intensity, and the generation
 * mix as a second feed over the same window.
 */
export const NESO_UPSTREAM: UpstreamDefinition = {
  settings: {
    baseUrl: { variable: 'NESO_BASE_URL', default: 'https://api.carbonintensity.org.uk' },
  },
  createFetcher: ({ settings, http, clock, logger }) => {
    const client = { http: http(), baseUrl: settings.baseUrl, ...(logger && { logger }) };
    return {
      zonesShareRequests: false,
      mixFeed: true,
      backfillChunkSeconds: NESO_MAX_WINDOW_SECONDS,
      fetch: (zones, window, limits = {}, forecasts) =>
        eachZone(
          zones,
          limits,
          {
            kind: 'readings',
            fetch: (zone) =>
              fetchNesoZone(client, zone, window, Math.floor(clock.now() / 1000), limits),
          },
          // The generation mix over the same window: the operator's figure stays the default
          // value, the mix gives GB its values on each basis (docs/method.md, "Great Britain").
          { kind: 'mixes', fetch: (zone) => fetchNesoMixes(client, zone, window, limits) },
          // The operator's 48-hour forecast, as issued now: only when the forecast window reaches
          // the future (an ingestion run); a backfill cannot ask past issues of it.
          forecasts && forecasts.window.toTs > clock.now() / 1000
            ? {
                kind: 'forecasts',
                fetch: (zone) =>
                  fetchNesoForecasts(client, zone, () => Math.floor(clock.now() / 1000), limits),
              }
            : undefined,
        ),
    };
  },
};
