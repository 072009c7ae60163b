import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startServer, type RunningServer } from '../src/server.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { fillFixedStoreWithBacktest } from './support/fixed-backtest.js';
import { H, HOUR_NOW, iso, NOW } from './support/fixed-store.js';
import { exchange, type RawResponse } from './support/raw-http.js';
import { seededRandom as random } from './support/seeded-random.js';

/**
 * A bounded hostile-request test over raw sockets (issue 10): at least 20,000 generated requests
 * over paths, queries, methods, headers, encodings, pipelining and split writes, from a fixed
 * seed. Every answer must be below 500; every error JSON with open CORS and no-store, with no
 * internal detail; and the process must still answer correctly afterwards.
 */

// Each server forks a forecast worker: from the build, not through tsx.
vi.mock('node:child_process', async (original) =>
  (await import('./support/built-workers.js')).forkingBuiltModules(await original()),
);

const REQUESTS = 20_000;
const CONNECTIONS_AT_ONCE = 16;

const METHODS = [
  'GET',
  'GET',
  'GET',
  'HEAD',
  'OPTIONS',
  'POST',
  'PUT',
  'DELETE',
  'PATCH',
  'TRACE',
  'get',
  'PROPFIND',
  'GETT',
  'M-SEARCH',
];
const PATHS = [
  '/v1',
  '/v1/',
  '/v1/health',
  '/v1/status',
  '/v1/zones',
  '/v1/intensity',
  '/v1/intensity/latest',
  '/v1/openapi.json',
  '/',
  '/*x',
  '/v1/:a(',
  '/v1/*',
  '/v1/intensity/:zone',
  '//v1//intensity',
  '/v1/../v1/zones',
  '/%zz',
  '/%',
  '/v1/%E0%A4%A',
  '/v1/intensity%3Fzone=DE',
  '/v1/intensity/latest/',
  '/v1/intensity;zone=DE',
  '/V1/ZONES',
  '/v1/intensity/latest/../../zones',
  '/\u00e9t\u00e9',
  '*',
  'http://localhost/v1/zones',
  '/v1/' + 'a'.repeat(3000),
  '/v1/intensity/latest%00',
  '/favicon.ico',
  '/v1/intensity/latest?',
  '/v1/zones#frag',
  '/v1/{zone}',
  '/v1/intensity/(.*)',
];
const ZONES = [
  'DE',
  'de',
  ' de ',
  'FR',
  'GB',
  'gb',
  'US',
  'IE',
  'XX',
  '',
  '%00',
  '%zz',
  'DE%2CFR',
  '+DE+',
  'x'.repeat(500),
  '__proto__',
  'constructor',
  '%F0%9F%98%80',
  'DE%0d%0aX:1',
];
const INSTANTS = [
  '2026-11-20',
  '2026-11-20T10:00Z',
  '2026-11-20T10:00:00.0001Z',
  '2026-11-20T11:00:00%2B01:00',
  '9999-12-31T23:59:59-23:59',
  '0000-01-01',
  '-000001-01-01',
  '+010000-01-01',
  '2026-02-30',
  '2026-13-01',
  'yesterday',
  '1700000000',
  '',
  '%zz',
  '2026-11-20T10:00:00.123456789Z',
  '2026-11-20T24:00Z',
  '2026-11-20T10:00:00+23:59',
  '2020-01-01',
  '2026-11-21T13:20:00Z',
];
const EXTRA_PARAMS = [
  'x=1',
  'zone[]=DE',
  'zone[0]=DE',
  'from[]=1',
  'a=%',
  '=',
  '&&',
  'utm=%E2%82%AC',
  'constructor=1',
  '__proto__[x]=1',
  'basis=direct',
];
const HEADER_SETS: string[][] = [
  [],
  ['Accept-Encoding: br'],
  ['Accept-Encoding: gzip;q=0, br;q=0'],
  ['Accept-Encoding: ' + 'x,'.repeat(200)],
  ['If-None-Match: *'],
  ['If-None-Match: "x", W/"y"'],
  ['Expect: x'],
  ['Expect: 100-continue'],
  ['X-Forwarded-For: 1.2.3.4, 5.6.7.8'],
  ['Connection: upgrade', 'Upgrade: websocket'],
  ['Transfer-Encoding: chunked'],
  ['Content-Length: 5'],
  ['Content-Length: 1', 'Content-Length: 2'],
  ['Content-Type: application/json', 'Content-Length: 2'],
  ['X-Long: ' + 'y'.repeat(17_000)],
  ['Bad Header: 1'],
  ['X-Null: a\u0000b'],
  ['Origin: https://example.org', 'Access-Control-Request-Method: GET'],
  ['Range: bytes=0-10'],
  ['Accept: text/html'],
];
const VERSIONS = ['HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/9.9', 'HTTP/1.1 extra', ''];

