import type { Logger } from 'pino';
import type { DirectedFlow, FlowGraphId } from '../core/flows.js';
import type { GraphNode } from '../core/grid-graph/graph.js';
import type { ZoneReadings } from '../core/method.js';
import type { StoredForecast } from '../core/reading.js';
import type { ZoneMixes } from '../core/uk-operator.js';
import type { Zone } from '../core/zones.js';
import type { Clock, TimeWindow } from '../core/time.js';
import {
  UpstreamError,
  type RequestLimits,
  type UpstreamHttp,
  type UpstreamHttpOptions,
} from './http.js';
import type { SourceId } from '../core/sources.js';

/**
 * The contract between one upstream's folder and the rest of gridco2: what its registry entry
 * (src/sources/registry.ts) declares, and the adapter ingestion and backfill drive.
 */

/**
 * What one fetch of one feed produced for one zone, tagged by `kind` when it is made: readings to
 * store, mixes to store (a source whose mix is a second feed, GB), the upstream's own forecasts
 * (a forecast feed), or why a feed of actuals or a forecast feed has none. A forecast feed's
 * outcomes are stored as forecasts only, never as readings, and their failures never give the
 * source up (the actuals go on; docs/upstreams.md §8.4).
 */
export type ZoneOutcome =
  | ({ readonly kind: 'readings'; readonly zone: string } & ZoneReadings)
  | ({ readonly kind: 'mixes'; readonly zone: string } & ZoneMixes)
  | {
      readonly kind: 'forecasts';
      readonly zone: string;
      /** Forecasts of this zone inside the asked forecast window, with their issue times. */
      readonly forecasts: readonly StoredForecast[];
    }
  | {
      readonly kind: 'actuals-failed' | 'forecasts-failed';
      readonly zone: string;
      readonly error: UpstreamError;
    };

/**
 * What one fetch of a flow graph's border produced (src/core/flows.ts): its flows, both
 * directions, to store as they are, or why it has none. EIA's one interchange query of every
 * pair is one such border.
 */
export type FlowOutcome =
  | { readonly kind: 'flows'; readonly border: string; readonly flows: readonly DirectedFlow[] }
  | { readonly kind: 'flows-failed'; readonly border: string; readonly error: UpstreamError };

/** Whether an outcome comes from a forecast feed (forecasts, or a forecast feed's failure). */
export function isForecastOutcome(outcome: ZoneOutcome): boolean {
  return outcome.kind === 'forecasts' || outcome.kind === 'forecasts-failed';
}

/** The failure an outcome reports, if it is one. */
export function failureOf(outcome: ZoneOutcome | FlowOutcome): UpstreamError | undefined {
  return outcome.kind === 'actuals-failed' ||
    outcome.kind === 'forecasts-failed' ||
    outcome.kind === 'flows-failed'
    ? outcome.error
    : undefined;
}

/**
 * The upstream's own forecasts to fetch beside the actuals: their window (whole hours; it may
 * reach into the future). Ingestion asks the last 24 hours to 48 hours ahead, backfill the
 * backfilled chunk.
 */
interface ForecastRequest {
  readonly window: TimeWindow;
}

/**
 * An upstream's part of a flow graph (extensions §15-16, docs/upstreams.md §9): the graph's
 * nodes, whose extra ones are fetched like zones and stored under their codes, and the flows of
 * its borders.
 */
interface GraphFetcher {
  readonly graph: FlowGraphId;
  readonly nodes: readonly GraphNode[];
  /**
   * What `fetchFlows` yields one outcome for, by name: each border (ENTSO-E, `a/b`), or the one
   * query of every pair (EIA).
   */
  readonly borders: readonly string[];
  /** Length of one resumable backfill chunk of one border; within the upstream's limits. */
  readonly backfillChunkSeconds: number;
  /**
   * Fetches the flows of `borders` (every one when absent) over `window` (whole hours), one
   * border after the other, yielding each border's outcome as soon as it is done. Once `signal`
   * is aborted no further border is started; no request reaches past `deadline`.
   */
  fetchFlows(
    window: TimeWindow,
    limits?: RequestLimits,
    borders?: readonly string[],
  ): AsyncGenerator<FlowOutcome>;
}

