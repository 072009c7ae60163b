import { randomUUID } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Basis } from '../core/factors.js';
import { LevelReference, levelOf, referenceIsEnough, referenceWindow } from '../core/level.js';
import {
  DEFAULT_BACKOFF,
  nextAttemptAt,
  type BackoffPolicy,
  type DeliveryOutcome,
} from '../core/webhooks/backoff.js';
import {
  evaluate,
  type Observed,
  type WebhookEvent,
  type ZoneView,
} from '../core/webhooks/conditions.js';
import { signWebhook } from '../core/webhooks/signature.js';
import { checkResolved, TargetPolicy } from '../core/webhooks/targets.js';
import { toTenths } from '../core/units.js';
import { CONTRACT_REGISTRY, type ZoneRegistry } from '../core/zone-registry.js';
import type { ForecastBook } from '../forecast/book.js';
import type { ReadLatest, ReadPoints } from '../queries/signal-reads.js';
import { publishedReading } from '../read/reading-cache.js';
import type { ReadingChange, Store } from '../storage/store.js';
import type { QueuedDelivery, StoredSubscription } from '../storage/webhook-store.js';
import { resolveHost, type ResolveHost } from './resolve.js';

/**
 * Webhook deliveries (extensions §13). Every instance runs this loop; only the holder of the
 * `webhooks` lease (the store's lease, as ingestion's) acts, so events are evaluated and sent by
 * one instance at a time. Each turn: evaluate the subscriptions against the data changed since
 * the version evaluated last (and new subscriptions against the current data), queue the events
 * in the store (one per event id), then send what is due, at most 8 at once, 10 s each. The
 * queue and the evaluated version live in the store, so a restart or a takeover resumes: an
 * event queued twice is kept once, and a turn cut short is evaluated again.
 */

export interface DelivererOptions {
  readonly store: Store;
  readonly latest: ReadLatest;
  readonly points: ReadPoints;
  readonly forecasts: () => ForecastBook;
  /**
   * The zones served now (`ZONES`, extensions §16): what `zones: "all"` means at each turn, as
   * `latest` reads them. By default the 45 of the contract.
   */
  readonly zones?: () => ZoneRegistry;
  readonly allow: readonly string[];
  readonly logger?: Logger | undefined;
  readonly clock?: () => number;
  readonly backoff?: BackoffPolicy;
  readonly turnMs?: number;
  readonly leaseMs?: number;
  /** Told how each delivery attempt ended (the metrics count them). */
  readonly onAttempt?: (outcome: DeliveryOutcome) => void;
  /** Resolves a target's host (tests point names anywhere); the system resolver by default. */
  readonly resolve?: ResolveHost;
}

const LEASE = 'webhooks';
const IN_FLIGHT = 8;
const TIMEOUT_MS = 10_000;
/** Delivered and dropped event ids are kept this long for deduplication. */
const KEEP_SETTLED_MS = 7 * 24 * 3600 * 1000;

export interface Deliverer {
  /** Deliveries given up after 24 hours of retries, since start. */
  readonly dropped: number;
  /** One turn now (tests); turns never overlap. */
  turn(): Promise<void>;
  stop(): Promise<void>;
}