function pick<T>(next: () => number, list: readonly T[]): T {
  return list[Math.floor(next() * list.length)]!;
}

interface Generated {
  readonly text: string;
  readonly head: boolean;
}

function generateRequest(next: () => number): Generated {
  // Each dimension is mostly well-formed and hostile now and then: a request the HTTP parser
  // refuses closes its connection, and the requests pipelined behind it go unanswered.
  const method = next() < 0.8 ? 'GET' : pick(next, METHODS);
  let path = pick(next, PATHS);
  if (path.startsWith('/v1/intensity') && next() < 0.9) {
    const params: string[] = [];
    if (next() < 0.85) params.push(`zone=${pick(next, ZONES)}`);
    if (next() < 0.4) params.push(`from=${pick(next, INSTANTS)}`);
    if (next() < 0.4) params.push(`to=${pick(next, INSTANTS)}`);
    if (next() < 0.15) params.push(`zone=${pick(next, ZONES)}`);
    if (next() < 0.2) params.push(pick(next, EXTRA_PARAMS));
    path += `?${params.sort(() => next() - 0.5).join('&')}`;
  }
  const version = next() < 0.8 ? 'HTTP/1.1' : pick(next, VERSIONS);
  const headers = next() < 0.05 && version === 'HTTP/1.1' ? [] : ['Host: 127.0.0.1'];
  // Most requests carry benign headers; a hostile set (many close the connection) now and then.
  headers.push(...pick(next, next() < 0.7 ? HEADER_SETS.slice(0, 6) : HEADER_SETS));
  let body = '';
  if (headers.includes('Transfer-Encoding: chunked'))
    body = next() < 0.5 ? '5\r\nhello\r\n0\r\n\r\n' : 'zz\r\n';
  else if (headers.includes('Content-Length: 5')) body = 'hello';
  else if (headers.includes('Content-Length: 2')) body = '{}';
  const line = version === '' ? `${method} ${path}` : `${method} ${path} ${version}`;
  return { text: `${line}\r\n${headers.join('\r\n')}\r\n\r\n${body}`, head: method === 'HEAD' };
}

/** Cuts a byte string into 1 to 4 pieces at random places. */
function split(next: () => number, text: string): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > 1 && pieces.length < 3 && next() < 0.6) {
    const at = 1 + Math.floor(next() * (rest.length - 1));
    pieces.push(rest.slice(0, at));
    rest = rest.slice(at);
  }
  pieces.push(rest);
  return pieces;
}

/**
 * Requests to every route with parameters (/v1, the same under /compat/gridcarbon/v1, the
 * Electricity Maps and Carbon Aware shims) with each parameter drawn from hostile values:
 * repeats, lists of 3,000 and 10,000 (the latter over the URL limit: 431), extreme and reversed
 * windows, numbers out of range. `/v1/stream` and `/v1/subscriptions` have tests of their own
 * below (a stream never ends; subscriptions take a JSON body).
 */
