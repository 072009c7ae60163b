import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { ZoneReadings } from '../core/method.js';
import { zonesOfSource, type SourceId, type Zone } from '../core/zones.js';
import { fetchEiaZones } from '../sources/eia/index.js';
import { fetchEntsoeZone } from '../sources/entsoe/index.js';
import { ENTSOE_RATE_LIMIT } from '../sources/entsoe/request.js';
import {
  createUpstreamHttp,
  systemClock,
  UpstreamError,
  type Clock,
  type TimeWindow,
  type UpstreamHttpOptions,
} from '../sources/http.js';
import { fetchNesoZone } from '../sources/neso/index.js';
import { NESO_MAX_WINDOW_SECONDS } from '../sources/neso/request.js';

const DAY = 24 * 3600;

/** What one fetch produced for one zone: readings to store, or why there are none. */
export type ZoneOutcome =
  | ({ readonly zone: string } & ZoneReadings)
  | { readonly zone: string; readonly error: UpstreamError };

/** One upstream as ingestion and backfill drive it. */
export interface SourceAdapter {
  readonly source: SourceId;
  /** The clock the adapter runs on; ingestion and backfill read "now" from it too. */
  readonly clock: Clock;
  readonly zones: readonly Zone[];
  /** One request covers every zone (EIA), so the zones of a run share one window. */
  readonly zonesShareRequests: boolean;
  /** Length of one resumable backfill chunk; within the upstream's per-request limits. */
  readonly backfillChunkSeconds: number;
  /**
   * Fetches `zones` over `window`, yielding each zone as soon as it is done. Once `signal` is
   * aborted, no further zone is started.
   */
  fetch(
    zones: readonly Zone[],
    window: TimeWindow,
    signal?: AbortSignal,
  ): AsyncGenerator<ZoneOutcome>;
}

export interface SourceDependencies {
  readonly logger?: Logger;
  readonly fetch?: typeof fetch;
  readonly clock?: Clock;
  /** Retry and timeout settings (tests shorten them). */
  readonly http?: Partial<Omit<UpstreamHttpOptions, 'source' | 'secrets' | 'authHint'>>;
  /**
   * The upstream is the local simulator of `gridco2 demo`: requests are not held to ENTSO-E's
   * rate limit, which protects the real one (a ten-minute ban above 400 a minute) but would
   * stretch a year of demo history over minutes. Never set for a real upstream.
   */
  readonly localUpstream?: boolean;
}

/**
 * Why `source` cannot run with this configuration (its key is not set), or null when it can.
 * The API layer can show it; ingestion logs it once and records it in the source's report.
 */
export function sourceDisabledReason(config: Config, source: SourceId): string | null {
  if (source === 'europe-tso' && config.entsoe.token === null) return 'ENTSOE_TOKEN is not set';
  if (source === 'us-agency' && config.eia.apiKey === null) return 'EIA_API_KEY is not set';
  return null;
}

/** The adapter of a configured source; throws for a source whose key is missing. */
export function createSourceAdapter(
  config: Config,
  source: SourceId,
  dependencies: SourceDependencies = {},
): SourceAdapter {
  const reason = sourceDisabledReason(config, source);
  if (reason !== null) throw new Error(`${source} is not configured: ${reason}`);
  const { logger, clock = systemClock } = dependencies;
  const logged = logger ? { logger } : {};
  const httpFor = (options: Pick<UpstreamHttpOptions, 'secrets' | 'authHint' | 'rateLimit'>) =>
    createUpstreamHttp({
      ...options,
      ...dependencies.http,
      source,
      clock,
      ...logged,
      ...(dependencies.fetch && { fetch: dependencies.fetch }),
    });
  const common = { source, clock, zones: zonesOfSource(source) };

  switch (source) {
    case 'europe-tso': {
      const token = config.entsoe.token ?? '';
      const client = {
        http: httpFor({
          secrets: [token],
          authHint: 'check ENTSOE_TOKEN',
          rateLimit: dependencies.localUpstream ? undefined : ENTSOE_RATE_LIMIT,
        }),
        baseUrl: config.entsoe.baseUrl,
        token,
        ...logged,
      };
      return {
        ...common,
        zonesShareRequests: false,
        // Well inside the one-year limit: a month per request keeps documents small and a resumed
        // backfill loses at most a month of one zone.
        backfillChunkSeconds: 30 * DAY,
        fetch: (chosen, window, signal) =>
          eachZone(chosen, signal, (zone) => fetchEntsoeZone(client, zone, window, signal)),
      };
    }
    case 'us-agency': {
      const apiKey = config.eia.apiKey ?? '';
      const client = {
        http: httpFor({ secrets: [apiKey], authHint: 'check EIA_API_KEY' }),
        baseUrl: config.eia.baseUrl,
        apiKey,
        ...logged,
      };
      return {
        ...common,
        zonesShareRequests: true,
        // About 2,600 rows a day for the 11 respondents: a week is a handful of pages.
        backfillChunkSeconds: 7 * DAY,
        async *fetch(chosen, window, signal) {
          let computed: Map<string, ZoneReadings>;
          try {
            computed = await fetchEiaZones(client, chosen, window, signal);
          } catch (error) {
            // One query for every zone: its failure is every zone's.
            for (const zone of chosen) {
              yield { zone: zone.code, error: asUpstreamError(error, signal) };
            }
            return;
          }
          for (const [zone, readings] of computed) yield { zone, ...readings };
        },
      };
    }
    case 'uk-operator': {
      const client = { http: httpFor({}), baseUrl: config.neso.baseUrl, ...logged };
      return {
        ...common,
        zonesShareRequests: false,
        backfillChunkSeconds: NESO_MAX_WINDOW_SECONDS,
        fetch: (chosen, window, signal) =>
          eachZone(chosen, signal, (zone) =>
            fetchNesoZone(client, zone, window, Math.floor(clock.now() / 1000), signal),
          ),
      };
    }
  }
}

/**
 * Whether a failure ends the source's run: refused credentials (every later request would be
 * refused too), and a rate limit still standing after the retries (ENTSO-E bans an address for
 * ten minutes; asking again for each zone would only prolong it).
 */
export function stopsSource(error: UpstreamError): boolean {
  return error.kind === 'auth' || error.status === 429;
}

/**
 * Fetches zones one after the other. A failed zone does not stop the others, except a failure
 * that stops the source (see stopsSource).
 */
async function* eachZone(
  zones: readonly Zone[],
  signal: AbortSignal | undefined,
  fetchZone: (zone: Zone) => Promise<ZoneReadings>,
): AsyncGenerator<ZoneOutcome> {
  for (const zone of zones) {
    if (signal?.aborted) return;
    try {
      yield { zone: zone.code, ...(await fetchZone(zone)) };
    } catch (error) {
      const upstreamError = asUpstreamError(error, signal);
      yield { zone: zone.code, error: upstreamError };
      if (stopsSource(upstreamError)) return;
    }
  }
}

/** Cancellation passes through; anything else unexpected is reported as an invalid payload. */
function asUpstreamError(error: unknown, signal: AbortSignal | undefined): UpstreamError {
  if (signal?.aborted) throw error;
  if (error instanceof UpstreamError) return error;
  return new UpstreamError('invalid', `unexpected failure: ${String(error)}`);
}