export function startDeliverer(options: DelivererOptions): Deliverer {
  const { store, logger } = options;
  const clock = options.clock ?? Date.now;
  const served = options.zones ?? (() => CONTRACT_REGISTRY);
  const policy = new TargetPolicy(options.allow);
  const resolve = options.resolve ?? resolveHost;
  const holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const seen = new Set<string>();
  let dropped = 0;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();

  const step = async () => {
    if (stopped) return;
    const held = await store
      .acquireLease(LEASE, holder, options.leaseMs ?? 30_000)
      .catch(() => false);
    if (!held) {
      seen.clear();
      return;
    }
    await evaluateChanges();
    await sendDue();
  };

  const evaluateChanges = async () => {
    const version = await store.dataVersion();
    const evaluated = await store.webhooks.evaluatedVersion();
    const subscriptions = await store.webhooks.subscriptions();
    const fresh = subscriptions.filter((subscription) => !seen.has(subscription.id));
    if (version === evaluated && fresh.length === 0) return;
    let changes: readonly ReadingChange[] = [];
    if (version !== evaluated && evaluated >= 0) {
      const read = await store.changesSince(evaluated, 200_000);
      changes = read.changes;
    }
    const targets = version === evaluated ? fresh : subscriptions;
    const registry = served();
    const views = new ZoneViews(options, changes, registry);
    const now = clock();
    for (const subscription of targets) {
      const events: WebhookEvent[] = [];
      let memory = subscription.memory;
      const zones =
        subscription.zones === 'all' ? registry.zones.map((zone) => zone.code) : subscription.zones;
      for (const zone of zones) {
        const view = await views.of(zone, subscription.basis);
        if (!view) continue;
        const result = evaluate(
          {
            id: subscription.id,
            basis: subscription.basis ?? 'default',
            condition: subscription.condition,
          },
          view,
          memory,
        );
        events.push(...result.events);
        memory = result.state;
      }
      // Queued before the memory and the version move on: a crash in between queues them again
      // under the same ids, which the queue keeps once.
      await store.webhooks.enqueue(
        events.map((event): QueuedDelivery => ({
          eventId: event.id,
          subscriptionId: subscription.id,
          body: JSON.stringify(event),
          firstDueAt: now,
          dueAt: now,
          failures: 0,
        })),
      );
      if (memory !== subscription.memory) await store.webhooks.remember(subscription.id, memory);
      seen.add(subscription.id);
    }
    await store.webhooks.setEvaluatedVersion(version);
    await store.webhooks.pruneSettled(now - KEEP_SETTLED_MS);
  };

  const sendDue = async () => {
    const due = await store.webhooks.due(clock(), IN_FLIGHT);
    if (due.length === 0) return;
    const subscriptions = new Map<string, StoredSubscription | null>();
    await Promise.all(
      due.map(async (delivery) => {
        if (!subscriptions.has(delivery.subscriptionId)) {
          subscriptions.set(
            delivery.subscriptionId,
            await store.webhooks.subscription(delivery.subscriptionId),
          );
        }
        const subscription = subscriptions.get(delivery.subscriptionId);
        if (!subscription) return store.webhooks.drop(delivery.eventId, clock());
        const ok = await send(subscription, delivery, { policy, resolve, clock });
        if (ok) {
          options.onAttempt?.('delivered');
          return store.webhooks.delivered(delivery.eventId, clock());
        }
        const next = nextAttemptAt(
          delivery.firstDueAt,
          clock(),
          delivery.failures + 1,
          Math.random(),
          options.backoff ?? DEFAULT_BACKOFF,
        );
        if (next !== null) {
          options.onAttempt?.('failed');
          return store.webhooks.retryAt(delivery.eventId, next);
        }
        options.onAttempt?.('dropped');
        dropped++;
        // The subscription id and event id only: never the URL's query or the secret.
        logger?.warn(
          { subscription: subscription.id, event: delivery.eventId },
          'webhook delivery dropped after 24 hours of retries',
        );
        return store.webhooks.drop(delivery.eventId, clock());
      }),
    );
  };

  const turn = () =>
    (running = running.then(step).catch((error: unknown) => {
      logger?.warn({ err: (error as Error).message }, 'webhook turn failed; retried next turn');
    }));
  const timer = setInterval(() => void turn(), options.turnMs ?? 2000);
  timer.unref();

  return {
    get dropped() {
      return dropped;
    },
    turn,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      await store.releaseLease(LEASE, holder).catch(() => undefined);
    },
  };
}

/** What each zone shows on a basis for this turn, read once per zone and basis. */
class ZoneViews {
  private readonly views = new Map<string, Promise<ZoneView | undefined>>();
  private latest = new Map<string, Promise<ReadonlyMap<string, { ts: number; value: number }>>>();

  constructor(
    private readonly options: Pick<DelivererOptions, 'latest' | 'points' | 'forecasts'>,
    private readonly changes: readonly ReadingChange[],
    private readonly registry: ZoneRegistry,
  ) {}