const PARAM_REQUESTS = 5_000;
const LIST = (item: string, count: number) => Array.from({ length: count }, () => item).join(',');
const ZONE_LISTS = [
  ...ZONES,
  'all',
  'ALL',
  'DE,FR',
  'DE,all',
  'DE,,FR',
  ',',
  'aws:eu-central-1,westeurope',
  'DK-DK1,US-CAL-CISO',
  LIST('DE', 3000),
  LIST('gb', 3000),
  LIST('DE', 10_000),
  LIST('XX', 3000),
  [...'ABCDEFGHIJ'].map((letter) => `Z${letter}`).join(','),
];
const EXTREME_INSTANTS = [
  ...INSTANTS,
  '0001-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '1970-01-01T00:00:00Z',
  '2026-08-13T13:00:00Z',
  '2026-11-24T13:20:00Z',
  '2026-11-21 13:00:00 %2B0000 UTC',
  '2026-11-21T13:00:00.0000000%2B00:00',
  '2026-11-21T13:00:00 00:00',
];
const NUMBERS = [
  '0',
  '1',
  '-1',
  '24',
  '60',
  '72',
  '73',
  '4320',
  '4321',
  '999999',
  '1e309',
  'NaN',
  '',
  '1.5',
  '00000000000000000001',
  '52,37',
  '%zz',
];
const PARAM_VALUES: Record<string, readonly string[]> = {
  zone: ZONE_LISTS,
  zones: ZONE_LISTS,
  location: ZONE_LISTS,
  from: EXTREME_INSTANTS,
  to: EXTREME_INSTANTS,
  earliest: EXTREME_INSTANTS,
  deadline: EXTREME_INSTANTS,
  start: EXTREME_INSTANTS,
  end: EXTREME_INSTANTS,
  time: EXTREME_INSTANTS,
  toTime: EXTREME_INSTANTS,
  dataStartAt: EXTREME_INSTANTS,
  dataEndAt: EXTREME_INSTANTS,
  startTime: EXTREME_INSTANTS,
  endTime: EXTREME_INSTANTS,
  basis: ['lifecycle', 'direct', 'market', ''],
  emissionFactorType: ['lifecycle', 'direct', 'x'],
  format: ['csv', 'ndjson', 'xml'],
  include: ['mix', 'all'],
  interruptible: ['true', 'false', 'yes'],
  estimator: ['expected', 'p90', 'p50'],
  energy_kwh: ['0', '-1', '1e12', '1000000000001', '1e3', '12.5', 'NaN', 'Infinity', '0x10', ''],
  lat: ['52.37', '52,37', '91', '-90', 'x', '1e3'],
  lon: ['4.90', '181', '-180', 'x'],
};
/**
 * Values each parameter may take in a request that is allowed, at the extremes where the
 * limits allow it (400-day windows, 3,000 repeats, all zones, 72 hours): half the requests take
 * most of their parameters from here, so that hostile values also reach the code behind the
 * checks.
 */
const DAY_S = 24 * H;
const ago = (seconds: number) => iso(HOUR_NOW - seconds);
const STARTS = [ago(DAY_S), ago(30 * DAY_S), ago(100 * DAY_S), ago(400 * DAY_S), ago(10 * H)];
const ENDS = [iso(HOUR_NOW), iso(HOUR_NOW + H), ago(2 * H)];
const ALL_CODES = 'DE,FR,ES,PT,NL,BE,AT,CH,PL,CZ,GB,IE,US,US-PJM,US-MISO';
const PLAUSIBLE_VALUES: Record<string, readonly string[]> = {
  zone: ['DE', 'FR', 'GB', 'de', 'US', 'IE'],
  zones: ['all', 'DE,FR', 'DE,GB,IE,US', LIST('DE', 3000), ALL_CODES],
  location: ['DE', 'GB,FR', LIST('GB', 3000), ALL_CODES, 'westeurope'],
  from: STARTS,
  start: STARTS,
  time: STARTS,
  dataStartAt: [iso(HOUR_NOW), iso(HOUR_NOW + H)],
  startTime: STARTS,
  earliest: [iso(HOUR_NOW), iso(HOUR_NOW + H)],
  to: ENDS,
  end: ENDS,
  toTime: ENDS,
  endTime: ENDS,
  dataEndAt: [iso(HOUR_NOW + 24 * H), iso(HOUR_NOW + 72 * H)],
  deadline: [iso(HOUR_NOW + 4 * H), iso(HOUR_NOW + 72 * H), iso(HOUR_NOW + 72 * H + 1)],
  basis: ['lifecycle', 'direct'],
  emissionFactorType: ['lifecycle', 'direct'],
  format: ['csv', 'ndjson'],
  include: ['mix'],
  interruptible: ['true', 'false'],
  estimator: ['expected', 'p90'],
  energy_kwh: ['12.5', '1e12', '1000000000000'],
  horizon_hours: ['0', '24', '72'],
  horizonHours: ['24', '72'],
  duration_minutes: ['60', '240', '2880', '4320'],
  durationMinutes: ['30', '60'],
  windowSize: ['60', '1440'],
  lat: ['52.37', '-33.9'],
  lon: ['4.90', '151.2'],
};

