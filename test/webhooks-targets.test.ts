import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startServer, type RunningServer } from '../src/server.js';

/**
 * A delivery never connects to a special-purpose address, whatever the host's resolver answers
 * at delivery time (issue 37): a real server on SQLite delivers to a real receiver on 127.0.0.1,
 * its resolver injected so that the test points names anywhere, as a DNS rebinding attacker
 * would. The receiver counts connections: a host listed literally in WEBHOOK_ALLOW reaches it
 * (so the count would see a connection), every other name resolving to a refused address does
 * not. And through the API, every spelling of the probe is refused at creation with a 400
 * naming the range.
 */

/** What the injected resolver answers for `hooks.example.org`: each row is one delivery. */
const REFUSED_ANSWERS: readonly (readonly string[])[] = [
  ['127.0.0.1'],
  ['127.0.0.2'],
  ['0.0.0.0'],
  ['::1'],
  ['::ffff:127.0.0.1'],
  ['::ffff:7f00:1'],
  ['::7f00:1'],
  ['64:ff9b::7f00:1'],
  ['2002:7f00:1::1'],
  ['2001:0:4136:e378:8000:63bf:80ff:fffe'],
  // A public address first: the refused one is still refused, and so is the name.
  ['2606:4700:4700::1111', '127.0.0.1'],
  ['1.1.1.1', '::ffff:127.0.0.1'],
  // Nothing at all.
  [],
];

describe('webhooks: targets', () => {
  let dir: string;
  let server: RunningServer;
  let receiver: Server;
  let port: number;
  let connections = 0;
  let requests = 0;
  const answers = new Map<string, readonly string[]>();
  const asked: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gridco2-webhooks-targets-'));
    receiver = createServer((request, response) => {
      requests++;
      request.resume();
      request.on('end', () => response.writeHead(204).end());
    });
    receiver.on('connection', () => connections++);
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as { port: number }).port;
    server = await startServer(
      loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: `sqlite:${join(dir, 'webhooks.db')}`,
        INGEST: 'off',
        LOG_LEVEL: 'silent',
        RATE_LIMIT_PER_MINUTE: '1000000',
        WEBHOOKS: 'on',
        WEBHOOK_ALLOW: '*.example.org, listed.example.org',
        METRICS: 'off',
        DASHBOARD: 'off',
      }),
      {
        cache: 'ready',
        webhooks: {
          // Turns only when the test asks for one.
          turnMs: 3600_000,
          resolve: async (host) => {
            asked.push(host);
            return [...(answers.get(host) ?? [])];
          },
        },
      },
    );
  });

  afterAll(async () => {
    await server?.close();
    await new Promise((resolve) => receiver?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  let sequence = 0;
  /** Stores a subscription to `host` and one delivery due now, then runs one delivery turn. */
  const deliverTo = async (host: string) => {
    const id = `sub_targets_${++sequence}`;
    const created = await server.store.webhooks.createSubscription(
      {
        id,
        secret: 'whsec_dGVzdA==',
        url: `http://${host}:${port}/hook`,
        zones: ['DE'],
        basis: undefined,
        condition: { type: 'published' },
        clientAddress: '192.0.2.1',
        clientNetwork: '192.0.2',
        createdAt: Date.now(),
        memory: {},
      },
      { perAddress: 1000, perNetwork: 1000, total: 1000 },
    );
    expect(created).toBe('created');
    await server.store.webhooks.enqueue([
      {
        eventId: `evt_${id}`,
        subscriptionId: id,
        body: '{}',
        firstDueAt: Date.now(),
        dueAt: Date.now(),
        failures: 0,
      },
    ]);
    await server.deliverer!.turn();
  };

  it('connects to a host listed literally, whatever it resolves to', async () => {
    answers.set('listed.example.org', ['127.0.0.1']);
    await deliverTo('listed.example.org');
    expect([connections, requests]).toEqual([1, 1]);
  });

  it('never connects to a refused address, whatever the resolver answers', async () => {
    const before = { connections, requests, asked: asked.length };
    for (const answer of REFUSED_ANSWERS) {
      answers.set('hooks.example.org', answer);
      await deliverTo('hooks.example.org');
    }
    // No connection was made, and the resolver was asked at each delivery.
    expect([connections, requests]).toEqual([before.connections, before.requests]);
    expect(asked.length - before.asked).toBe(REFUSED_ANSWERS.length);
  });

  it('never connects to an address literal in a refused range', async () => {
    const before = connections;
    for (const host of ['127.0.0.1', '[::ffff:7f00:1]', '[::7f00:1]', '[64:ff9b::7f00:1]']) {
      await deliverTo(host);
    }
    expect(connections).toBe(before);
  });

  /** Every spelling of the probe (issue 37), as a client sends it. */
  const PROBED = [
    ['http://[64:ff9b::a9fe:a9fe]/', '169.254.0.0/16'],
    ['http://[64:ff9b::a00:1]/', '10.0.0.0/8'],
    ['http://[64:ff9b:1::a00:1]/', '64:ff9b:1::/48'],
    ['http://[2002:7f00:1::]/', '127.0.0.0/8'],
    ['http://[2002:c0a8:1::]/', '192.168.0.0/16'],
    ['http://[::127.0.0.1]/', '127.0.0.0/8'],
    ['http://[::ffff:0:7f00:1]/', '127.0.0.0/8'],
    ['http://198.18.0.1/', '198.18.0.0/15'],
    ['http://192.0.0.1/', '192.0.0.0/24'],
    ['http://[100::1]/', '100::/64'],
  ] as const;

  it('refuses every probed spelling at creation with a 400 naming the range', async () => {
    // A server that allows every host: only the address rules refuse.
    const open = await startServer(
      loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: `sqlite:${join(dir, 'open.db')}`,
        INGEST: 'off',
        LOG_LEVEL: 'silent',
        RATE_LIMIT_PER_MINUTE: '1000000',
        WEBHOOKS: 'on',
        WEBHOOK_ALLOW: '*',
        METRICS: 'off',
        DASHBOARD: 'off',
      }),
      { cache: 'ready', webhooks: { turnMs: 3600_000 } },
    );
    try {
      for (const [url, range] of PROBED) {
        const response = await fetch(`${open.url}/v1/subscriptions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url, zones: ['DE'], condition: { type: 'published' } }),
        });
        const body = (await response.json()) as { error: string; hint: string };
        expect([response.status, body.error], url).toEqual([
          400,
          'invalid subscription: url not allowed',
        ]);
        expect(body.hint, url).toContain(range);
      }
      expect(await open.store.webhooks.subscriptions()).toEqual([]);
    } finally {
      await open.close();
    }
  });
});
