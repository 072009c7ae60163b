import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from './support/built-cli.js';
import {
  startWebhookReceiver,
  until,
  verifiedEvent,
  type WebhookReceiver,
} from './support/webhook-receiver.js';

/**
 * A threshold crossing in the demo is delivered once, with a valid signature (issue 24,
 * extensions §13): `gridco2 demo` as a user starts it (the build: test/support/built-cli.ts, in
 * an empty working directory) with WEBHOOKS=on and a real receiver on 127.0.0.1 listed in
 * WEBHOOK_ALLOW. The threshold is set just below DE's newest synthetic value, so the condition
 * holds when the subscription is created: by the spec that is an entry, which fires at once.
 */

const cwd = mkdtempSync(join(tmpdir(), 'gridco2-webhooks-demo-'));
let child: ChildProcessWithoutNullStreams;
let output = '';
let url: string;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver('accept');
  child = spawn(process.execPath, [CLI, 'demo', '--days', '2'], {
    cwd,
    env: {
      PATH: process.env['PATH'] ?? '',
      PORT: '0',
      LOG_LEVEL: 'info',
      METRICS: 'off',
      RATE_LIMIT_PER_MINUTE: '100000',
      WEBHOOKS: 'on',
      WEBHOOK_ALLOW: '127.0.0.1',
    },
  });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  url = await until(
    'the demo serving',
    () => /"url":"(http[^"]+)".*"msg":"gridco2 serving"/.exec(output)?.[1],
    60_000,
  );
});

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await receiver?.close();
  rmSync(cwd, { recursive: true, force: true });
});

/** The newest synthetic value of `zone`, once the demo serves one. */
const newest = (zone: string) =>
  until(
    `a reading of ${zone}`,
    async () => {
      const response = await fetch(`${url}/v1/intensity/latest?zone=${zone}`);
      if (response.status !== 200) return undefined;
      const body = (await response.json()) as { data: { ts: string; gco2eq_kwh: number }[] };
      return body.data[0];
    },
    60_000,
  );

const subscribe = async (zone: string, gco2eqKwh: number) => {
  const response = await fetch(`${url}/v1/subscriptions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      url: receiver.url,
      zones: [zone],
      condition: { type: 'above', gco2eq_kwh: gco2eqKwh },
    }),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string; secret: string };
};

describe('webhooks in the demo', () => {
  it('delivers a threshold crossing once, with a valid signature', async () => {
    const reading = await newest('DE');
    const { id, secret } = await subscribe('DE', reading.gco2eq_kwh - 1);
    const mine = () =>
      receiver.receipts.filter(
        (receipt) => (JSON.parse(receipt.body) as { subscription: string }).subscription === id,
      );
    const [receipt] = await until('the crossing', () => mine()[0] && mine(), 60_000);
    const event = verifiedEvent(receipt!, secret);
    expect(event).toMatchObject({
      type: 'crossed',
      subscription: id,
      zone: 'DE',
      basis: 'default',
    });
    expect(event.gco2eq_kwh).toBeGreaterThan(reading.gco2eq_kwh - 1);
    expect(receipt!.eventId).toBe(event.id);

    // A second subscription delivered after the first: the deliverer has turned since, and the
    // crossing was not sent again (one event per entry, not per turn or per reading).
    const fr = await newest('FR');
    const later = await subscribe('FR', fr.gco2eq_kwh - 1);
    await until(
      'the later crossing',
      () =>
        receiver.receipts.some(
          (r) => (JSON.parse(r.body) as { subscription: string }).subscription === later.id,
        ) || undefined,
      60_000,
    );
    expect(mine()).toHaveLength(1);
    expect(output).not.toContain(secret);
  });
});
