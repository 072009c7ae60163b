import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { floorToHour, formatTs, HOUR } from '../src/core/time.js';
import { ZONES } from '../src/core/zones.js';
import { createStore } from '../src/storage/create-store.js';
import { ServeProcesses } from './support/processes.js';
import { computed } from './support/fixed-store.js';
import {
  deliveringServeEnv,
  startWebhookReceiver,
  until,
  verifiedEvent,
  type WebhookReceiver,
} from './support/webhook-receiver.js';

/**
 * Kill -9 of the delivering instance loses no webhook event (issue 24, extensions §13): real
 * `gridco2 serve` processes with WEBHOOKS=on on one SQLite store, a real receiver on 127.0.0.1
 * (listed in WEBHOOK_ALLOW). The first instance is SIGKILLed while it has deliveries in flight
 * (the receiver holds them unanswered) and others queued; more readings arrive while no instance
 * runs; a second instance takes the `webhooks` lease once the dead one's expires (30 s) and
 * delivers. Every event arrives, each id with one body, and exactly once after deduplication.
 * The servers run with their default timing; every wait is for an outcome, bounded generously.
 */

/** Hourly zones (GB's half hours add nothing here). */
const SUBSCRIBED = ZONES.filter((zone) => zone.resolutionMin === 60)
  .slice(0, 12)
  .map((zone) => zone.code);
const FIRST_HOUR = floorToHour(Date.now() / 1000) - 2 * HOUR;
const SECOND_HOUR = FIRST_HOUR + HOUR;
/** Deliveries in flight at once (extensions §13). */
const IN_FLIGHT = 8;

const dir = mkdtempSync(join(tmpdir(), 'gridco2-webhooks-kill-'));
const databaseUrl = `sqlite:${join(dir, 'webhooks.db')}`;
const processes = new ServeProcesses();
let receiver: WebhookReceiver;

const env = deliveringServeEnv(databaseUrl);

/** Writes one reading per subscribed zone at `ts`, as ingestion writes them. */
async function publish(ts: number, value: (index: number) => number) {
  const store = await createStore(databaseUrl);
  try {
    await store.upsertReadings(SUBSCRIBED.map((zone, i) => computed(zone, ts, value(i))));
  } finally {
    await store.close();
  }
}

/** The data version the deliverer has evaluated up to (-1 before its first turn). */
async function evaluated() {
  const store = await createStore(databaseUrl);
  try {
    return await store.webhooks.evaluatedVersion();
  } finally {
    await store.close();
  }
}

/** The deliveries still pending in the store. */
async function pending() {
  const store = await createStore(databaseUrl);
  try {
    return await store.webhooks.due(Number.MAX_SAFE_INTEGER, 1000);
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  receiver = await startWebhookReceiver('hold');
});
afterAll(async () => {
  await processes.killAll();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('webhooks: kill -9 of the delivering instance', () => {
  it('loses no event: every event arrives, exactly once after deduplication', async () => {
    const first = await processes.start('first', env);
    const created = await fetch(`${first.url}/v1/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        url: receiver.url,
        zones: SUBSCRIBED,
        condition: { type: 'published' },
      }),
    });
    expect(created.status).toBe(201);
    const { id: subscription, secret } = (await created.json()) as { id: string; secret: string };
    // A fresh store's first evaluation takes the data as it finds it (nothing is "new" yet):
    // publish after it, as a deployment's readings arrive long after its first turn.
    await until(
      'the first evaluation',
      async () => ((await evaluated()) >= 0 ? true : undefined),
      30_000,
    );

    await publish(FIRST_HOUR, (i) => 200 + i);
    // The first instance sends at most 8 at once; the receiver holds them unanswered.
    await until(
      'deliveries in flight',
      () => (receiver.receipts.length >= IN_FLIGHT ? true : undefined),
      60_000,
    );
    await first.kill('SIGKILL');
    const inFlight = receiver.receipts.map((receipt) => receipt.eventId);
    expect(inFlight).toHaveLength(IN_FLIGHT);
    // Nothing was acknowledged: all 12 events are pending in the store, 8 of them sent once.
    expect((await pending()).map((delivery) => delivery.eventId).sort()).toEqual(
      expect.arrayContaining([...inFlight].sort()),
    );
    expect(await pending()).toHaveLength(SUBSCRIBED.length);

    // The receiver sees the dead sender's connections close before it answers anything: a held
    // request answered after the kill reached no one and must not count as accepted.
    await until(
      "the killed sender's requests closed",
      () => (receiver.heldCount() === 0 ? true : undefined),
      30_000,
    );
    // Readings published while no instance delivers.
    await publish(SECOND_HOUR, (i) => 300 + i);
    receiver.setMode('accept');
    await processes.start('second', env);

    const expected = SUBSCRIBED.length * 2;
    await until(
      'every event accepted',
      () => (new Set(receiver.accepted()).size === expected ? true : undefined),
      120_000,
    );
    await until(
      'an empty queue',
      async () => ((await pending()).length === 0 ? true : undefined),
      30_000,
    );

    // Every receipt is signed with the subscription's secret; one body per event id.
    const bodies = new Map<string, string>();
    const events = new Map<string, Record<string, unknown>>();
    for (const receipt of receiver.receipts) {
      const event = verifiedEvent(receipt, secret);
      expect(event.id).toBe(receipt.eventId);
      expect(bodies.get(receipt.eventId) ?? receipt.body).toBe(receipt.body);
      bodies.set(receipt.eventId, receipt.body);
      events.set(receipt.eventId, event);
    }
    // After deduplication: exactly one event per reading published, none missing, none extra.
    const published = [...events.values()]
      .map((event) => {
        expect(event).toMatchObject({ type: 'published', subscription });
        return `${String(event.zone)} ${String(event.ts)} ${String(event.gco2eq_kwh)}`;
      })
      .sort();
    expect(published).toEqual(
      SUBSCRIBED.flatMap((zone, i) => [
        `${zone} ${formatTs(FIRST_HOUR)} ${200 + i}`,
        `${zone} ${formatTs(SECOND_HOUR)} ${300 + i}`,
      ]).sort(),
    );
    // The deliveries cut off by the kill were sent again (at least once), and each event was
    // accepted once: the survivor never repeats what it delivered.
    const accepted = receiver.accepted();
    for (const eventId of inFlight) expect(accepted).toContain(eventId);
    expect(accepted).toHaveLength(expected);
  }, 240_000);
});
