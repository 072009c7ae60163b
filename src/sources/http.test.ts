import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createUpstreamHttp,
  parseRetryAfter,
  scrubSecrets,
  splitWindow,
  systemClock,
  UpstreamError,
  type Clock,
  type UpstreamHttpOptions,
} from './http.js';

/** A clock whose sleeps return at once and move time forward; the waits are recorded. */
function fakeClock(startMs = Date.UTC(2026, 10, 22)): Clock & { sleeps: number[] } {
  let now = startMs;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
  };
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const TOKEN = 'tok-3f9a1c77e2';
let handler: Handler;
let hits: string[];
let baseUrl: string;
const server = createServer((request, response) => {
  hits.push(request.url ?? '');
  handler(request, response);
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(
  () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
);
beforeEach(() => {
  hits = [];
});

/** Answers the given statuses in turn, then 200 `ok`. */
function answerInTurn(...answers: { status: number; headers?: Record<string, string> }[]): void {
  let index = 0;
  handler = (_request, response) => {
    const answer = answers[index++] ?? { status: 200 };
    response.writeHead(answer.status, answer.headers).end(answer.status === 200 ? 'ok' : 'error');
  };
}

function client(options: Partial<UpstreamHttpOptions> = {}) {
  const clock = fakeClock();
  const http = createUpstreamHttp({
    source: 'europe-tso',
    secrets: [TOKEN],
    clock,
    random: () => 0,
    ...options,
  });
  return { http, clock, url: `${baseUrl}/api?securityToken=${TOKEN}&documentType=A75` };
}

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

describe('createUpstreamHttp', () => {
  it('waits what retry-after asks on a 429, then succeeds', async () => {
    answerInTurn({ status: 429, headers: { 'retry-after': '7' } });
    const { http, clock, url } = client();
    await expect(http.getText(url)).resolves.toEqual({ status: 200, body: 'ok' });
    expect(hits).toHaveLength(2);
    expect(clock.sleeps).toEqual([7000]);
  });

  it('honours a retry-after given as an HTTP date', async () => {
    const clock = fakeClock(Date.parse('2026-11-22T10:00:00Z'));
    answerInTurn({ status: 503, headers: { 'retry-after': 'Sun, 22 Nov 2026 10:00:30 GMT' } });
    const { http, url } = client({ clock });
    await http.getText(url);
    expect(clock.sleeps).toEqual([30_000]);
  });

  it('retries 5xx with exponential backoff and jitter', async () => {
    answerInTurn({ status: 500 }, { status: 502 }, { status: 503 });
    const { http, clock, url } = client({ backoffMs: 100, random: () => 0.5 });
    await expect(http.getText(url)).resolves.toMatchObject({ body: 'ok' });
    expect(hits).toHaveLength(4);
    // Equal jitter: half the backoff plus random × half; backoff doubles per retry.
    expect(clock.sleeps).toEqual([75, 150, 300]);
  });

  it('gives up after the retries, as a temporary failure', async () => {
    answerInTurn(...Array.from({ length: 10 }, () => ({ status: 503 })));
    const { http, url } = client({ retries: 2 });
    const error = await failure(http.getText(url));
    expect(hits).toHaveLength(3);
    expect(error.kind).toBe('temporary');
    expect(error.status).toBe(503);
  });

  it('does not wait for a retry-after beyond the limit', async () => {
    answerInTurn({ status: 429, headers: { 'retry-after': '600' } });
    const { http, clock, url } = client({ maxRetryAfterMs: 60_000 });
    const error = await failure(http.getText(url));
    expect(error.kind).toBe('temporary');
    expect(error.message).toContain('retry-after 600 s');
    expect(hits).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  it.each([401, 403])('never retries %i: the credentials are refused', async (status) => {
    answerInTurn({ status });
    const { http, url } = client({ authHint: 'check ENTSOE_TOKEN' });
    const error = await failure(http.getText(url));
    expect(hits).toHaveLength(1);
    expect(error.kind).toBe('auth');
    expect(error.message).toMatch(/credentials refused; check ENTSOE_TOKEN/);
  });

  it.each([
    [404, 'no-data'],
    [400, 'invalid'],
    [422, 'invalid'],
  ] as const)('sorts HTTP %i as %s, without retrying', async (status, kind) => {
    answerInTurn({ status });
    const { http, url } = client();
    const error = await failure(http.getText(url));
    expect(error.kind).toBe(kind);
    expect(error.body).toBe('error');
    expect(hits).toHaveLength(1);
  });

  it('bounds every attempt with a timeout and retries it', async () => {
    handler = () => undefined; // never answers
    const { http, url } = client({ timeoutMs: 100, retries: 1 });
    const started = performance.now();
    const error = await failure(http.getText(url));
    expect(performance.now() - started).toBeLessThan(2000);
    expect(hits).toHaveLength(2);
    expect(error.kind).toBe('temporary');
    expect(error.message).toContain('no complete answer within 100 ms');
  });

  it('retries network errors as temporary', async () => {
    const { http } = client({ retries: 1 });
    // Port 9 (discard) is closed on loopback: connection refused.
    const error = await failure(http.getText(`http://127.0.0.1:9/api?securityToken=${TOKEN}`));
    expect(error.kind).toBe('temporary');
    expect(error.message).toMatch(/network error/);
  });

  it('cuts a retry wait short when the caller aborts', async () => {
    answerInTurn({ status: 503, headers: { 'retry-after': '30' } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('shutting down')), 50);
    const { http, url } = client({ clock: systemClock });
    const started = performance.now();
    await expect(http.getText(url, { signal: controller.signal })).rejects.toThrow('shutting down');
    expect(performance.now() - started).toBeLessThan(2000);
    expect(hits).toHaveLength(1);
  });

  it('keeps at most N request starts per window', async () => {
    answerInTurn();
    const { http, clock, url } = client({ rateLimit: { requests: 2, perMs: 1000 } });
    for (let i = 0; i < 5; i += 1) await http.getText(url);
    expect(hits).toHaveLength(5);
    expect(clock.sleeps).toEqual([1000, 1000]);
  });

  it('keeps credentials out of error messages, bodies and logs', async () => {
    handler = (_request, response) =>
      response.writeHead(503).end(`{"request":{"params":{"api_key":"${TOKEN}"}}}`);
    const lines: string[] = [];
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    );
    const { http, url } = client({ logger, retries: 1 });
    const error = await failure(http.getText(url));
    const everything = [error.message, error.body ?? '', error.stack ?? '', ...lines].join('\n');
    expect(lines.length).toBeGreaterThan(0);
    expect(everything).toContain('securityToken=REDACTED');
    expect(everything).not.toContain(TOKEN);
  });
});

describe('scrubSecrets', () => {
  it.each([
    [
      'https://x/api?securityToken=abc&documentType=A75',
      'https://x/api?securityToken=REDACTED&documentType=A75',
    ],
    [
      'https://x/v2/data/?frequency=hourly&api_key=k1',
      'https://x/v2/data/?frequency=hourly&api_key=REDACTED',
    ],
    ['{"api_key":"k1","x":1}', '{"api_key":"REDACTED","x":1}'],
    ['the key s3cr3t leaked', 'the key REDACTED leaked'],
  ])('%s', (text, scrubbed) => {
    expect(scrubSecrets(text, ['s3cr3t'])).toBe(scrubbed);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-22T10:00:00Z');
  it.each([
    [null, undefined],
    ['120', 120_000],
    [' 0 ', 0],
    ['Sun, 22 Nov 2026 10:01:00 GMT', 60_000],
    ['Sun, 22 Nov 2026 09:00:00 GMT', 0],
    ['soon', undefined],
  ])('%s → %s ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe('splitWindow', () => {
  it('cuts at the limit and keeps the remainder', () => {
    expect(splitWindow({ fromTs: 0, toTs: 250 }, 100)).toEqual([
      { fromTs: 0, toTs: 100 },
      { fromTs: 100, toTs: 200 },
      { fromTs: 200, toTs: 250 },
    ]);
    expect(splitWindow({ fromTs: 0, toTs: 100 }, 100)).toEqual([{ fromTs: 0, toTs: 100 }]);
    expect(splitWindow({ fromTs: 5, toTs: 5 }, 100)).toEqual([]);
  });
});
