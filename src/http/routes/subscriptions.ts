import { randomBytes } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BASES, type Basis } from '../../core/factors.js';
import { LEVELS, type Level } from '../../core/level.js';
import type { Condition } from '../../core/webhooks/conditions.js';
import { newSecret, secretMatches } from '../../core/webhooks/signature.js';
import { checkResolved, checkTargetUrl, TargetPolicy } from '../../core/webhooks/targets.js';
import { formatTs } from '../../core/time.js';
import { resolveZone } from '../../core/zone-names.js';
import type { ZoneRegistry } from '../../core/zone-registry.js';
import type { StoredSubscription, WebhookStore } from '../../storage/webhook-store.js';
import { resolveHost, type ResolveHost } from '../../webhooks/resolve.js';
import { API_ERRORS, ApiError } from '../contract/errors.js';
import { handleError } from '../transport/error-handler.js';
import { addressPrefix } from '../transport/stream-admission.js';
import { CACHE_CONTROL } from '../contract/headers.js';
import { maxSubscriptionZones, SUBSCRIPTION_LIMITS } from '../contract/limits.js';
import { errorResponses } from '../contract/schemas.js';
import type { LimitHook } from './route-options.js';

/** A subscription store call; its failure is the API's 503, as for every store read. */
async function storeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch {
    throw API_ERRORS.storeUnavailable();
  }
}

/**
 * `POST /v1/subscriptions`, `GET` and `DELETE /v1/subscriptions/{id}` (extensions §13), served
 * only with WEBHOOKS=on. The secret is returned once, at creation; it is never logged (bodies are
 * not logged) nor returned again. Deliveries are made by webhooks/deliverer.ts.
 */

export interface SubscriptionDeps {
  readonly limit: LimitHook;
  readonly store: WebhookStore;
  readonly clientAddress: (request: FastifyRequest['raw']) => string;
  readonly clock: () => number;
  readonly allow: readonly string[];
  readonly max: number;
  /** The zones served now (`ZONES`, extensions §16): a subscription names any of them. */
  readonly zones: () => ZoneRegistry;
  /** Resolves a host name to its addresses (tests keep the real resolver). */
  readonly resolve?: ResolveHost;
}

