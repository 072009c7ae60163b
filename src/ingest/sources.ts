import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { ZoneReadings } from '../core/method.js';
import { zonesOfSource, type SourceId, type Zone } from '../core/zones.js';
import { fetchEiaZones } from '../sources/eia/index.js';
import { fetchEntsoeZone } from '../sources/entsoe/index.js';
import { ENTSOE_RATE_LIMIT } from '../sources/entsoe/request.js';
import {
  createUpstreamHttp,
  scrubSecrets,
  systemClock,
  UpstreamError,
  type Clock,
  type RequestLimits,
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
   * aborted, no further zone is started, but outcomes already at hand (the other zones of one EIA
   * query) are still yielded; no request reaches past `deadline`.
   */
  fetch(
    zones: readonly Zone[],
    window: TimeWindow,
    limits?: RequestLimits,
  ): AsyncGenerator<ZoneOutcome>;
  /** Redacts every configured credential, by value, from a text meant for logs or storage. */
  scrub(text: string): string;
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
  // Every configured key, whichever source this is: a text never carries another source's key
  // today, but redacting it costs nothing.
  const secrets = [config.entsoe.token, config.eia.apiKey].filter(
    (secret): secret is string => secret !== null && secret.length > 0,
  );
  const httpFor = (options: Pick<UpstreamHttpOptions, 'authHint' | 'rateLimit'>) =>
    createUpstreamHttp({
      ...options,
      ...dependencies.http,
      source,
      secrets,
      clock,
      ...logged,
      ...(dependencies.fetch && { fetch: dependencies.fetch }),
    });
  const common = {
    source,
    clock,
    zones: zonesOfSource(source),
    scrub: (text: string) => scrubSecrets(text, secrets),
  };

  switch (source) {
    case 'europe-tso': {
      const token = config.entsoe.token ?? '';
      const client = {
        http: httpFor({
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
        fetch: (chosen, window, limits = {}) =>
          eachZone(chosen, limits, (zone) => fetchEntsoeZone(client, zone, window, limits)),
      };
    }
    case 'us-agency': {
      const apiKey = config.eia.apiKey ?? '';
      const client = {
        http: httpFor({ authHint: 'check EIA_API_KEY' }),
        baseUrl: config.eia.baseUrl,
        apiKey,
        ...logged,
      };
      return {
        ...common,
        zonesShareRequests: true,
        // About 2,600 rows a day for the 11 respondents: a week is a handful of pages.
        backfillChunkSeconds: 7 * DAY,
        async *fetch(chosen, window, limits = {}) {
          let computed: Map<string, ZoneReadings>;
          try {
            computed = await fetchEiaZones(client, chosen, window, limits);
          } catch (error) {
            // One query for every zone: its failure is every zone's (one error, so a stop rule
            // counts it once).
            const upstreamError = asUpstreamError(error, limits.signal);
            for (const zone of chosen) yield { zone: zone.code, error: upstreamError };
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
        fetch: (chosen, window, limits = {}) =>
          eachZone(chosen, limits, (zone) =>
            fetchNesoZone(client, zone, window, Math.floor(clock.now() / 1000), limits),
          ),
      };
    }
  }
}

/** Requests in a row failing with a timeout, a network error or a 5xx: the upstream is down. */
export const DOWN_AFTER_FAILED_REQUESTS = 3;

/**
 * The one rule for giving a source up before its last zone, used by ingestion and backfill alike.
 * Fed every outcome in order, it returns why the source stops, or null to go on:
 * - refused credentials: every later request would be refused too;
 * - a rate limit still standing after the retries: ENTSO-E bans an address for ten minutes, and
 *   asking again for each zone would only prolong it;
 * - `downAfter` requests in a row failing temporarily (timeout, unreachable, 5xx): the upstream
 *   is down, and each further zone would only sit through its retries (a hanging ENTSO-E:
 *   5 attempts of 60 s for each of 33 zones, 2.9 hours; issue 10, finding 9).
 * Any answer at all (data, no data, even an unusable payload) shows the upstream is up.
 */
export function createSourceStop(
  downAfter = DOWN_AFTER_FAILED_REQUESTS,
): (outcome: ZoneOutcome) => string | null {
  let failedInRow = 0;
  let previous: UpstreamError | undefined;
  return (outcome) => {
    if (!('error' in outcome)) {
      failedInRow = 0;
      return null;
    }
    const { error } = outcome;
    if (error.kind === 'auth') return 'credentials refused';
    if (error.failure === 'rate-limited') return 'rate limit still standing after the retries';
    if (error.kind !== 'temporary') {
      failedInRow = 0;
      return null;
    }
    // One request can fail several zones (EIA): it counts once.
    if (error !== previous) failedInRow += 1;
    previous = error;
    return failedInRow >= downAfter
      ? `upstream looks down: ${failedInRow} requests in a row failed (${error.failure})`
      : null;
  };
}

/**
 * Fetches zones one after the other. A failed zone does not stop the others: whether the source
 * is given up is the caller's decision (createSourceStop), told through `signal`.
 */
async function* eachZone(
  zones: readonly Zone[],
  { signal }: RequestLimits,
  fetchZone: (zone: Zone) => Promise<ZoneReadings>,
): AsyncGenerator<ZoneOutcome> {
  for (const zone of zones) {
    if (signal?.aborted) return;
    try {
      yield { zone: zone.code, ...(await fetchZone(zone)) };
    } catch (error) {
      yield { zone: zone.code, error: asUpstreamError(error, signal) };
    }
  }
}

/** Cancellation passes through; anything else unexpected is reported as an invalid payload. */
function asUpstreamError(error: unknown, signal: AbortSignal | undefined): UpstreamError {
  if (signal?.aborted) throw error;
  if (error instanceof UpstreamError) return error;
  return new UpstreamError('invalid', `unexpected failure: ${String(error)}`);
}
