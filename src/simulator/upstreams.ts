import type { FaultFeed } from './faults.js';
import { answerEia, emptyEiaReply } from './eia.js';
import { noMatchingData } from './entsoe-document.js';
import { answerEntsoe } from './entsoe.js';
import { answerNeso, emptyNesoReply } from './neso.js';
import { jsonReply, textReply, type ReplyContext, type SourceReply } from './reply.js';
import { isEntsoeForecastDocument, type SourceId } from '../core/sources.js';

/** One simulated upstream, as the server routes to it. */
export interface SimulatedUpstream {
  /** Path of the upstream's base URL on the simulator (its `*_BASE_URL` is the simulator + this). */
  readonly basePath: string;
  /** Whether a request path is this upstream's. */
  serves(pathname: string): boolean;
  /** Which feed a request is (a fault may hit one feed only): actuals or the upstream's forecasts. */
  feedOf(url: URL): FaultFeed;
  /** `credential`: when set, the only key the upstream accepts (else any non-empty one). */
  answer(url: URL, context: ReplyContext & { readonly credential?: string }): SourceReply;
  /** A valid answer without data: the `empty` fault. */
  empty(context: ReplyContext): SourceReply;
  /** The upstream's own answer when it rate-limits: the `rate-limited` fault. */
  rateLimited(): SourceReply;
}

/**
 * The simulated upstreams, one per source of the registry (src/sources/registry.ts). Kept here,
 * beside the simulator, rather than in the registry: the simulator is a development tool and the
 * service's code does not depend on it. The type demands an entry for every source.
 */
export const SIMULATED_UPSTREAMS: { readonly [S in SourceId]: SimulatedUpstream } = {
  'europe-tso': {
    basePath: '/api',
    serves: (pathname) => pathname === '/api' || pathname === '/api/',
    feedOf: (url) =>
      isEntsoeForecastDocument(url.searchParams.get('documentType')) ? 'forecasts' : 'actuals',
    answer: (url, { credential, ...context }) =>
      answerEntsoe(url.searchParams, { ...context, securityToken: credential }),
    empty: (context) => noMatchingData(context),
    // The ENTSO-E guide's wording for its 400-per-minute limit (docs/upstreams.md §1.1).
    rateLimited: () =>
      textReply(
        429,
        'text/plain',
        'Max allowed requests per minute from each unique IP is max up to 400 only.',
      ),
  },
  'us-agency': {
    basePath: '/v2',
    serves: (pathname) => pathname.startsWith('/v2/'),
    feedOf: (url) => (url.pathname.includes('/region-data/') ? 'forecasts' : 'actuals'),
    answer: (url, { credential, ...context }) =>
      answerEia(url.pathname, url.searchParams, { ...context, apiKey: credential }),
    empty: () => emptyEiaReply(),
    rateLimited: () =>
      jsonReply(429, {
        error: {
          code: 'OVER_RATE_LIMIT',
          message: 'You have exceeded your rate limit. Try again later.',
        },
      }),
  },
  'uk-operator': {
    basePath: '',
    serves: (pathname) => /^\/(intensity|generation)(\/|$)/.test(pathname),
    feedOf: (url) => (/\/fw(24|48)h\/?$/.test(url.pathname) ? 'forecasts' : 'actuals'),
    answer: (url, context) => answerNeso(url.pathname, context),
    empty: () => emptyNesoReply(),
    rateLimited: () =>
      jsonReply(429, {
        error: { code: '429 Too Many Requests', message: 'Rate limit exceeded.' },
      }),
  },
};