  of(zone: string, basis: Basis | undefined) {
    const key = `${zone}|${basis ?? ''}`;
    let view = this.views.get(key);
    if (!view) this.views.set(key, (view = this.build(zone, basis)));
    return view;
  }

  private newestOf(basis: Basis | undefined) {
    const key = basis ?? '';
    let newest = this.latest.get(key);
    if (!newest) {
      newest = this.options
        .latest(basis)
        .then((readings) => new Map(readings.map((reading) => [reading.zone, reading])));
      this.latest.set(key, newest);
    }
    return newest;
  }

  private async build(zone: string, basis: Basis | undefined) {
    const newest = (await this.newestOf(basis)).get(zone);
    if (!newest) return undefined;
    const step = (this.registry.find(zone)?.resolutionMin ?? 60) * 60;
    const window = referenceWindow(newest.ts, step);
    const points = await this.options.points(zone, basis, window.from, window.to);
    const reference = new LevelReference(points.tenths);
    const enough = referenceIsEnough(reference.count, step);
    const observe = (ts: number, value: number): Observed => {
      const tenths = toTenths(value);
      const percentile = enough ? reference.percentile(tenths) : null;
      return { ts, tenths, level: percentile === null ? null : levelOf(percentile) };
    };
    const changed: Observed[] = [];
    for (const change of this.changes) {
      if (change.zone !== zone) continue;
      const reading = publishedReading(change, basis);
      if (reading) changed.push(observe(reading.ts, reading.value));
    }
    const forecast = this.options.forecasts().forecast(zone, basis);
    const intervals: Observed[] = [];
    if (forecast) {
      for (let i = 0; i < forecast.values.length; i++) {
        const ts = forecast.startTs + i * forecast.stepSeconds;
        if (ts > newest.ts) intervals.push(observe(ts, forecast.values[i]!));
      }
    }
    return {
      zone,
      newest: observe(newest.ts, newest.value),
      changed,
      forecast: intervals,
      stepSeconds: step,
    };
  }
}

/**
 * One POST of a delivery; true on a 2xx. The connection is made to the addresses its own lookup
 * returned, after checking them: the host cannot resolve elsewhere between check and connect.
 */
function send(
  subscription: StoredSubscription,
  delivery: QueuedDelivery,
  target: { policy: TargetPolicy; resolve: ResolveHost; clock: () => number },
): Promise<boolean> {
  const { policy, clock } = target;
  const url = new URL(subscription.url);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const headers = signWebhook(
    subscription.secret,
    delivery.eventId,
    Math.floor(clock() / 1000),
    delivery.body,
  );
  const checkedLookup = (
    name: string,
    lookupOptions: { all?: boolean; family?: number },
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    target.resolve(name).then(
      (addresses) => {
        const refusal = checkResolved(host, addresses, policy);
        if (refusal) return callback(new Error(refusal.hint), []);
        // A connection asking for one family (family: 4 or 6) gets only addresses of it.
        const wanted = lookupOptions.family === 4 || lookupOptions.family === 6;
        const entries = addresses
          .map((address) => ({ address, family: isIP(address) }))
          .filter((entry) => !wanted || entry.family === lookupOptions.family);
        if (entries.length === 0) return callback(new Error(`${name}: no such address`), []);
        if (lookupOptions.all === true) return callback(null, entries);
        callback(null, entries[0]!.address, entries[0]!.family);
      },
      (error: Error) => callback(error, []),
    );
  };
  // An address literal is connected to without a lookup: check it here.
  if (isIP(host) !== 0 && checkResolved(host, [host], policy)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(delivery.body),
          'user-agent': 'gridco2-webhooks',
          ...headers,
        },
        timeout: TIMEOUT_MS,
        lookup: checkedLookup as never,
      },
      (response) => {
        response.resume();
        const status = response.statusCode ?? 0;
        resolve(status >= 200 && status < 300);
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', () => resolve(false));
    request.end(delivery.body);
  });
}
