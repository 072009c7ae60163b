import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startServer, type RunningServer } from '../src/server.js';
import { createStore } from '../src/storage/create-store.js';
import { computed, H, HOUR_NOW, NOW } from './support/fixed-store.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * A receiver that fails for 10 minutes, then recovers, gets every event exactly once; one that
 * never recovers stops being called 24 hours after the event, which is then dropped, counted
 * and logged (issue 24, extensions §13). A real server on SQLite and a real receiver on
 * 127.0.0.1, with the production backoff (30 s doubling up to one hour, with jitter) and no
 * scaling: only the deliverer's clock is simulated. The test moves that clock to the moment the
 * next delivery is due and runs one turn there, so 10 minutes and 24 hours of delivery take a few
 * dozen turns, and nothing depends on how fast the machine is. The attempts are counted by
 * outcome in /metrics.
 */

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const ZONES = ['DE', 'FR', 'NL'];
/** The production backoff before jitter (src/core/webhooks/backoff.ts, docs/api.md). */
const delayBefore = (failures: number) => Math.min(HOUR_MS, 30_000 * 2 ** (failures - 1));

interface Attempt {
  readonly eventId: string;
  /** The deliverer's clock when it was sent. */
  readonly at: number;
  readonly status: number | null;
}

describe('webhooks: a receiver that fails for a long time', () => {
  let dir: string;
  let databaseUrl: string;
  let server: RunningServer;
  let receiver: WebhookReceiver;
  let now = NOW;
  const logs: Record<string, unknown>[] = [];
  const attempts: Attempt[] = [];
  /** The receiver answers by the deliverer's clock: failing until then. */
  let outageUntil = Infinity;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gridco2-webhooks-outage-'));
    databaseUrl = `sqlite:${join(dir, 'webhooks.db')}`;
    receiver = await startWebhookReceiver('fail');
    const logger = pino(
      { level: 'warn' },
      { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) },
    );
    server = await startServer(
      loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: databaseUrl,
        INGEST: 'off',
        RATE_LIMIT_PER_MINUTE: '100000',
        WEBHOOKS: 'on',
        WEBHOOK_ALLOW: '127.0.0.1',
        // The delivery counters, read on the service's port.
        METRICS_ADDR: 'public',
        DASHBOARD: 'off',
      }),
      {
        cache: 'ready',
        logger,
        clock: () => now,
        // The timer never fires during the test: every turn is the test's.
        webhooks: { turnMs: 24 * HOUR_MS },
      },
    );
    // The first evaluation takes the store as it is.
    await server.deliverer!.turn();
  });

  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const subscribe = async () => {
    const response = await fetch(`${server.url}/v1/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, zones: ZONES, condition: { type: 'published' } }),
    });
    expect(response.status).toBe(201);
    const { id } = (await response.json()) as { id: string };
    await server.deliverer!.turn();
    return id;
  };
  const publish = async (ts: number, value: number) => {
    const store = await createStore(databaseUrl);
    try {
      await store.upsertReadings(ZONES.map((zone) => computed(zone, ts, value)));
    } finally {
      await store.close();
    }
  };
  /** One turn at the deliverer's current time; the attempts it made are recorded. */
  const turn = async () => {
    receiver.setMode(now < outageUntil ? 'fail' : 'accept');
    const before = receiver.receipts.length;
    await server.deliverer!.turn();
    for (const receipt of receiver.receipts.slice(before)) {
      attempts.push({ eventId: receipt.eventId, at: now, status: receipt.status });
    }
  };
  /**
   * Turns until the queue is empty, the clock moved each time to when the next delivery is due;
   * returns the attempts made.
   */
  const deliverAll = async () => {
    const first = attempts.length;
    for (let turns = 0; turns < 500; turns++) {
      await turn();
      const pending = await server.store.webhooks.due(Number.MAX_SAFE_INTEGER, 100);
      if (pending.length === 0) return attempts.slice(first);
      now = Math.max(now, Math.min(...pending.map((delivery) => delivery.dueAt)));
    }
    throw new Error('the queue never emptied');
  };
  const byEvent = (list: readonly Attempt[]) => {
    const events = new Map<string, Attempt[]>();
    for (const attempt of list) {
      events.set(attempt.eventId, [...(events.get(attempt.eventId) ?? []), attempt]);
    }
    return events;
  };

  it('delivers every event exactly once after a 10-minute outage, retrying with backoff', async () => {
    await subscribe();
    const start = now;
    outageUntil = start + 10 * MINUTE_MS;
    await publish(HOUR_NOW, 250);
    const made = await deliverAll();

    const events = byEvent(made);
    expect(events.size).toBe(ZONES.length);
    for (const [eventId, tries] of events) {
      const failed = tries.filter((attempt) => attempt.status === 503);
      const accepted = tries.filter((attempt) => attempt.status === 204);
      // Every attempt during the outage failed; retries kept going through it (30 s, 1, 2, 4
      // min: at least 5 attempts in 10 minutes) and the first attempt after it was accepted.
      expect(
        failed.every((attempt) => attempt.at < outageUntil),
        eventId,
      ).toBe(true);
      expect(failed.length, eventId).toBeGreaterThanOrEqual(5);
      expect(accepted, eventId).toHaveLength(1);
      expect(tries.at(-1), eventId).toBe(accepted[0]);
      expect(accepted[0]!.at).toBeGreaterThanOrEqual(outageUntil);
      // Each gap is the backoff of its failure count, with jitter: between half and all of it.
      expect(tries[0]!.at).toBe(start);
      for (let i = 1; i < tries.length; i++) {
        const gap = tries[i]!.at - tries[i - 1]!.at;
        expect(gap, `${eventId} gap ${i}`).toBeGreaterThanOrEqual(delayBefore(i) / 2);
        expect(gap, `${eventId} gap ${i}`).toBeLessThanOrEqual(delayBefore(i));
      }
    }
    // After deduplication, and even before it: each event accepted once.
    expect(receiver.accepted().sort()).toEqual([...events.keys()].sort());
    expect(server.deliverer!.dropped).toBe(0);
  });

  it('stops retrying 24 hours after the event, dropping it visibly', async () => {
    const subscription = await subscribe();
    outageUntil = Infinity;
    const start = now;
    await publish(HOUR_NOW + H, 260);
    const made = await deliverAll();

    // The first test's subscription gets these readings too: 6 events, none accepted.
    const events = byEvent(made);
    expect(events.size).toBe(2 * ZONES.length);
    for (const [eventId, tries] of events) {
      expect(tries.every((attempt) => attempt.status === 503)).toBe(true);
      // About 30 attempts (the gaps reach one hour after 7 failures), the last one less than an
      // hour (the longest gap) before the 24 hours end: the next would have been past them.
      expect(tries.length, eventId).toBeGreaterThanOrEqual(24);
      const last = tries.at(-1)!.at - start;
      expect(last, eventId).toBeLessThanOrEqual(24 * HOUR_MS);
      expect(last, eventId).toBeGreaterThan(23 * HOUR_MS);
    }
    // Dropped, counted and logged (ids only: no secret, no URL); kept for deduplication, so the
    // same event is never queued again; and no attempt after the 24 hours.
    expect(server.deliverer!.dropped).toBe(2 * ZONES.length);
    const dropLines = logs.filter(
      (line) => line.msg === 'webhook delivery dropped after 24 hours of retries',
    );
    expect(dropLines).toHaveLength(2 * ZONES.length);
    expect(dropLines.filter((line) => line.subscription === subscription)).toHaveLength(3);
    expect(new Set(dropLines.map((line) => line.event))).toEqual(new Set(events.keys()));
    expect(JSON.stringify(dropLines)).not.toContain(receiver.url);
    const [someEvent] = events.keys();
    expect(
      await server.store.webhooks.enqueue([
        {
          eventId: someEvent!,
          subscriptionId: subscription,
          body: '{}',
          firstDueAt: now,
          dueAt: now,
          failures: 0,
        },
      ]),
    ).toBe(0);
    const before = receiver.receipts.length;
    now += 48 * HOUR_MS;
    await turn();
    expect(receiver.receipts.length).toBe(before);

    // Counted for operators: every attempt of both tests, by outcome.
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const counted = (outcome: string) =>
      Number(
        new RegExp(`^gridco2_webhook_deliveries_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(
          metrics,
        )?.[1],
      );
    const refused = attempts.filter((attempt) => attempt.status === 503).length;
    expect([counted('delivered'), counted('failed'), counted('dropped')]).toEqual([
      ZONES.length,
      refused - 2 * ZONES.length,
      2 * ZONES.length,
    ]);
  });
});