/** The /v1 routes with parameters; each is fuzzed under /v1 and under the gridcarbon prefix. */
const V1_PARAM_ROUTES: readonly (readonly [string, readonly string[]])[] = [
  ['/v1/intensity/latest', ['zone', 'basis']],
  ['/v1/intensity', ['zone', 'from', 'to', 'basis']],
  ['/v1/mix', ['zone', 'from', 'to']],
  ['/v1/export', ['zones', 'from', 'to', 'format', 'basis', 'include']],
  [
    '/v1/schedule',
    [
      'zones',
      'duration_minutes',
      'earliest',
      'deadline',
      'interruptible',
      'estimator',
      'basis',
      'energy_kwh',
    ],
  ],
  ['/v1/intensity/forecast', ['zone', 'basis', 'horizon_hours']],
  ['/v1/intensity/forecast/skill', ['zone']],
  ['/v1/intensity/level', ['zone', 'zones', 'basis', 'horizon_hours']],
  ['/v1/intensity/stats', ['zone', 'from', 'to', 'basis', 'energy_kwh']],
  ['/v1/zones/cloud', []],
  ['/v1/factors', []],
];
const PARAM_ROUTES: readonly (readonly [string, readonly string[]])[] = [
  ...V1_PARAM_ROUTES,
  ...V1_PARAM_ROUTES.map(
    ([path, names]) => [path.replace(/^\/v1/, '/compat/gridcarbon/v1'), names] as const,
  ),
  ['/compat/electricitymaps/v3/home-assistant', ['zone', 'lat', 'lon', 'emissionFactorType']],
  ...['latest', 'history', 'forecast'].map(
    (path) =>
      [
        `/compat/electricitymaps/v3/carbon-intensity/${path}`,
        ['zone', 'lat', 'lon', 'emissionFactorType', 'horizonHours'],
      ] as const,
  ),
  [
    '/compat/electricitymaps/v3/carbon-intensity/past-range',
    ['zone', 'lat', 'lon', 'emissionFactorType', 'start', 'end'],
  ],
  ...['latest', 'history'].map(
    (path) =>
      [`/compat/electricitymaps/v3/power-breakdown/${path}`, ['zone', 'lat', 'lon']] as const,
  ),
  ['/compat/electricitymaps/v3/zones', []],
  ...['bylocations', 'bylocation', 'bylocations/best'].map(
    (path) =>
      [
        `/compat/carbon-aware/emissions/${path}`,
        ['location', 'time', 'toTime', 'durationMinutes'],
      ] as const,
  ),
  [
    '/compat/carbon-aware/emissions/forecasts/current',
    ['location', 'dataStartAt', 'dataEndAt', 'windowSize'],
  ],
  ['/compat/carbon-aware/emissions/average-carbon-intensity', ['location', 'startTime', 'endTime']],
  ['/compat/carbon-aware/locations', []],
];

function generateParamRequest(next: () => number): string {
  const [path, names] = pick(next, PARAM_ROUTES);
  const plausible = next() < 0.5;
  const parts: string[] = [];
  for (const name of names) {
    if (next() < 0.35) continue;
    const allowed = PLAUSIBLE_VALUES[name];
    const values =
      plausible && allowed && next() < 0.85 ? allowed : (PARAM_VALUES[name] ?? NUMBERS);
    // Now and then a parameter repeated, a few times or many (the SDK's `location` takes repeats).
    const times = next() < 0.1 ? (next() < 0.5 ? 2 : 200) : 1;
    for (let i = 0; i < times; i++) parts.push(`${name}=${pick(next, values)}`);
  }
  if (next() < 0.1) parts.push(pick(next, EXTRA_PARAMS));
  return parts.length === 0 ? path : `${path}?${parts.join('&')}`;
}

/**
 * `/v1/stream` (and its gridcarbon twin), opened with hostile `zones`, `basis` and
 * `Last-Event-ID`; a stream that opens is closed as soon as its headers arrive.
 */
const STREAM_REQUESTS = 300;
const LAST_EVENT_IDS = [
  '0',
  '1',
  '-1',
  '',
  ' 7 ',
  '1e309',
  '9'.repeat(400),
  '9007199254740993',
  'abc',
  '0x10',
  '1.5',
  '0,0',
  '%00',
];

/**
 * `POST /v1/subscriptions` with hostile JSON (lists of 10,000 zones or levels, repeats, extreme
 * numbers, wrong types, bodies over the limit, prototype keys), then `GET` and `DELETE` of
 * subscriptions created, unknown or with the wrong secret.
 */
