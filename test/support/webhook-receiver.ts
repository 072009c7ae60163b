import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';

/**
 * A real webhook receiver on 127.0.0.1 for the delivery suites. It records every request whose
 * body arrived, and answers as the test says: `accept` (204), `fail` (503), or `hold` (no answer
 * until the mode changes or the sender goes away: a delivery in flight).
 */

export type ReceiverMode = 'accept' | 'fail' | 'hold';

export interface Receipt {
  readonly eventId: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The status answered, or null while held (and for good when the sender went away). */
  status: number | null;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hook`. */
  readonly url: string;
  readonly receipts: readonly Receipt[];
  /** Held requests are answered at once by the new mode (hold keeps them held). */
  setMode(mode: ReceiverMode): void;
  /** The event ids answered 2xx, each as often as it was. */
  accepted(): string[];
  /** Requests held unanswered whose sender is still connected. */
  heldCount(): number;
  close(): Promise<void>;
}

export async function startWebhookReceiver(
  mode: ReceiverMode = 'accept',
): Promise<WebhookReceiver> {
  const receipts: Receipt[] = [];
  const held = new Map<Receipt, ServerResponse>();
  let current = mode;
  const answer = (receipt: Receipt, response: ServerResponse) => {
    receipt.status = current === 'accept' ? 204 : 503;
    response.writeHead(receipt.status).end();
  };
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const receipt: Receipt = {
        eventId: String(request.headers['webhook-id']),
        headers: request.headers,
        body,
        status: null,
      };
      receipts.push(receipt);
      if (current !== 'hold') return answer(receipt, response);
      held.set(receipt, response);
      // The sender went away (killed, or its timeout): the request was never answered.
      response.on('close', () => held.delete(receipt));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    receipts,
    setMode(next) {
      current = next;
      if (next === 'hold') return;
      for (const [receipt, response] of held) answer(receipt, response);
      held.clear();
    },
    heldCount: () => held.size,
    accepted: () =>
      receipts
        .filter((receipt) => receipt.status !== null && receipt.status < 300)
        .map((receipt) => receipt.eventId),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The environment of a `gridco2 serve` process that delivers webhooks to a receiver on
 * 127.0.0.1: no ingestion, no metrics listener, logs for ServeProcesses, the rate limit away.
 */
export const deliveringServeEnv = (databaseUrl: string): Record<string, string> => ({
  DATABASE_URL: databaseUrl,
  PORT: '0',
  HOST: '127.0.0.1',
  INGEST: 'off',
  METRICS: 'off',
  DASHBOARD: 'off',
  LOG_LEVEL: 'info',
  RATE_LIMIT_PER_MINUTE: '100000',
  WEBHOOKS: 'on',
  WEBHOOK_ALLOW: '127.0.0.1',
});

/** The event of a receipt, after checking its Standard Webhooks signature with `secret`. */
export function verifiedEvent(receipt: Receipt, secret: string): Record<string, unknown> {
  return new Webhook(secret).verify(receipt.body, {
    'webhook-id': receipt.headers['webhook-id'] as string,
    'webhook-timestamp': receipt.headers['webhook-timestamp'] as string,
    'webhook-signature': receipt.headers['webhook-signature'] as string,
  }) as Record<string, unknown>;
}

/** Waits for `probe` to return a value, polling; throws naming `what` after `timeoutMs`. */
export async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