/** How an upstream is fetched: what its registry entry's factory builds. */
interface UpstreamFetcher {
  /** One request covers every zone (EIA), so the zones of a run share one window. */
  readonly zonesShareRequests: boolean;
  /** Length of one resumable backfill chunk; within the upstream's per-request limits. */
  readonly backfillChunkSeconds: number;
  /**
   * The mix comes from a second feed, apart from the readings (GB's generation mix): an interval
   * is only fully stored once both feeds wrote it.
   */
  readonly mixFeed: boolean;
  /**
   * Fetches `zones` over `window`, yielding each zone's outcome of each feed as soon as it is
   * done (readings first, then the mix of a `mixFeed` source; a failed feed never holds up the
   * other). Once `signal` is aborted, no further zone or feed is started, but outcomes already at
   * hand (the other zones of one EIA query) are still yielded; no request reaches past `deadline`.
   * With `forecasts`, each zone's forecast feeds are fetched too, after its actuals (a source
   * without forecast feeds ignores it).
   */
  fetch(
    zones: readonly Zone[],
    window: TimeWindow,
    limits?: RequestLimits,
    forecasts?: ForecastRequest,
  ): AsyncGenerator<ZoneOutcome>;
  /** Its part of a flow graph, if it has one. */
  readonly graph?: GraphFetcher;
}

/** A source's part of its flow graph, as ingestion and backfill drive it. */
export interface SourceGraph extends Omit<GraphFetcher, 'nodes'> {
  /** The graph's extra nodes, as zones of the source: fetched with `fetch`, never served. */
  readonly nodes: readonly Zone[];
}

/** One upstream as ingestion and backfill drive it. */
export interface SourceAdapter extends Omit<UpstreamFetcher, 'graph'> {
  /** Its part of a flow graph, when it has one and flows are on (FLOWS). */
  readonly graph?: SourceGraph;
  readonly source: SourceId;
  /** The clock the adapter runs on; ingestion and backfill read "now" from it too. */
  readonly clock: Clock;
  readonly zones: readonly Zone[];
  /** Redacts every configured credential, by value, from a text meant for logs or storage. */
  scrub(text: string): string;
}

/** The environment variables of one upstream (read by src/config.ts, nowhere else). */
interface SettingsSpec {
  readonly baseUrl: { readonly variable: string; readonly default: string };
  /** The upstream needs a key: the source is disabled while its variable is not set. */
  readonly credential?: { readonly variable: string };
}

/** One upstream's settings as configured. */
export interface SourceSettings {
  /** No trailing slash. */
  readonly baseUrl: string;
  /** Null when the upstream needs none, or when it is not set (the source is then disabled). */
  readonly credential: string | null;
}

/** What an upstream's factory is given to build its fetcher. */
interface AdapterContext {
  readonly settings: SourceSettings;
  readonly clock: Clock;
  readonly logger?: Logger;
  /**
   * The upstream's HTTP client (src/sources/http.ts: timeouts, retries, failure kinds, every
   * configured credential scrubbed). The upstream's own `rateLimit` protects the real service and
   * is left out against the local simulator of `gridco2 demo`.
   */
  http(options?: Pick<UpstreamHttpOptions, 'rateLimit'>): UpstreamHttp;
}

/** One entry of the registry. */
export interface UpstreamDefinition {
  readonly settings: SettingsSpec;
  createFetcher(context: AdapterContext): UpstreamFetcher;
}

/** One feed of a zone, by what it yields: readings, the mixes of a second feed, or forecasts. */
export type ZoneFeed =
  | { readonly kind: 'readings'; readonly fetch: (zone: Zone) => Promise<ZoneReadings> }
  | { readonly kind: 'mixes'; readonly fetch: (zone: Zone) => Promise<ZoneMixes> }
  | {
      readonly kind: 'forecasts';
      readonly fetch: (zone: Zone) => Promise<readonly StoredForecast[]>;
    };

