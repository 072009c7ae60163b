import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { guardReadRate, type CutReason, type ReadRateLimits } from './read-rate.js';

/**
 * The read-rate guard on a real loopback socket: a response of `total` bytes written in 64 KiB
 * pieces as fast as the socket takes them, watched with short windows.
 */

const LIMITS: ReadRateLimits = { deadlineMs: 60_000, minBytesPerSecond: 64 * 1024, windowMs: 400 };
const PIECE = Buffer.alloc(64 * 1024, 'x');

let server: Server | undefined;
afterEach(
  () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
);

/** Serves one response under the guard; resolves with why it was cut (or 'ended'). */
function serve(total: number, limits = LIMITS) {
  let outcome!: (reason: CutReason | 'ended') => void;
  const result = new Promise<CutReason | 'ended'>((resolve) => (outcome = resolve));
  server = createServer((_request, response: ServerResponse) => {
    const guard = guardReadRate(response, limits, outcome);
    let sent = 0;
    const more = () => {
      while (sent < total && !response.destroyed) {
        sent += PIECE.length;
        guard.wrote(PIECE.length);
        if (!response.write(PIECE)) return void response.once('drain', more);
      }
      if (response.destroyed) return;
      guard.stop();
      response.end(() => outcome('ended'));
    };
    more();
  });
  return new Promise<{ port: number; result: typeof result }>((resolve) =>
    server!.listen(0, '127.0.0.1', () =>
      resolve({ port: (server!.address() as AddressInfo).port, result }),
    ),
  );
}

describe('the read-rate guard', () => {
  it('cuts a client that reads nothing once its buffers are full', async () => {
    const { port, result } = await serve(256 * 1024 * 1024);
    const client = request({ port, host: '127.0.0.1' }, (response) => response.pause());
    client.on('error', () => undefined).end();
    expect(await result).toBe('too_slow');
    client.destroy();
  });

  it('lets a client that reads as fast as it can have the whole response', async () => {
    const total = 64 * 1024 * 1024;
    const { port, result } = await serve(total);
    const bytes = await new Promise<number>((resolve) => {
      request({ port, host: '127.0.0.1' }, (response) => {
        let taken = 0;
        response.on('data', (chunk: Buffer) => (taken += chunk.length));
        response.on('end', () => resolve(taken));
      }).end();
    });
    expect(await result).toBe('ended');
    expect(bytes).toBe(total);
  });

  it('cuts at the deadline a client that reads', async () => {
    const { port, result } = await serve(Number.MAX_SAFE_INTEGER, { ...LIMITS, deadlineMs: 300 });
    request({ port, host: '127.0.0.1' }, (response) => {
      response.on('data', () => undefined);
      response.on('error', () => undefined);
    })
      .on('error', () => undefined)
      .end();
    expect(await result).toBe('deadline');
  });
});