const SUBSCRIPTION_REQUESTS = 600;
const CALLBACK_URLS: readonly unknown[] = [
  'http://127.0.0.1:9/hook',
  'https://127.0.0.1/x?y=1',
  `http://127.0.0.1:9/${'x'.repeat(3000)}`,
  'http://10.0.0.1/hook',
  'http://[::1]/hook',
  'ftp://127.0.0.1/',
  'http://user:pw@127.0.0.1/',
  'http://127.0.0.1:99999/',
  '/relative',
  '',
  'not a url',
  42,
  null,
  ['http://127.0.0.1:9/'],
];
const SUBSCRIPTION_ZONES: readonly unknown[] = [
  'all',
  'ALL',
  ['DE'],
  ['de', ' FR '],
  Array.from({ length: 45 }, () => 'DE'),
  Array.from({ length: 46 }, () => 'DE'),
  Array.from({ length: 10_000 }, () => 'DE'),
  [],
  ['XX'],
  [1, 2],
  'DE',
  {},
  null,
];
const CONDITIONS: readonly unknown[] = [
  { type: 'published' },
  { type: 'below', gco2eq_kwh: 100 },
  { type: 'above', gco2eq_kwh: -1 },
  { type: 'below', gco2eq_kwh: 1e308 },
  { type: 'below', gco2eq_kwh: '100' },
  { type: 'level', levels: ['low', 'low', 'very-low'] },
  { type: 'level', levels: Array.from({ length: 10_000 }, () => 'low') },
  { type: 'level', levels: [] },
  { type: 'level', levels: ['dirty'] },
  { type: 'window', within_hours: 72, duration_hours: 24, max_level: 'low' },
  { type: 'window', within_hours: 1, duration_hours: 2 },
  { type: 'window', within_hours: 1e9, duration_hours: 1.5, max_gco2eq_kwh: -5 },
  { type: 'x' },
  { type: '__proto__' },
  null,
  'published',
];
const SUBSCRIPTION_BASES: readonly unknown[] = ['lifecycle', 'direct', 'default', 'market', 1];

interface SubscriptionRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
}

function generateSubscriptionRequest(
  next: () => number,
  created: readonly { id: string; secret: string }[],
): SubscriptionRequest {
  const roll = next();
  if (roll < 0.7) {
    const fields: Record<string, unknown> = {};
    if (next() < 0.9) fields.url = pick(next, CALLBACK_URLS);
    if (next() < 0.9) fields.zones = pick(next, SUBSCRIPTION_ZONES);
    if (next() < 0.9) fields.condition = pick(next, CONDITIONS);
    if (next() < 0.4) fields.basis = pick(next, SUBSCRIPTION_BASES);
    let body = JSON.stringify(fields);
    if (next() < 0.05) body = body.replace('{', '{"__proto__":{"polluted":1},');
    if (next() < 0.05) body = body.slice(0, Math.floor(body.length / 2));
    const type =
      next() < 0.9 ? 'application/json' : pick(next, ['text/plain', '', 'application/xml']);
    return { method: 'POST', path: '/v1/subscriptions', headers: { 'content-type': type }, body };
  }
  const known = created.length > 0 && next() < 0.6 ? pick(next, created) : undefined;
  const id = known?.id ?? pick(next, ['sub_x', '', '..', '%00', 'x'.repeat(3000), '__proto__']);
  const secret = known && next() < 0.7 ? known.secret : pick(next, ['', 'x', 'y'.repeat(500)]);
  const headers: Record<string, string> =
    next() < 0.9 ? { authorization: `Bearer ${secret}` } : { authorization: 'Basic x' };
  const method = next() < 0.7 ? 'GET' : 'DELETE';
  return { method, path: `/v1/subscriptions/${encodeURIComponent(id)}`, headers };
}

const CLOSING_REQUEST = 'GET /v1/health HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n';

