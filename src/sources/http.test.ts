import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loggerInto } from '../../test/support/log-lines.js';
import { timedClock } from '../../test/support/timed-clock.js';
import { upstreamFailure } from '../../test/support/upstream-failure.js';
import type { Clock } from '../core/time.js';
import {
  createUpstreamHttp,
  parseRetryAfter,
  scrubSecrets,
  systemClock,
  UpstreamError,
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
    const error = await upstreamFailure(http.getText(url));
    expect(hits).toHaveLength(3);
    expect(error.kind).toBe('temporary');
    expect(error.status).toBe(503);
  });

  it('does not wait for a retry-after beyond the limit', async () => {
    answerInTurn({ status: 429, headers: { 'retry-after': '600' } });
    const { http, clock, url } = client({ maxRetryAfterMs: 60_000 });
    const error = await upstreamFailure(http.getText(url));
    expect(error.kind).toBe('temporary');
    expect(error.message).toContain('retry-after 600 s');
    expect(hits).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  it.each([401, 403])('never retries %i: the credentials are refused', async (status) => {
    answerInTurn({ status });
    const { http, url } = client({ authHint: 'check ENTSOE_TOKEN' });
    const error = await upstreamFailure(http.getText(url));
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
    const error = await upstreamFailure(http.getText(url));
    expect(error.kind).toBe(kind);
    expect(error.body).toBe('error');
    expect(hits).toHaveLength(1);
  });

  it('bounds every attempt with a timeout and retries it', async () => {
    handler = () => undefined; // never answers
    const { http, url } = client({ timeoutMs: 100, retries: 1 });
    const started = performance.now();
    const error = await upstreamFailure(http.getText(url));
    // Unbounded, it would wait for ever (the test's timeout is 30 s).
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(hits).toHaveLength(2);
    expect(error.kind).toBe('temporary');
    expect(error.message).toContain('no complete answer within 100 ms');
  });

  it('retries network errors as temporary', async () => {
    const { http } = client({ retries: 1 });
    // Port 9 (discard) is closed on loopback: connection refused.
    const error = await upstreamFailure(
      http.getText(`http://127.0.0.1:9/api?securityToken=${TOKEN}`),
    );
    expect(error.kind).toBe('temporary');
    expect(error.message).toMatch(/network error/);
  });

  it('cuts a retry wait short when the caller aborts', async () => {
    answerInTurn({ status: 503, headers: { 'retry-after': '30' } });
    const controller = new AbortController();
    // Shut down once the retry wait has begun (not after a wall-clock delay, which a loaded
    // machine may outlast before the first answer): the real clock's sleep must end at once.
    const clock: Clock = {
      ...systemClock,
      sleep: (ms, signal) => {
        const slept = systemClock.sleep(ms, signal);
        controller.abort(new Error('shutting down'));
        return slept;
      },
    };
    const { http, url } = client({ clock });
    const started = performance.now();
    await expect(http.getText(url, { signal: controller.signal })).rejects.toThrow('shutting down');
    // Not cut short, it would wait the 30 s the upstream asked for.
    expect(performance.now() - started).toBeLessThan(20_000);
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
    const logger = loggerInto(lines);
    const { http, url } = client({ logger, retries: 1 });
    const error = await upstreamFailure(http.getText(url));
    const everything = [error.message, error.body ?? '', error.stack ?? '', ...lines].join('\n');
    expect(lines.length).toBeGreaterThan(0);
    expect(everything).toContain('securityToken=REDACTED');
    expect(everything).not.toContain(TOKEN);
  });
});

// What the public status note may say of a failure (issue 10, finding 8): sorted here, once.
describe('the public failure words', () => {
  it.each([
    [429, 'rate-limited'],
    [503, 'server-error'],
    [408, 'timeout'],
    [401, 'auth'],
    [400, 'rejected'],
    [404, 'no-data'],
  ] as const)('HTTP %i is %s', async (status, expected) => {
    answerInTurn({ status });
    const { http, url } = client({ retries: 0 });
    expect((await upstreamFailure(http.getText(url))).failure).toBe(expected);
  });

  it('a refused connection is unreachable, a hanging upstream a timeout', async () => {
    const { http } = client({ retries: 0 });
    const refused = await upstreamFailure(http.getText('http://127.0.0.1:9/'));
    expect(refused.failure).toBe('unreachable');
    const clock = timedClock(Date.UTC(2026, 10, 22) / 1000);
    const hanging = client({ retries: 0, clock, fetch: (_url, init) => clock.hang(init?.signal) });
    expect((await upstreamFailure(hanging.http.getText(hanging.url))).failure).toBe('timeout');
  });

  it('an unusable payload is invalid-payload unless the thrower says otherwise', () => {
    expect(new UpstreamError('invalid', 'x').failure).toBe('invalid-payload');
    expect(new UpstreamError('invalid', 'x', { failure: 'rejected' }).failure).toBe('rejected');
  });
});

