import type { Basis } from '../core/factors.js';
import type { Condition, ZoneMemory } from '../core/webhooks/conditions.js';

/**
 * Webhook subscriptions and their delivery queue (extensions §13), in the store so that they
 * survive restarts and are shared by every instance. Both backends implement it; the contract
 * suite (test/store.test.ts) runs on both.
 */

export interface StoredSubscription {
  readonly id: string;
  /** Signs deliveries; shown to the client only in the creation response. */
  readonly secret: string;
  readonly url: string;
  readonly zones: readonly string[] | 'all';
  /** Undefined: each zone's own value. */
  readonly basis: Basis | undefined;
  readonly condition: Condition;
  /** The client address that created it: the per-address cap counts these. */
  readonly clientAddress: string;
  /** That address's network (IPv4 /24, IPv6 /64): the per-network cap counts these. */
  readonly clientNetwork: string;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  /** What its condition saw per zone (core/webhooks/conditions.ts). */
  readonly memory: ZoneMemory;
}

/** One event for one subscription, from queued to delivered or dropped. */
export interface QueuedDelivery {
  /** The event id: the queue holds one delivery per id, whoever enqueues it again. */
  readonly eventId: string;
  readonly subscriptionId: string;
  /** The exact JSON body to send (and sign). */
  readonly body: string;
  /** When it was first due, epoch ms: retries stop 24 hours after it. */
  readonly firstDueAt: number;
  /** When it is next due, epoch ms. */
  readonly dueAt: number;
  /** Attempts that failed so far. */
  readonly failures: number;
}

export type CreateOutcome = 'created' | 'address-cap' | 'network-cap' | 'total-cap';

export interface SubscriptionCaps {
  readonly perAddress: number;
  readonly perNetwork: number;
  readonly total: number;
}

/** What a new subscription gets, given the subscriptions already held in all, by its address and network. */
export function createOutcome(
  held: { readonly total: number; readonly address: number; readonly network: number },
  caps: SubscriptionCaps,
): CreateOutcome {
  if (held.total >= caps.total) return 'total-cap';
  if (held.address >= caps.perAddress) return 'address-cap';
  if (held.network >= caps.perNetwork) return 'network-cap';
  return 'created';
}

export interface WebhookStore {
  /**
   * Stores a subscription unless the store already holds `total` subscriptions, its address
   * `perAddress` or its network `perNetwork`: the caps are checked and the row written
   * atomically.
   */
  createSubscription(
    subscription: StoredSubscription,
    caps: SubscriptionCaps,
  ): Promise<CreateOutcome>;

  subscription(id: string): Promise<StoredSubscription | null>;

  /** Deletes a subscription and its pending deliveries; false when there was none. */
  deleteSubscription(id: string): Promise<boolean>;

  /** Every subscription, oldest first. */
  subscriptions(): Promise<StoredSubscription[]>;

  /** Replaces what a subscription's condition remembers. */
  remember(id: string, memory: ZoneMemory): Promise<void>;

  /**
   * Queues deliveries whose event id the queue has not held (pending, delivered or dropped) and
   * whose subscription still exists; returns how many were new.
   */
  enqueue(deliveries: readonly QueuedDelivery[]): Promise<number>;

  /** Pending deliveries due at `nowMs` or before, soonest first, at most `limit`. */
  due(nowMs: number, limit: number): Promise<QueuedDelivery[]>;

  /** Marks a delivery delivered (kept, so that its event id is not queued again). */
  delivered(eventId: string, nowMs: number): Promise<void>;

  /** Records a failed attempt and when the next one is due. */
  retryAt(eventId: string, dueAtMs: number): Promise<void>;

  /** Gives a delivery up (kept, as delivered ones are, for deduplication). */
  drop(eventId: string, nowMs: number): Promise<void>;

  /** Forgets delivered and dropped deliveries settled before `beforeMs`; returns how many. */
  pruneSettled(beforeMs: number): Promise<number>;

  /** The data version the deliverer has evaluated up to; -1 before the first evaluation. */
  evaluatedVersion(): Promise<number>;

  setEvaluatedVersion(version: number): Promise<void>;
}

/** The columns of `SubscriptionRow`, in the order both backends select and insert them. */
export const SUBSCRIPTION_COLUMNS =
  'id, secret, url, zones, basis, condition, client_address, client_network, created_at, memory';

/** How a subscription's JSON columns read back. */
export interface SubscriptionRow {
  id: string;
  secret: string;
  url: string;
  zones: string;
  basis: string | null;
  condition: string;
  client_address: string;
  client_network: string;
  created_at: number;
  memory: string;
}

export function subscriptionOfRow(row: SubscriptionRow): StoredSubscription {
  return {
    id: row.id,
    secret: row.secret,
    url: row.url,
    zones: JSON.parse(row.zones) as readonly string[] | 'all',
    basis: (row.basis ?? undefined) as Basis | undefined,
    condition: JSON.parse(row.condition) as Condition,
    clientAddress: row.client_address,
    clientNetwork: row.client_network,
    createdAt: row.created_at,
    memory: JSON.parse(row.memory) as ZoneMemory,
  };
}

/** The columns of `DeliveryRow`, in the order both backends select and insert them. */
export const DELIVERY_COLUMNS = 'event_id, subscription_id, body, first_due_at, due_at, failures';

export interface DeliveryRow {
  event_id: string;
  subscription_id: string;
  body: string;
  first_due_at: number;
  due_at: number;
  failures: number;
}

export function deliveryOfRow(row: DeliveryRow): QueuedDelivery {
  return {
    eventId: row.event_id,
    subscriptionId: row.subscription_id,
    body: row.body,
    firstDueAt: row.first_due_at,
    dueAt: row.due_at,
    failures: row.failures,
  };
}

export function rowOf(subscription: StoredSubscription): SubscriptionRow {
  return {
    id: subscription.id,
    secret: subscription.secret,
    url: subscription.url,
    zones: JSON.stringify(subscription.zones),
    basis: subscription.basis ?? null,
    condition: JSON.stringify(subscription.condition),
    client_address: subscription.clientAddress,
    client_network: subscription.clientNetwork,
    created_at: subscription.createdAt,
    memory: JSON.stringify(subscription.memory),
  };
}

export function deliveryRowOf(delivery: QueuedDelivery): DeliveryRow {
  return {
    event_id: delivery.eventId,
    subscription_id: delivery.subscriptionId,
    body: delivery.body,
    first_due_at: delivery.firstDueAt,
    due_at: delivery.dueAt,
    failures: delivery.failures,
  };
}