/**
 * Fetches zones one after the other, each from every feed in turn. A failed zone or feed does not
 * stop the others: whether the source is given up is the caller's decision (createSourceStop in
 * src/ingest/sources.ts), told through `signal`.
 */
export async function* eachZone(
  zones: readonly Zone[],
  { signal }: RequestLimits,
  ...feeds: readonly (ZoneFeed | undefined)[]
): AsyncGenerator<ZoneOutcome> {
  for (const zone of zones) {
    for (const feed of feeds) {
      if (feed === undefined) continue;
      if (signal?.aborted) return;
      try {
        yield await fetchFeed(zone, feed);
      } catch (error) {
        const kind = feed.kind === 'forecasts' ? 'forecasts-failed' : 'actuals-failed';
        yield { kind, zone: zone.code, error: asUpstreamError(error, signal) };
      }
    }
  }
}

async function fetchFeed(zone: Zone, feed: ZoneFeed): Promise<ZoneOutcome> {
  switch (feed.kind) {
    case 'readings':
      return { zone: zone.code, ...(await feed.fetch(zone)), kind: 'readings' };
    case 'mixes':
      return { zone: zone.code, ...(await feed.fetch(zone)), kind: 'mixes' };
    case 'forecasts':
      return { kind: 'forecasts', zone: zone.code, forecasts: await feed.fetch(zone) };
  }
}

/**
 * Fetches borders one after the other, as eachZone fetches zones: a failed border does not stop
 * the others, and whether the graph is given up is the caller's decision, told through `signal`.
 */
export async function* eachBorder(
  borders: readonly string[],
  { signal }: RequestLimits,
  fetchBorder: (border: string) => Promise<readonly DirectedFlow[]>,
): AsyncGenerator<FlowOutcome> {
  for (const border of borders) {
    if (signal?.aborted) return;
    try {
      yield { kind: 'flows', border, flows: await fetchBorder(border) };
    } catch (error) {
      yield { kind: 'flows-failed', border, error: asUpstreamError(error, signal) };
    }
  }
}

/**
 * How every parser (`<name>/parse.ts`) reports a reply that is not data: the upstream's refusal in
 * an error document, whatever the HTTP status, or a payload it cannot use.
 */
export type PayloadFailure =
  | { readonly kind: 'upstream-error'; readonly code: string; readonly message: string }
  | { readonly kind: 'invalid-payload'; readonly detail: string };

/** The words of a payload failure's message, where an upstream's feeds need their own. */
export interface PayloadWords {
  /** The refusal's words; its message when absent. */
  readonly refusal?: (refused: { readonly code: string; readonly message: string }) => string;
  /** What was refused: `request` when absent. */
  readonly request?: string;
  /** What could not be used: `payload` when absent. */
  readonly payload?: string;
}

/**
 * A parser's payload failure as the UpstreamError ingestion sorts: a refusal is `rejected` (the
 * same request would be refused again), an unusable payload `invalid-payload`; both are of kind
 * `invalid` (nothing stored, the failure reported). `where` opens the message.
 */
export function payloadFailure(
  failure: PayloadFailure,
  where: string,
  {
    refusal = ({ message }) => message,
    request = 'request',
    payload = 'payload',
  }: PayloadWords = {},
): UpstreamError {
  if (failure.kind === 'upstream-error') {
    return new UpstreamError('invalid', `${where}: ${request} refused: ${refusal(failure)}`, {
      failure: 'rejected',
    });
  }
  return new UpstreamError('invalid', `${where}: unusable ${payload}: ${failure.detail}`);
}

/** Cancellation passes through; anything else unexpected is reported as an invalid payload. */
export function asUpstreamError(error: unknown, signal: AbortSignal | undefined): UpstreamError {
  if (signal?.aborted) throw error;
  if (error instanceof UpstreamError) return error;
  return new UpstreamError('invalid', `unexpected failure: ${String(error)}`);
}
