import type Database from 'better-sqlite3';
import type { ZoneMemory } from '../../core/webhooks/conditions.js';
import {
  type CreateOutcome,
  createOutcome,
  type SubscriptionCaps,
  DELIVERY_COLUMNS,
  type DeliveryRow,
  deliveryOfRow,
  deliveryRowOf,
  rowOf,
  type QueuedDelivery,
  type StoredSubscription,
  SUBSCRIPTION_COLUMNS,
  subscriptionOfRow,
  type SubscriptionRow,
  type WebhookStore,
} from '../webhook-store.js';

/** The webhook tables of a SQLite store (migration 7). */
export class SqliteWebhookStore implements WebhookStore {
  private readonly statements;
  private readonly createAtomically;
  private readonly enqueueAll;

  constructor(private readonly db: Database.Database) {
    this.statements = {
      countAddress: db
        .prepare(`SELECT count(*) FROM subscriptions WHERE client_address = ?`)
        .pluck(),
      countNetwork: db
        .prepare(`SELECT count(*) FROM subscriptions WHERE client_network = ?`)
        .pluck(),
      countAll: db.prepare(`SELECT count(*) FROM subscriptions`).pluck(),
      insert: db.prepare(
        `INSERT INTO subscriptions (${SUBSCRIPTION_COLUMNS})
         VALUES (@id, @secret, @url, @zones, @basis, @condition, @client_address, @client_network,
                 @created_at, @memory)`,
      ),
      byId: db.prepare(`SELECT ${SUBSCRIPTION_COLUMNS} FROM subscriptions WHERE id = ?`),
      all: db.prepare(`SELECT ${SUBSCRIPTION_COLUMNS} FROM subscriptions ORDER BY created_at, id`),
      delete: db.prepare(`DELETE FROM subscriptions WHERE id = ?`),
      deletePending: db.prepare(
        `DELETE FROM webhook_deliveries WHERE subscription_id = ? AND state = 'pending'`,
      ),
      remember: db.prepare(`UPDATE subscriptions SET memory = ? WHERE id = ?`),
      enqueue: db.prepare(
        `INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS}, state)
         SELECT @event_id, @subscription_id, @body, @first_due_at, @due_at, @failures, 'pending'
         WHERE EXISTS (SELECT 1 FROM subscriptions WHERE id = @subscription_id)
         ON CONFLICT (event_id) DO NOTHING`,
      ),
      due: db.prepare(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
         WHERE state = 'pending' AND due_at <= ? ORDER BY due_at, event_id LIMIT ?`,
      ),
      settle: db.prepare(
        `UPDATE webhook_deliveries SET state = ?, settled_at = ?
         WHERE event_id = ? AND state = 'pending'`,
      ),
      retry: db.prepare(
        `UPDATE webhook_deliveries SET failures = failures + 1, due_at = ?
         WHERE event_id = ? AND state = 'pending'`,
      ),
      prune: db.prepare(
        `DELETE FROM webhook_deliveries WHERE state <> 'pending' AND settled_at < ?`,
      ),
      state: db.prepare(`SELECT value FROM webhook_state WHERE key = ?`).pluck(),
      setState: db.prepare(
        `INSERT INTO webhook_state (key, value) VALUES (?, ?)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      ),
    };
    this.createAtomically = db.transaction(
      (row: SubscriptionRow, caps: SubscriptionCaps): CreateOutcome => {
        const held = {
          total: this.statements.countAll.get() as number,
          address: this.statements.countAddress.get(row.client_address) as number,
          network: this.statements.countNetwork.get(row.client_network) as number,
        };
        const outcome = createOutcome(held, caps);
        if (outcome === 'created') this.statements.insert.run(row);
        return outcome;
      },
    );
    this.enqueueAll = db.transaction((rows: DeliveryRow[]) => {
      let added = 0;
      for (const row of rows) added += this.statements.enqueue.run(row).changes;
      return added;
    });
  }

  async createSubscription(
    subscription: StoredSubscription,
    caps: SubscriptionCaps,
  ): Promise<CreateOutcome> {
    // IMMEDIATE: the count and the insert hold the write lock together across processes.
    return this.createAtomically.immediate(rowOf(subscription), caps);
  }

  async subscription(id: string): Promise<StoredSubscription | null> {
    const row = this.statements.byId.get(id) as SubscriptionRow | undefined;
    return row ? subscriptionOfRow(row) : null;
  }

  async deleteSubscription(id: string): Promise<boolean> {
    return this.db.transaction(() => {
      this.statements.deletePending.run(id);
      return this.statements.delete.run(id).changes === 1;
    })();
  }

  async subscriptions(): Promise<StoredSubscription[]> {
    return (this.statements.all.all() as SubscriptionRow[]).map(subscriptionOfRow);
  }

  async remember(id: string, memory: ZoneMemory): Promise<void> {
    this.statements.remember.run(JSON.stringify(memory), id);
  }

  async enqueue(deliveries: readonly QueuedDelivery[]): Promise<number> {
    return this.enqueueAll(deliveries.map(deliveryRowOf));
  }

  async due(nowMs: number, limit: number): Promise<QueuedDelivery[]> {
    return (this.statements.due.all(nowMs, limit) as DeliveryRow[]).map(deliveryOfRow);
  }

  async delivered(eventId: string, nowMs: number): Promise<void> {
    this.statements.settle.run('delivered', nowMs, eventId);
  }

  async retryAt(eventId: string, dueAtMs: number): Promise<void> {
    this.statements.retry.run(dueAtMs, eventId);
  }

  async drop(eventId: string, nowMs: number): Promise<void> {
    this.statements.settle.run('dropped', nowMs, eventId);
  }

  async pruneSettled(beforeMs: number): Promise<number> {
    return this.statements.prune.run(beforeMs).changes;
  }

  async evaluatedVersion(): Promise<number> {
    return (this.statements.state.get('evaluated_version') as number | undefined) ?? -1;
  }

  async setEvaluatedVersion(version: number): Promise<void> {
    this.statements.setState.run('evaluated_version', version);
  }
}