const INTERNAL_DETAIL = /\bat [\w.<>]+ \(|node_modules|\/src\/|\.ts:\d|Error:|stack|SQLITE|syntax/i;

function checkError(response: RawResponse, context: string): void {
  expect(response.headers['content-type'], context).toBe('application/json; charset=utf-8');
  expect(response.headers['access-control-allow-origin'], context).toBe('*');
  expect(response.headers['cache-control'], context).toBe('no-store');
  if (response.body.length === 0) return; // a HEAD request's error
  const text = response.body.toString('utf8');
  const body = JSON.parse(text) as { error: unknown; hint?: unknown };
  expect(typeof body.error, context).toBe('string');
  expect(
    Object.keys(body).every((key) => key === 'error' || key === 'hint'),
    context,
  ).toBe(true);
  expect(text, context).not.toMatch(INTERNAL_DETAIL);
}

describe('hostile requests over raw sockets', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gridco2-hostile-'));
  const logs: Record<string, unknown>[] = [];
  let server: RunningServer;

  beforeAll(async () => {
    const file = join(dir, 'fixed.db');
    const store = new SqliteStore(file);
    await fillFixedStoreWithBacktest(store);
    await store.close();
    const config = loadConfig({
      PORT: '0',
      DATABASE_URL: `sqlite:${file}`,
      INGEST: 'off',
      RATE_LIMIT_PER_MINUTE: '1000000000',
      LOG_LEVEL: 'warn',
      // Subscriptions fuzzed too; callbacks only to the loopback, which no write ever calls.
      WEBHOOKS: 'on',
      WEBHOOK_ALLOW: '127.0.0.1',
    });
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n'))
          if (line) logs.push(JSON.parse(line));
        done();
      },
    });
    server = await startServer(config, {
      clock: () => NOW,
      cache: 'ready',
      logger: pino({ level: 'warn' }, sink),
    });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    `answers ${REQUESTS} generated requests without a 5xx, every error JSON with CORS and no-store`,
    { timeout: 180_000 },
    async () => {
      // The whole set is generated first, so that it is the same on every run.
      const next = random(20261123);
      interface Batch {
        readonly requests: Generated[];
        readonly chunks: string[];
      }
      const batches: Batch[] = [];
      let generated = 0;
      while (generated < REQUESTS) {
        // One to seven pipelined requests and the closing one (sometimes more, past the cap).
        const count = next() < 0.05 ? 12 : 1 + Math.floor(next() * 7);
        const requests = Array.from({ length: count }, () => generateRequest(next));
        // A last, clean request asks the server to close: no waiting for keep-alive to end.
        requests.push({ text: CLOSING_REQUEST, head: false });
        generated += count;
        const bytes = requests.map((request) => request.text).join('');
        batches.push({
          requests,
          chunks: next() < 0.3 ? split(next, bytes) : [bytes],
        });
      }
      const statuses = new Map<number, number>();
      let answered = 0;
      const connection = async (): Promise<void> => {
        for (let batch = batches.shift(); batch; batch = batches.shift()) {
          const { requests, chunks } = batch;
          const heads = requests.map((request) => request.head);
          const { responses } = await exchange(server.url, chunks, heads, 10_000);
          // Every connection is answered at least once, unless it pipelined past the cap.
          responses.forEach((response, index) => {
            answered++;
            statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
            const context = `${requests[index]?.text.split('\r\n')[0]} -> ${response.status}`;
            expect(response.status, context).toBeLessThan(500);
            if (response.status >= 400) checkError(response, context);
          });
        }
      };
      await Promise.all(Array.from({ length: CONNECTIONS_AT_ONCE }, connection));
      expect(generated).toBeGreaterThanOrEqual(REQUESTS);
      // Many get an answer; the rest were behind a request that closed its connection (a parse
      // error, a missing Host) or past the pipelining cap.
      expect(answered).toBeGreaterThan(REQUESTS / 4);
      expect(statuses.get(200)).toBeGreaterThan(1000);
      expect(logs.filter((line) => line.msg === 'unhandled error')).toEqual([]);

      // Still alive, and still right.
      const health = await fetch(`${server.url}/v1/health`);
      expect(health.status).toBe(200);
      const latest = (await (await fetch(`${server.url}/v1/intensity/latest?zone=DE`)).json()) as {
        data: { zone: string }[];
      };
      expect(latest.data.map((reading) => reading.zone)).toEqual(['DE']);
    },
  );

  it(
    `answers ${PARAM_REQUESTS} generated requests to every compatibility and extension parameter without a 5xx`,
    { timeout: 180_000 },
    async () => {
      const next = random(20261126);
      const paths = Array.from({ length: PARAM_REQUESTS }, () => generateParamRequest(next));
      const statuses = new Map<number, number>();
      const answeredRoutes = new Set<string>();
      const worker = async (): Promise<void> => {
        for (let path = paths.shift(); path !== undefined; path = paths.shift()) {
          const response = await fetch(`${server.url}${path}`);
          const text = await response.text();
          const context = `${path.slice(0, 300)} -> ${response.status}`;
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          if (response.status < 400) answeredRoutes.add(path.split('?')[0]!);
          expect(response.status, context).toBeLessThan(500);
          if (response.status >= 400 && text !== '') {
            expect(() => JSON.parse(text) as unknown, context).not.toThrow();
            expect(text, context).not.toMatch(INTERNAL_DETAIL);
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      // Most requests are refused (400, 404, 431), but many are answered.
      expect(statuses.get(200)).toBeGreaterThan(PARAM_REQUESTS / 20);
      expect(statuses.get(400)).toBeGreaterThan(PARAM_REQUESTS / 20);
      // Every route answered some request, so the hostile values reached past its checks.
      expect([...answeredRoutes].sort()).toEqual(PARAM_ROUTES.map(([path]) => path).sort());
      expect(logs.filter((line) => line.msg === 'unhandled error')).toEqual([]);
      expect((await fetch(`${server.url}/v1/health`)).status).toBe(200);
    },
  );

  it(
    `opens ${STREAM_REQUESTS} streams with hostile parameters and Last-Event-ID without a 5xx`,
    { timeout: 120_000 },
    async () => {
      const next = random(20261127);
      const statuses = new Map<number, number>();
      for (let i = 0; i < STREAM_REQUESTS; i++) {
        const prefix = next() < 0.3 ? '/compat/gridcarbon/v1' : '/v1';
        const parts: string[] = [];
        if (next() < 0.7) parts.push(`zones=${pick(next, ZONE_LISTS)}`);
        if (next() < 0.4) parts.push(`basis=${pick(next, PARAM_VALUES.basis!)}`);
        if (next() < 0.1) parts.push(pick(next, EXTRA_PARAMS));
        const path = `${prefix}/stream${parts.length === 0 ? '' : `?${parts.join('&')}`}`;
        const headers: Record<string, string> = {};
        if (next() < 0.7) headers['last-event-id'] = pick(next, LAST_EVENT_IDS);
        const aborted = new AbortController();
        const response = await fetch(`${server.url}${path}`, { headers, signal: aborted.signal });
        const context = `${path.slice(0, 300)} (Last-Event-ID ${headers['last-event-id']?.slice(0, 40)}) -> ${response.status}`;
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        expect(response.status, context).toBeLessThan(500);
        // A stream never ends: its headers are the answer. An error ends, and is read whole.
        if (response.status === 200) aborted.abort();
        else {
          const text = await response.text();
          if (text !== '') expect(text, context).not.toMatch(INTERNAL_DETAIL);
        }
      }
      expect(statuses.get(200)).toBeGreaterThan(STREAM_REQUESTS / 10);
      expect(statuses.get(400)).toBeGreaterThan(STREAM_REQUESTS / 10);
      expect(logs.filter((line) => line.msg === 'unhandled error')).toEqual([]);
      expect((await fetch(`${server.url}/v1/health`)).status).toBe(200);
    },
  );

  it(
    `answers ${SUBSCRIPTION_REQUESTS} generated subscription requests without a 5xx`,
    { timeout: 120_000 },
    async () => {
      const next = random(20261128);
      const statuses = new Map<number, number>();
      const created: { id: string; secret: string }[] = [];
      for (let i = 0; i < SUBSCRIPTION_REQUESTS; i++) {
        const { method, path, headers, body } = generateSubscriptionRequest(next, created);
        const response = await fetch(`${server.url}${path}`, { method, headers, body });
        const text = await response.text();
        const context = `${method} ${path.slice(0, 200)} ${body?.slice(0, 200) ?? ''} -> ${response.status}`;
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        expect(response.status, context).toBeLessThan(500);
        if (response.status === 201)
          created.push(JSON.parse(text) as { id: string; secret: string });
        if (response.status >= 400 && text !== '') {
          expect(() => JSON.parse(text) as unknown, context).not.toThrow();
          expect(text, context).not.toMatch(INTERNAL_DETAIL);
        }
      }
      // Most are refused (400, 404, 429 past the per-address cap), some created and read back.
      expect(statuses.get(201)).toBeGreaterThan(0);
      expect(statuses.get(200)).toBeGreaterThan(0);
      expect(statuses.get(400)).toBeGreaterThan(SUBSCRIPTION_REQUESTS / 10);
      expect(logs.filter((line) => line.msg === 'unhandled error')).toEqual([]);
      expect((await fetch(`${server.url}/v1/health`)).status).toBe(200);
    },
  );

  it.each([
    [
      'a crafted path read as a route pattern',
      'GET /*x HTTP/1.1\r\nHost: a\r\n\r\n',
      404,
      'not found: /*x',
    ],
    [
      'an unclosed pattern group',
      'GET /v1/:a( HTTP/1.1\r\nHost: a\r\n\r\n',
      404,
      'not found: /v1/:a(',
    ],
    [
      'an Expect other than 100-continue',
      'GET /v1/zones HTTP/1.1\r\nHost: a\r\nExpect: x\r\n\r\n',
      417,
      'expectation failed',
    ],
    [
      'HTTP/1.1 without Host',
      'GET /v1/zones HTTP/1.1\r\n\r\n',
      400,
      'bad request: missing Host header',
    ],
    [
      'a malformed percent-escape in the path',
      'GET /v1/%zz HTTP/1.1\r\nHost: a\r\n\r\n',
      400,
      'bad request: malformed URL',
    ],
    ['a broken request line', 'GET\r\n\r\n', 400, 'bad request'],
    [
      'headers over 16 KB',
      `GET /v1 HTTP/1.1\r\nHost: a\r\nX: ${'y'.repeat(17_000)}\r\n\r\n`,
      431,
      'request too large',
    ],
  ])('answers %s in JSON with CORS and no-store', async (_name, request, status, error) => {
    const { responses } = await exchange(server.url, [request, CLOSING_REQUEST], [false, false]);
    expect(responses[0]?.status).toBe(status);
    checkError(responses[0]!, request.split('\r\n')[0]!);
    expect(JSON.parse(responses[0]!.body.toString('utf8')).error).toBe(error);
  });
});

describe('a client that never finishes its headers', () => {
  it('gets 408 in JSON, not 400', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gridco2-slow-'));
    const config = loadConfig({
      PORT: '0',
      DATABASE_URL: `sqlite:${join(dir, 's.db')}`,
      INGEST: 'off',
      LOG_LEVEL: 'silent',
    });
    const server = await startServer(config, {
      connections: { headersTimeout: 300, requestTimeout: 600, checkInterval: 100 },
    });
    try {
      const { responses } = await exchange(
        server.url,
        ['GET /v1/zones HTTP/1.1\r\nHost: a\r\nX-Slow: 1'],
        [false],
        30_000,
      );
      expect(responses[0]?.status).toBe(408);
      checkError(responses[0]!, 'slow headers');
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a connection without traffic either way', () => {
  let server: RunningServer;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gridco2-idle-'));
    const config = loadConfig({
      PORT: '0',
      DATABASE_URL: `sqlite:${join(dir, 'i.db')}`,
      INGEST: 'off',
      LOG_LEVEL: 'silent',
      RATE_LIMIT_PER_MINUTE: '1000000',
    });
    // Only the idle timeout can close these connections within the test.
    server = await startServer(config, {
      connections: {
        idleTimeout: 1000,
        checkInterval: 100,
        headersTimeout: 60_000,
        requestTimeout: 120_000,
        keepAliveTimeout: 60_000,
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = async () => {
    const { hostname, port } = new URL(server.url);
    const socket = connect({ host: hostname, port: Number(port) });
    await once(socket, 'connect');
    socket.on('error', () => undefined);
    return socket;
  };

  it('is closed once the idle timeout has passed, not before', async () => {
    const socket = await open();
    const opened = performance.now();
    await once(socket, 'close');
    expect(performance.now() - opened).toBeGreaterThanOrEqual(900);
  });

  it('stays open while requests keep coming, each sooner than the idle timeout', async () => {
    const socket = await open();
    let answers = '';
    socket.on('data', (chunk: Buffer) => (answers += chunk.toString()));
    for (let request = 0; request < 25; request++) {
      socket.write('GET /v1/health HTTP/1.1\r\nHost: a\r\n\r\n');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(socket.destroyed).toBe(false);
    await vi.waitFor(() => expect(answers.match(/HTTP\/1\.1 200 /g)?.length).toBe(25));
    socket.destroy();
  });
});
