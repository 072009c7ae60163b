import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { floorToHour, HOUR } from '../src/core/time.js';
import { ZONES } from '../src/core/zones.js';
import { createStore } from '../src/storage/create-store.js';
import type { Store } from '../src/storage/store.js';
import {
  createThrowawayDatabase,
  isPostgresAvailable,
  type ThrowawayDatabase,
} from './support/postgres.js';
import { computed } from './support/fixed-store.js';
import { type ServeProcess, ServeProcesses } from './support/processes.js';
import {
  deliveringServeEnv,
  startWebhookReceiver,
  until,
  verifiedEvent,
  type WebhookReceiver,
} from './support/webhook-receiver.js';

/**
 * Two instances on PostgreSQL deliver each webhook event once (issue 24, extensions §13): two
 * real `gridco2 serve` processes with WEBHOOKS=on share a throwaway database; both compete for
 * the `webhooks` lease and only its holder evaluates and sends. Delivery is at least once, so a
 * crash may repeat an event; with no crash (here the holder stops gracefully halfway, giving the
 * lease up) the receiver sees every event id exactly once: not a single repeated request.
 */

const available = await isPostgresAvailable('webhooks on two instances (PostgreSQL)');

const SUBSCRIBED = ZONES.filter((zone) => zone.resolutionMin === 60)
  .slice(0, 12)
  .map((zone) => zone.code);
const FIRST_HOUR = floorToHour(Date.now() / 1000) - 5 * HOUR;
/** Per round, one value per zone: below 250 in rounds 0, 2 and 4, above it in rounds 1 and 3. */
const valueOf = (round: number, index: number) => (round % 2 === 0 ? 100 : 300) + round + index;

const processes = new ServeProcesses();
let database: ThrowawayDatabase;
let store: Store;
let receiver: WebhookReceiver;

describe.runIf(available)('webhooks: two instances on PostgreSQL', () => {
  beforeAll(async () => {
    database = await createThrowawayDatabase();
    store = await createStore(database.url);
    receiver = await startWebhookReceiver('accept');
  });
  afterAll(async () => {
    await processes.killAll();
    await store?.close();
    await receiver?.close();
    await database?.drop();
  });

  const publish = (round: number) =>
    store.upsertReadings(
      SUBSCRIBED.map((zone, i) => computed(zone, FIRST_HOUR + round * HOUR, valueOf(round, i))),
    );
  /** Waits until `count` distinct events were accepted and nothing is pending. */
  const delivered = async (count: number) => {
    await until(
      `${count} events accepted`,
      () => (new Set(receiver.accepted()).size >= count ? true : undefined),
      90_000,
    );
    await until(
      'an empty queue',
      async () =>
        (await store.webhooks.due(Number.MAX_SAFE_INTEGER, 1)).length === 0 ? true : undefined,
      30_000,
    );
  };
  const subscribe = async (instance: ServeProcess, condition: object) => {
    const response = await fetch(`${instance.url}/v1/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, zones: SUBSCRIBED, condition }),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string; secret: string };
  };
  const leaseHolderPid = async () => {
    const rows = await database.query<{ holder: string }>(
      `SELECT holder FROM leases WHERE name = 'webhooks'`,
    );
    return rows.length === 0 ? undefined : Number(rows[0]!.holder.split(':').at(-2));
  };

  it('deliver each event once, also across a graceful handover of the lease', async () => {
    const env = deliveringServeEnv(database.url);
    // Started side by side: each start is mostly waiting for the child to listen.
    const instances = await Promise.all([processes.start('a', env), processes.start('b', env)]);
    // One subscription made on each instance: both live in the one store.
    const published = await subscribe(instances[0]!, { type: 'published' });
    const below = await subscribe(instances[1]!, { type: 'below', gco2eq_kwh: 250 });
    const secrets = new Map([
      [published.id, published.secret],
      [below.id, below.secret],
    ]);
    // A fresh store's first evaluation takes the data as it finds it: publish after it.
    await until(
      'the first evaluation',
      async () => ((await store.webhooks.evaluatedVersion()) >= 0 ? true : undefined),
      30_000,
    );

    // Round 0: 12 readings, each also a crossing below 250.
    await publish(0);
    await delivered(24);
    const holderPid = await leaseHolderPid();
    const holder = instances.find((instance) => instance.pid === holderPid);
    expect(holder, 'one of the two instances holds the webhooks lease').toBeDefined();
    const other = instances.find((instance) => instance !== holder)!;
    // The holder stops gracefully (SIGTERM): it finishes its turn and gives the lease up.
    await holder!.kill('SIGTERM');

    // Rounds 1-3: 36 readings, 12 more crossings (round 2); the other instance delivers. Each
    // round waits for the last: a crossing is judged on the newest reading of a turn.
    let total = 24;
    for (const round of [1, 2, 3]) {
      await publish(round);
      await delivered((total += round === 2 ? 24 : 12));
    }
    expect(await leaseHolderPid()).toBe(other.pid);
    // A last round, delivered after everything before it: any repeat would have arrived.
    await publish(4);
    await delivered(total + 24);

    const ids = receiver.receipts.map((receipt) => receipt.eventId);
    expect(new Set(ids).size).toBe(96);
    // Exactly once: not one event id was sent twice.
    expect(ids).toHaveLength(96);
    const kinds = new Map<string, number>();
    for (const receipt of receiver.receipts) {
      const subscription = (JSON.parse(receipt.body) as { subscription: string }).subscription;
      const event = verifiedEvent(receipt, secrets.get(subscription)!);
      const kind = `${String(event.type)} ${String(event.zone)}`;
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    for (const zone of SUBSCRIBED) {
      expect(kinds.get(`published ${zone}`), zone).toBe(5);
      expect(kinds.get(`crossed ${zone}`), zone).toBe(3);
    }
  }, 240_000);
});
