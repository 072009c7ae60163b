import type { Pool } from 'pg';
import type { ZoneMemory } from '../../core/webhooks/conditions.js';
import {
  type CreateOutcome,
  createOutcome,
  type SubscriptionCaps,
  DELIVERY_COLUMNS,
  type DeliveryRow,
  deliveryOfRow,
  deliveryRowOf,
  type QueuedDelivery,
  rowOf,
  type StoredSubscription,
  SUBSCRIPTION_COLUMNS,
  subscriptionOfRow,
  type SubscriptionRow,
  type WebhookStore,
} from '../webhook-store.js';

/** Serializes subscription creation across instances, so the caps hold exactly. */
const SUBSCRIPTIONS_LOCK_KEY = 0x77686b73; // "whks"

/** The webhook tables of a PostgreSQL store (migration 7). */
export class PostgresWebhookStore implements WebhookStore {
  constructor(private readonly pool: Pool) {}

  async createSubscription(
    subscription: StoredSubscription,
    caps: SubscriptionCaps,
  ): Promise<CreateOutcome> {
    const row = rowOf(subscription);
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [SUBSCRIPTIONS_LOCK_KEY]);
      const { rows } = await client.query<{ total: number; address: number; network: number }>(
        `SELECT count(*)::int AS total,
                count(*) FILTER (WHERE client_address = $1)::int AS address,
                count(*) FILTER (WHERE client_network = $2)::int AS network
         FROM subscriptions`,
        [row.client_address, row.client_network],
      );
      const outcome = createOutcome(rows[0]!, caps);
      if (outcome === 'created') {
        await client.query(
          `INSERT INTO subscriptions (${SUBSCRIPTION_COLUMNS})
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
          [
            row.id,
            row.secret,
            row.url,
            row.zones,
            row.basis,
            row.condition,
            row.client_address,
            row.client_network,
            row.created_at,
            row.memory,
          ],
        );
      }
      await client.query('COMMIT');
      return outcome;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async subscription(id: string): Promise<StoredSubscription | null> {
    const { rows } = await this.pool.query<SubscriptionRow>(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM subscriptions WHERE id = $1`,
      [id],
    );
    return rows[0] ? subscriptionOfRow(rows[0]) : null;
  }

  async deleteSubscription(id: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ deleted: number }>(
      `WITH pending AS (
         DELETE FROM webhook_deliveries WHERE subscription_id = $1 AND state = 'pending'
       ), gone AS (DELETE FROM subscriptions WHERE id = $1 RETURNING 1)
       SELECT count(*)::int AS deleted FROM gone`,
      [id],
    );
    return rows[0]!.deleted === 1;
  }

  async subscriptions(): Promise<StoredSubscription[]> {
    const { rows } = await this.pool.query<SubscriptionRow>(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM subscriptions ORDER BY created_at, id`,
    );
    return rows.map(subscriptionOfRow);
  }

  async remember(id: string, memory: ZoneMemory): Promise<void> {
    await this.pool.query(`UPDATE subscriptions SET memory = $1 WHERE id = $2`, [
      JSON.stringify(memory),
      id,
    ]);
  }

  async enqueue(deliveries: readonly QueuedDelivery[]): Promise<number> {
    if (deliveries.length === 0) return 0;
    const rows = deliveries.map(deliveryRowOf);
    const { rowCount } = await this.pool.query(
      `INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS}, state)
       SELECT d.event_id, d.subscription_id, d.body, d.first_due_at, d.due_at, d.failures, 'pending'
       FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::int[])
         AS d(event_id, subscription_id, body, first_due_at, due_at, failures)
       WHERE EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = d.subscription_id)
       ON CONFLICT (event_id) DO NOTHING`,
      [
        rows.map((row) => row.event_id),
        rows.map((row) => row.subscription_id),
        rows.map((row) => row.body),
        rows.map((row) => row.first_due_at),
        rows.map((row) => row.due_at),
        rows.map((row) => row.failures),
      ],
    );
    return rowCount ?? 0;
  }

  async due(nowMs: number, limit: number): Promise<QueuedDelivery[]> {
    const { rows } = await this.pool.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
       WHERE state = 'pending' AND due_at <= $1 ORDER BY due_at, event_id LIMIT $2`,
      [nowMs, limit],
    );
    return rows.map(deliveryOfRow);
  }

  async delivered(eventId: string, nowMs: number): Promise<void> {
    await this.settle('delivered', eventId, nowMs);
  }

  async retryAt(eventId: string, dueAtMs: number): Promise<void> {
    await this.pool.query(
      `UPDATE webhook_deliveries SET failures = failures + 1, due_at = $1
       WHERE event_id = $2 AND state = 'pending'`,
      [dueAtMs, eventId],
    );
  }

  async drop(eventId: string, nowMs: number): Promise<void> {
    await this.settle('dropped', eventId, nowMs);
  }

  async pruneSettled(beforeMs: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM webhook_deliveries WHERE state <> 'pending' AND settled_at < $1`,
      [beforeMs],
    );
    return rowCount ?? 0;
  }

  async evaluatedVersion(): Promise<number> {
    const { rows } = await this.pool.query<{ value: number }>(
      `SELECT value FROM webhook_state WHERE key = 'evaluated_version'`,
    );
    return rows[0]?.value ?? -1;
  }

  async setEvaluatedVersion(version: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO webhook_state (key, value) VALUES ('evaluated_version', $1)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      [version],
    );
  }

  private async settle(state: 'delivered' | 'dropped', eventId: string, nowMs: number) {
    await this.pool.query(
      `UPDATE webhook_deliveries SET state = $1, settled_at = $2
       WHERE event_id = $3 AND state = 'pending'`,
      [state, nowMs, eventId],
    );
  }
}
