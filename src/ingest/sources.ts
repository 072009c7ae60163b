import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { extraNodeZones } from '../core/grid-graph/graph.js';
import { zonesOfSource } from '../core/zones.js';
import {
  failureOf,
  type FlowOutcome,
  type SourceAdapter,
  type ZoneOutcome,
} from '../sources/adapter.js';
import type { Clock } from '../core/time.js';
import {
  createUpstreamHttp,
  scrubSecrets,
  systemClock,
  type UpstreamError,
  type UpstreamHttpOptions,
} from '../sources/http.js';
import { UPSTREAMS } from '../sources/registry.js';
import { SOURCES, type SourceId } from '../core/sources.js';

export interface SourceDependencies {
  readonly logger?: Logger;
  readonly fetch?: typeof fetch;
  readonly clock?: Clock;
  /** Retry and timeout settings (tests shorten them). */
  readonly http?: Partial<Omit<UpstreamHttpOptions, 'source' | 'secrets' | 'authHint'>>;
  /**
   * The upstream is the local simulator of `gridco2 demo`: requests are not held to an upstream's
   * own rate limit, which protects the real one (ENTSO-E bans for ten minutes above 400 a minute)
   * but would stretch a year of demo history over minutes. Never set for a real upstream.
   */
  readonly localUpstream?: boolean;
}

/**
 * Why `source` cannot run with this configuration (its key is not set), or null when it can.
 * The API layer can show it; ingestion logs it once and records it in the source's report.
 */
export function sourceDisabledReason(config: Config, source: SourceId): string | null {
  const credential = UPSTREAMS[source].settings.credential;
  if (credential && config.sources[source].credential === null) {
    return `${credential.variable} is not set`;
  }
  return null;
}

/** The adapter of a configured source (src/sources/registry.ts); throws when its key is missing. */
export function createSourceAdapter(
  config: Config,
  source: SourceId,
  dependencies: SourceDependencies = {},
): SourceAdapter {
  const reason = sourceDisabledReason(config, source);
  if (reason !== null) throw new Error(`${source} is not configured: ${reason}`);
  const { logger, clock = systemClock } = dependencies;
  const { settings, createFetcher } = UPSTREAMS[source];
  // Every configured key, whichever source this is: a text never carries another source's key
  // today, but redacting it costs nothing.
  const secrets = SOURCES.map((each) => config.sources[each].credential).filter(
    (secret): secret is string => secret !== null && secret.length > 0,
  );
  const fetcher = createFetcher({
    settings: config.sources[source],
    clock,
    ...(logger && { logger }),
    http: ({ rateLimit } = {}) =>
      createUpstreamHttp({
        ...(settings.credential && { authHint: `check ${settings.credential.variable}` }),
        ...(!dependencies.localUpstream && rateLimit && { rateLimit }),
        ...(!config.demo && {
          refuseSimulated:
            `the upstream at ${settings.baseUrl.variable}=${config.sources[source].baseUrl} ` +
            'signs its answers as simulated (gridco2 simulate-upstreams), and synthetic data is ' +
            'never ingested as real: set DEMO=on to serve it as a demo (every response labelled, ' +
            `the store marked synthetic), or point ${settings.baseUrl.variable} at the real upstream`,
        }),
        ...dependencies.http,
        source,
        secrets,
        clock,
        ...(logger && { logger }),
        ...(dependencies.fetch && { fetch: dependencies.fetch }),
      }),
  });
  const { graph, ...zoneFetcher } = fetcher;
  return {
    ...zoneFetcher,
    // FLOWS=off: neither the flows nor the extra nodes are fetched (extensions §16).
    ...(graph &&
      config.flows && { graph: { ...graph, nodes: extraNodeZones(graph.nodes, source) } }),
    source,
    clock,
    zones: zonesOfSource(source),
    scrub: (text: string) => scrubSecrets(text, secrets),
  };
}

/** Requests in a row failing with a timeout, a network error or a 5xx: the upstream is down. */
const DOWN_AFTER_FAILED_REQUESTS = 3;

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
): (outcome: ZoneOutcome | FlowOutcome) => string | null {
  let failedInRow = 0;
  let previous: UpstreamError | undefined;
  return (outcome) => {
    const error = failureOf(outcome);
    if (error === undefined) {
      failedInRow = 0;
      return null;
    }
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