/** The subscription as the API shows it: everything but the secret. */
function publicView(subscription: StoredSubscription) {
  return {
    id: subscription.id,
    url: subscription.url,
    zones: subscription.zones,
    basis: subscription.basis ?? 'default',
    condition: subscription.condition,
    created_at: formatTs(Math.floor(subscription.createdAt / 1000)),
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const wholeIn = (value: unknown, min: number, max: number): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;

const grams = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1e5;

const CONDITION_HINT =
  'condition is one of {type: "published"}, {type: "below", gco2eq_kwh}, {type: "above", ' +
  'gco2eq_kwh}, {type: "level", levels: [..]}, {type: "window", within_hours (1-72), ' +
  'duration_hours (1-24), max_level or max_gco2eq_kwh}';

function readCondition(value: unknown): Condition {
  const bad = () => API_ERRORS.invalidSubscription(CONDITION_HINT);
  if (!isRecord(value)) throw bad();
  switch (value.type) {
    case 'published':
      return { type: 'published' };
    case 'below':
    case 'above':
      if (!grams(value.gco2eq_kwh)) throw bad();
      return { type: value.type, gco2eq_kwh: value.gco2eq_kwh };
    case 'level': {
      const levels = value.levels;
      if (
        !Array.isArray(levels) ||
        levels.length === 0 ||
        !levels.every((level) => LEVELS.includes(level as Level))
      ) {
        throw API_ERRORS.invalidSubscription(`levels is a non-empty list of ${LEVELS.join(', ')}`);
      }
      return { type: 'level', levels: [...new Set(levels as Level[])] };
    }
    case 'window': {
      const { within_hours, duration_hours, max_level, max_gco2eq_kwh } = value;
      if (!wholeIn(within_hours, 1, 72) || !wholeIn(duration_hours, 1, 24)) throw bad();
      if (duration_hours > within_hours) {
        throw API_ERRORS.invalidSubscription('duration_hours must not exceed within_hours');
      }
      if ((max_level === undefined) === (max_gco2eq_kwh === undefined)) throw bad();
      if (max_level !== undefined) {
        if (!LEVELS.includes(max_level as Level)) throw bad();
        return { type: 'window', within_hours, duration_hours, max_level: max_level as Level };
      }
      if (!grams(max_gco2eq_kwh)) throw bad();
      return { type: 'window', within_hours, duration_hours, max_gco2eq_kwh };
    }
    default:
      throw bad();
  }
}

function readZones(value: unknown, served: ZoneRegistry): readonly string[] | 'all' {
  if (value === 'all') return 'all';
  const hint = 'zones is "all" or a non-empty list of codes from /v1/zones';
  if (!Array.isArray(value) || value.length === 0 || value.length > maxSubscriptionZones(served)) {
    throw API_ERRORS.invalidSubscription(hint);
  }
  const codes = value.map((given) => {
    const zone = typeof given === 'string' ? resolveZone(given.trim(), 'v1', served) : undefined;
    if (!zone) throw API_ERRORS.invalidSubscription(hint);
    return zone.code;
  });
  return [...new Set(codes)];
}

function readBasis(value: unknown): Basis | undefined {
  if (value === undefined || value === 'default') return undefined;
  const basis = BASES.find((candidate) => candidate === value);
  if (!basis) {
    throw API_ERRORS.invalidSubscription('basis is lifecycle or direct, or left out');
  }
  return basis;
}

/** The secret of `Authorization: Bearer <secret>`, or undefined. */
function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/** Fastify's body errors (too large, not JSON, wrong type) as the contract's 400. */
function bodyErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (!(error instanceof ApiError) && error.code?.startsWith('FST_ERR_CTP_')) {
    const hint =
      error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
        ? `send a body of at most ${SUBSCRIPTION_LIMITS.bodyBytes} bytes`
        : 'send a JSON object with content-type: application/json';
    return handleError(
      API_ERRORS.invalidSubscription(hint) as unknown as FastifyError,
      request,
      reply,
    );
  }
  if (error instanceof SyntaxError) {
    return handleError(
      API_ERRORS.invalidSubscription('the body is not valid JSON') as unknown as FastifyError,
      request,
      reply,
    );
  }
  return handleError(error, request, reply);
}

/**
 * The methods of each subscription path: its CORS preflights name them (browsers ask before a
 * cross-origin POST with a JSON body or a DELETE with Authorization; the rest of the API allows
 * GET and HEAD), and any other method is 405 with them in `Allow`.
 */
const SUBSCRIPTION_METHODS = {
  '/v1/subscriptions': ['POST', 'OPTIONS'],
  '/v1/subscriptions/:id': ['GET', 'HEAD', 'DELETE', 'OPTIONS'],
} as const;

export function registerSubscriptions(app: FastifyInstance, deps: SubscriptionDeps): void {
  for (const [url, methods] of Object.entries(SUBSCRIPTION_METHODS)) {
    // @fastify/cors answers the preflight in its hook, with the route's methods; the handler
    // only runs for an OPTIONS it does not take as one, which it answers the same way.
    app.options(
      url,
      { schema: { hide: true }, config: { cors: { methods } } },
      async (_request, reply) => reply.code(204).send(),
    );
    const allow = methods.join(', ');
    app.route({
      method: app.supportedMethods.filter(
        (method) => !(methods as readonly string[]).includes(method),
      ),
      url,
      schema: { hide: true },
      handler: async (request) => {
        throw API_ERRORS.methodNotAllowed(request.method, allow);
      },
    });
  }
  const policy = new TargetPolicy(deps.allow);
  const resolve = deps.resolve ?? resolveHost;
  const config = { cacheControl: CACHE_CONTROL.subscriptions };
  const caps = {
    perAddress: SUBSCRIPTION_LIMITS.perAddress,
    perNetwork: Math.min(SUBSCRIPTION_LIMITS.perNetwork, Math.ceil(deps.max / 2)),
    total: deps.max,
  };

  const owned = async (request: FastifyRequest<{ Params: { id: string } }>) => {
    const secret = bearer(request);
    const subscription = await storeCall(() => deps.store.subscription(request.params.id));
    if (!subscription || secret === undefined || !secretMatches(secret, subscription.secret)) {
      throw API_ERRORS.unknownSubscription();
    }
    return subscription;
  };
  /** The options of a route on one subscription, which only the holder of its secret may use. */
  const oneSubscription = (summary: string, operationId: string) => ({
    schema: {
      summary: `${summary}, with Authorization: Bearer <its secret> (WEBHOOKS=on)`,
      operationId,
      response: { ...errorResponses(404, 429, 503) },
    },
    config,
    onRequest: deps.limit,
  });

  app.post(
    '/v1/subscriptions',
    {
      schema: {
        summary: 'Subscribe a callback URL to a condition (WEBHOOKS=on)',
        operationId: 'createSubscription',
        response: { ...errorResponses(400, 429, 503) },
      },
      bodyLimit: SUBSCRIPTION_LIMITS.bodyBytes,
      config,
      onRequest: deps.limit,
      errorHandler: bodyErrors,
    },
    async (request, reply) => {
      const body = request.body;
      if (!isRecord(body)) throw API_ERRORS.invalidSubscription('send a JSON object');
      if (typeof body.url !== 'string' || body.url.length > 2048) {
        throw API_ERRORS.invalidSubscription('url is an absolute http: or https: URL');
      }
      const zones = readZones(body.zones, deps.zones());
      const basis = readBasis(body.basis);
      const condition = readCondition(body.condition);
      const url = checkTargetUrl(body.url, policy);
      if (!(url instanceof URL)) throw API_ERRORS.urlRefused(url.rule, url.hint);
      const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
      const addresses = await resolve(host).catch(() => []);
      const refusal = checkResolved(host, addresses, policy);
      if (refusal) throw API_ERRORS.urlRefused(refusal.rule, refusal.hint);
      const clientAddress = deps.clientAddress(request.raw);
      const subscription: StoredSubscription = {
        id: `sub_${randomBytes(12).toString('base64url')}`,
        secret: newSecret(),
        url: url.href,
        zones,
        basis,
        condition,
        clientAddress,
        clientNetwork: addressPrefix(clientAddress),
        createdAt: deps.clock(),
        memory: {},
      };
      const outcome = await storeCall(() => deps.store.createSubscription(subscription, caps));
      if (outcome === 'address-cap') throw API_ERRORS.tooManySubscriptions(caps.perAddress);
      if (outcome === 'network-cap') {
        throw API_ERRORS.tooManySubscriptionsFromNetwork(caps.perNetwork);
      }
      if (outcome === 'total-cap') throw API_ERRORS.subscriptionsFull();
      const { id, ...rest } = publicView(subscription);
      reply.code(201);
      return { id, secret: subscription.secret, ...rest };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/subscriptions/:id',
    oneSubscription('A subscription', 'getSubscription'),
    async (request) => publicView(await owned(request)),
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/subscriptions/:id',
    oneSubscription('Deletes a subscription', 'deleteSubscription'),
    async (request, reply) => {
      const subscription = await owned(request);
      await storeCall(() => deps.store.deleteSubscription(subscription.id));
      reply.code(204);
      return null;
    },
  );
}
