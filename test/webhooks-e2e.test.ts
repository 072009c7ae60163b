import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startServer, type RunningServer } from '../src/server.js';
import { createStore } from '../src/storage/create-store.js';
import { computed, H, HOUR_NOW } from './support/fixed-store.js';

/**
 * Webhooks end to end (extensions §13): a real server with WEBHOOKS=on on SQLite, a real HTTP
 * receiver on 127.0.0.1 (listed literally in WEBHOOK_ALLOW), readings written into the store as
 * ingestion writes them. Timing is shortened (a turn every 50 ms, retries after 20-100 ms), and
 * every wait is for an outcome, bounded generously, never a fixed sleep.
 */

interface Receipt {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly status: number;
}

const T_LAST = HOUR_NOW - H;
/** 10 days of DE and FR at 300: enough reference for levels, nothing below 200. */
const HISTORY = ['DE', 'FR'].flatMap((zone) =>
  Array.from({ length: 10 * 24 }, (_, i) => computed(zone, T_LAST - i * H, 300)),
);

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('webhooks end to end', () => {
  let dir: string;
  let server: RunningServer;
  let receiver: Server;
  let target: string;
  const receipts: Receipt[] = [];
  let failing = false;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gridco2-webhooks-'));
    const databaseUrl = `sqlite:${join(dir, 'webhooks.db')}`;
    const store = await createStore(databaseUrl);
    await store.upsertReadings(HISTORY);
    await store.close();
    receiver = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        const status = failing ? 503 : 204;
        receipts.push({ headers: request.headers, body, status });
        response.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    target = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    server = await startServer(
      loadConfig({
        PORT: '0',
        DATABASE_URL: databaseUrl,
        INGEST: 'off',
        LOG_LEVEL: 'silent',
        RATE_LIMIT_PER_MINUTE: '1000000',
        WEBHOOKS: 'on',
        WEBHOOK_ALLOW: '127.0.0.1, *.example.org',
        METRICS: 'off',
        DASHBOARD: 'off',
      }),
      { cache: 'ready', webhooks: { turnMs: 50, backoff: { baseMs: 20, capMs: 100 } } },
    );
  });

  afterAll(async () => {
    await server?.close();
    await new Promise((resolve) => receiver?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const subscribe = async (body: unknown) => {
    const response = await fetch(`${server.url}/v1/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const write = async (zone: string, ts: number, value: number) => {
    const store = await createStore(`sqlite:${join(dir, 'webhooks.db')}`);
    try {
      await store.upsertReadings([computed(zone, ts, value)]);
    } finally {
      await store.close();
    }
  };

  it('delivers a threshold crossing once, with a valid Standard Webhooks signature', async () => {
    const created = await subscribe({
      url: target,
      zones: ['DE'],
      condition: { type: 'below', gco2eq_kwh: 200 },
    });
    expect(created.status).toBe(201);
    const { id, secret } = created.json as { id: string; secret: string };
    expect(Object.keys(created.json)).toEqual([
      'id',
      'secret',
      'url',
      'zones',
      'basis',
      'condition',
      'created_at',
    ]);
    // Read back with the secret: everything but the secret; without it, 404.
    const read = await fetch(`${server.url}/v1/subscriptions/${id}`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(read.status).toBe(200);
    expect(await read.text()).not.toContain(secret);
    expect((await fetch(`${server.url}/v1/subscriptions/${id}`)).status).toBe(404);
    expect(
      (
        await fetch(`${server.url}/v1/subscriptions/${id}`, {
          headers: { authorization: 'Bearer x' },
        })
      ).status,
    ).toBe(404);

    await write('DE', T_LAST + H, 150);
    const receipt = await until('the crossing', () =>
      receipts.find((r) => (JSON.parse(r.body) as { subscription: string }).subscription === id),
    );
    const event = new Webhook(secret).verify(receipt.body, {
      'webhook-id': receipt.headers['webhook-id'] as string,
      'webhook-timestamp': receipt.headers['webhook-timestamp'] as string,
      'webhook-signature': receipt.headers['webhook-signature'] as string,
    }) as Record<string, unknown>;
    expect(event).toMatchObject({
      type: 'crossed',
      subscription: id,
      zone: 'DE',
      basis: 'default',
      ts: new Date((T_LAST + H) * 1000).toISOString().slice(0, 19) + 'Z',
      gco2eq_kwh: 150,
      level: 'very-low',
    });
    expect(receipt.headers['webhook-id']).toBe(event.id);
    // Still below at the next reading: no new event (one per entry, not per reading).
    await write('DE', T_LAST + 2 * H, 140);
    const settle = Date.now();
    await until('a while of turns', () => (Date.now() - settle > 1500 ? true : undefined));
    expect(
      receipts.filter((r) => (JSON.parse(r.body) as { subscription: string }).subscription === id),
    ).toHaveLength(1);
  });

  it('delivers every event exactly once to a receiver that fails, then recovers', async () => {
    failing = true;
    const created = await subscribe({
      url: target,
      zones: ['FR'],
      condition: { type: 'published' },
    });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    const mine = () =>
      receipts.filter((r) => (JSON.parse(r.body) as { subscription: string }).subscription === id);
    for (let i = 1; i <= 3; i++) await write('FR', T_LAST + i * H, 300 + i);
    // Every event refused at least twice before the receiver recovers.
    await until('failed attempts', () => {
      const ids = new Set(mine().map((r) => r.headers['webhook-id']));
      const tries = (eventId: unknown) =>
        mine().filter((r) => r.headers['webhook-id'] === eventId).length;
      return ids.size === 3 && [...ids].every((eventId) => tries(eventId) >= 2) ? true : undefined;
    });
    failing = false;
    const accepted = await until('every event accepted', () => {
      const ok = mine().filter((r) => r.status === 204);
      return new Set(ok.map((r) => r.headers['webhook-id'])).size === 3 ? ok : undefined;
    });
    // Each event accepted once: the queue stops retrying what was delivered.
    const settle = Date.now();
    await until('a while of turns', () => (Date.now() - settle > 1000 ? true : undefined));
    const okIds = mine()
      .filter((r) => r.status === 204)
      .map((r) => r.headers['webhook-id']);
    expect(okIds).toHaveLength(3);
    expect(new Set(okIds).size).toBe(3);
    expect(accepted.map((r) => (JSON.parse(r.body) as { ts: string }).ts).sort()).toEqual(
      [1, 2, 3].map((i) => new Date((T_LAST + i * H) * 1000).toISOString().slice(0, 19) + 'Z'),
    );
  });

  it('refuses loopback and private targets not listed, and bad bodies, with a clear 400', async () => {
    for (const url of ['http://localhost:9/x', 'http://10.1.2.3/x', 'http://[::1]:9/x']) {
      const refused = await subscribe({ url, zones: 'all', condition: { type: 'published' } });
      expect(refused.status, url).toBe(400);
      expect(refused.json.error).toBe('invalid subscription: url not allowed');
    }
    const local = await subscribe({
      url: 'http://localhost:9/x',
      zones: 'all',
      condition: { type: 'published' },
    });
    expect(String(local.json.hint)).toMatch(/does not match WEBHOOK_ALLOW|loopback/);
    const bad = await subscribe({ url: target, zones: ['DE'], condition: { type: 'sometimes' } });
    expect([bad.status, bad.json.error]).toEqual([400, 'invalid subscription']);
    const big = await fetch(`${server.url}/v1/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: target, pad: 'x'.repeat(20_000) }),
    });
    expect(big.status).toBe(400);
    expect(((await big.json()) as { hint: string }).hint).toContain('16384 bytes');
  });

  it('caps subscriptions per address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) {
      statuses.push(
        (
          await subscribe({
            url: target,
            zones: ['DE'],
            condition: { type: 'above', gco2eq_kwh: 900 + i },
          })
        ).status,
      );
    }
    // Two made above from this address already: 18 more, then 429.
    expect(statuses.filter((status) => status === 201)).toHaveLength(18);
    expect(statuses.slice(18).every((status) => status === 429)).toBe(true);
  });
});