// Issue 10, finding 9: a hanging upstream must not hold a run past its deadline.
describe('a request with a deadline', () => {
  const START = Date.UTC(2026, 10, 22) / 1000;

  function hanging(options: Partial<UpstreamHttpOptions> = {}) {
    const clock = timedClock(START);
    let attempts = 0;
    const { http, url } = client({
      clock,
      timeoutMs: 60_000,
      retries: 4,
      backoffMs: 1000,
      fetch: (_url, init) => {
        attempts += 1;
        return clock.hang(init?.signal);
      },
      ...options,
    });
    return { http, url, clock, attempts: () => attempts };
  }

  it('cuts the try in flight at the deadline and retries no more', async () => {
    const { http, url, clock, attempts } = hanging();
    const error = await upstreamFailure(http.getText(url, { deadline: START * 1000 + 90_000 }));
    // 60 s, 0.5 s of backoff, then a try cut after 29.5 s.
    expect(attempts()).toBe(2);
    expect(clock.now()).toBe(START * 1000 + 90_000);
    expect(error.failure).toBe('deadline');
    expect(error.kind).toBe('temporary');
    expect(error.message).toMatch(/securityToken=REDACTED.*: run deadline reached$/);
  });

  it('does not wait for a retry the deadline would not let start', async () => {
    // The first retry would wait 60 s (half of 120 s with no jitter), ending at 120 s.
    const { http, url, clock, attempts } = hanging({ backoffMs: 120_000, maxBackoffMs: 120_000 });
    const error = await upstreamFailure(http.getText(url, { deadline: START * 1000 + 100_000 }));
    expect(attempts()).toBe(1);
    expect(clock.now()).toBe(START * 1000 + 60_000);
    expect(error.failure).toBe('timeout');
  });

  it('starts nothing once the deadline has passed', async () => {
    const { http, url, attempts } = hanging();
    const error = await upstreamFailure(http.getText(url, { deadline: START * 1000 }));
    expect(attempts()).toBe(0);
    expect(error.failure).toBe('deadline');
  });
});

describe('scrubSecrets', () => {
  it.each([
    ['the key s3cr3t leaked', 'the key REDACTED leaked'],
    [
      'https://x/api?securityToken=s3cr3t&documentType=A75',
      'https://x/api?securityToken=REDACTED&documentType=A75',
    ],
    ['{"api_key":"s3cr3t","x":1}', '{"api_key":"REDACTED","x":1}'],
    // Redaction is by value: a parameter of that name holding something else is left alone.
    ['https://x/?api_key=other', 'https://x/?api_key=other'],
  ])('%s', (text, scrubbed) => {
    expect(scrubSecrets(text, ['s3cr3t'])).toBe(scrubbed);
  });

  // Issue 10, finding 8: a key holding a quote kept its tail after REDACTED.
  const KEY = `k3y'wi"th sp&ce%!~`;
  it.each([
    ['as is, in a URL built with encodeURIComponent', `?api_key=${encodeURIComponent(KEY)}&x=1`],
    ['as the WHATWG URL parser sends it', new URL(`http://x/?api_key=${KEY}`).search],
    ['form-encoded', `?${new URLSearchParams({ api_key: KEY })}`],
    ['percent-encoded with lower-case hex', `?api_key=k3y%27wi%22th%20sp%26ce%25%21~`],
    ['echoed in a JSON body', JSON.stringify({ params: { api_key: KEY } })],
    ['in plain text', `refused ${KEY}.`],
  ])('leaves nothing of a key with quotes and reserved characters %s', (_form, text) => {
    const scrubbed = scrubSecrets(text, [KEY]);
    expect(scrubbed).toContain('REDACTED');
    for (const fragment of ['k3y', 'wi', 'th', 'sp', 'ce'])
      expect(scrubbed).not.toContain(fragment);
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
