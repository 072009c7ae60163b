import { mkdtempSync, rmSync } from 'node:fs';
import { round1 } from '../src/core/units.js';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/http/app.js';
import { ReadingCache } from '../src/read/reading-cache.js';
import type { StoredReading } from '../src/core/reading.js';
import { startServer, type RunningServer, type ServerOptions } from '../src/server.js';
import { createStore } from '../src/storage/create-store.js';
import type { Store } from '../src/storage/store.js';
import { ApiClient } from './support/api-client.js';
import { EventStreamClient } from './support/event-stream.js';
import { fillFixedStoreWithBacktest } from './support/fixed-backtest.js';
import { computed, gb, H, iso, NOW } from './support/fixed-store.js';
import { createThrowawayDatabase, isPostgresAvailable } from './support/postgres.js';

/**
 * Black-box suite of `GET /v1/stream` (extensions §7) over real HTTP, on SQLite and PostgreSQL,
 * with and without the in-memory reading cache: readings written to the store by another handle
 * (as ingestion on any instance writes them) reach the streams; Last-Event-ID resumes without
 * loss; the limits per IP and in all, the rate limit, heartbeats under short socket timeouts,
 * and slow readers being let go.
 */

// Each of the suite's 30 servers forks a forecast worker: from the build, not through tsx.
vi.mock('node:child_process', async (original) =>
  (await import('./support/built-workers.js')).forkingBuiltModules(await original()),
);

const postgres = await isPostgresAvailable('event stream suite (PostgreSQL)');
const backends: ('sqlite' | 'postgres')[] = [
  'sqlite',
  ...(postgres ? (['postgres'] as const) : []),
];
const cases = backends.flatMap((backend) =>
  (['ready', 'off'] as const).map((cache) => ({ backend, cache })),
);

/** Far from the fixed store's data: every test writes its own hours here. */
const FUTURE = Date.UTC(2030, 0, 1) / 1000;
let hourCounter = 0;
/** A fresh hour for each write, so no test sees another's readings as its own. */
const freshHour = () => FUTURE + hourCounter++ * H;

let ipCounter = 0;
/** Each test is its own client IP (the servers trust X-Forwarded-For from loopback). */
const freshIp = () => `10.7.${(++ipCounter >> 8) & 255}.${ipCounter & 255}`;

/**
 * Resolves once `done()` holds, checked every 20 ms. The deadline only bounds a test that would
 * hang: it is far above what a starved machine takes. Its error names `what` and shows `state()`.
 */
async function until(what: string, done: () => boolean, state: () => unknown): Promise<void> {
  const deadline = Date.now() + 150_000;
  while (!done()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(state())}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Reading {
  zone: string;
  ts: string;
  gco2eq_kwh: number;
  method: string;
}

const asEvent = (row: StoredReading): Reading => ({
  zone: row.zone,
  ts: iso(row.ts),
  gco2eq_kwh: round1(row.value!),
  method: row.method,
});

/**
 * Each `id` a stream sent after its opening block (on an event or a bare line), with how many
 * readings it had sent up to it: the id a client keeps must be that of a write it got whole.
 */
function readingsAtEachId(raw: string): { id: number; readings: number }[] {
  const seen: { id: number; readings: number }[] = [];
  let readings = 0;
  for (const block of raw.split('\n\n').slice(1)) {
    const lines = block.split('\n');
    if (lines.some((line) => line.startsWith('data: '))) readings++;
    const id = lines.find((line) => line.startsWith('id: '));
    if (id) seen.push({ id: Number(id.slice('id: '.length)), readings });
  }
  return seen;
}

/** Readings written up to each version, for `readingsAtEachId`: `writes` in version order. */
const readingsUpTo = (writes: readonly { version: number; readings: number }[], id: number) =>
  writes.filter((write) => write.version <= id).reduce((sum, write) => sum + write.readings, 0);

async function openDatabase(backend: 'sqlite' | 'postgres') {
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'gridco2-stream-'));
    return {
      url: `sqlite:${join(dir, 'stream.db')}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const database = await createThrowawayDatabase();
  return { url: database.url, drop: () => database.drop() };
}

function serve(
  databaseUrl: string,
  env: Record<string, string> = {},
  options: ServerOptions = {},
): Promise<RunningServer> {
  const config = loadConfig({
    PORT: '0',
    DATABASE_URL: databaseUrl,
    INGEST: 'off',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '1000000',
    TRUST_PROXY: '127.0.0.1',
    ...env,
  });
  return startServer(config, { clock: () => NOW, ...options });
}

describe.each(cases)('GET /v1/stream on $backend, reading cache $cache', ({ backend, cache }) => {
  let database: Awaited<ReturnType<typeof openDatabase>>;
  let server: RunningServer;
  /** Another handle on the same store: writes as ingestion (on any instance) would. */
  let writer: Store;
  let api: ApiClient;
  const extra: RunningServer[] = [];
  /** Stores a test made for itself alone. */
  const ownDatabases: Awaited<ReturnType<typeof openDatabase>>[] = [];
  const open: EventStreamClient[] = [];

  const stream = async (
    path = '/v1/stream',
    headers: Record<string, string> = {},
    on: RunningServer = server,
  ) => {
    const client = await EventStreamClient.open(`${on.url}${path}`, {
      'x-forwarded-for': freshIp(),
      ...headers,
    });
    open.push(client);
    return client;
  };
  /** Another server with its own settings, on the same store unless given another. */
  const another = async (
    env: Record<string, string>,
    options: ServerOptions = {},
    databaseUrl = database.url,
  ) => {
    const started = await serve(databaseUrl, env, { cache, ...options });
    extra.push(started);
    return started;
  };

  beforeAll(async () => {
    database = await openDatabase(backend);
    writer = await createStore(database.url);
    await fillFixedStoreWithBacktest(writer);
    server = await serve(database.url, {}, { cache, streams: { pollMs: 200 } });
    api = new ApiClient(server.url);
    await api.loadOpenApi();
  });
  // A test's clients and servers end with it: left open, each kept taking the later tests'
  // writes (over 70,000 readings a case), every server in its reading cache and forecasts.
  afterEach(async () => {
    for (const client of open.splice(0)) client.close();
    for (const started of extra.splice(0)) await started.close();
    for (const own of ownDatabases.splice(0)) await own.drop();
  });
  afterAll(async () => {
    await server?.close();
    await writer?.close();
    await database?.drop();
  });

  it('opens with retry 5000 and the current data version as id, no-store, open CORS', async () => {
    const version = await writer.dataVersion();
    const client = await stream();
    expect(client.status).toBe(200);
    expect(client.headers.get('content-type')).toBe('text/event-stream');
    expect(client.headers.get('cache-control')).toBe('no-store');
    expect(client.headers.get('access-control-allow-origin')).toBe('*');
    expect(client.headers.get('ratelimit-limit')).toBe('1000000');
    await client.until('the first block', () => client.raw.includes('\n\n'));
    expect(client.raw).toBe(`retry: 5000\nid: ${version}\n\n`);
    expect(client.retries).toEqual([5000]);
    expect(client.lastEventId).toBe(String(version));
    expect(client.events).toEqual([]);
    client.close();
  });

  it('sends each reading written to the store, and each revision, with its data version as id', async () => {
    const client = await stream('/v1/stream?zones=DE');
    await client.until('opened', () => client.retries.length > 0);
    const ts = freshHour();
    const first = computed('DE', ts, 321.25);
    await writer.upsertReadings([first]);
    const firstVersion = await writer.dataVersion();
    await client.untilEvents(1);
    const revised = computed('DE', ts, 333.333);
    await writer.upsertReadings([revised]);
    const revisedVersion = await writer.dataVersion();
    await client.untilEvents(2);
    expect(client.events.map((event) => [event.event, event.lastEventId, event.hasId])).toEqual([
      ['reading', String(firstVersion), true],
      ['reading', String(revisedVersion), true],
    ]);
    expect(client.readings()).toEqual([asEvent(first), asEvent(revised)]);
    expect(client.readings()[1]).toEqual({
      zone: 'DE',
      ts: iso(ts),
      gco2eq_kwh: 333.3,
      method: 'computed:v1',
    });
  });

  it('sends only the zones asked for, on the basis asked for, and never an unpublished hour', async () => {
    const some = await stream('/v1/stream?zones=fr,%20DE');
    const all = await stream('/v1/stream');
    const direct = await stream('/v1/stream?zones=DE,GB&basis=direct');
    const lifecycle = await stream('/v1/stream?zones=GB&basis=lifecycle');
    for (const client of [some, all, direct, lifecycle]) {
      await client.until('opened', () => client.retries.length > 0);
    }
    const ts = freshHour();
    const written = [
      computed('DE', ts, 400.04),
      computed('FR', ts, 55.55),
      computed('PL', ts, 700),
      computed('NL', ts, 999, false),
      gb(ts, 123),
    ];
    await writer.upsertReadings(written);
    // GB's mix comes apart from the operator's figure: it publishes GB on each basis.
    await writer.upsertMixes([
      { zone: 'GB', ts, mix: { gas: 50, 'wind-onshore': 50 }, lifecycle: 215.5, direct: 185 },
    ]);
    await all.untilEvents(4);
    await some.untilEvents(2);
    await direct.untilEvents(2);
    await lifecycle.untilEvents(1);
    expect(
      some
        .readings()
        .map((reading) => reading.zone as string)
        .sort(),
    ).toEqual(['DE', 'FR']);
    const allZones = all.readings().map((reading) => reading.zone);
    expect(allZones.slice(0, 4).sort()).toEqual(['DE', 'FR', 'GB', 'PL']);
    expect(allZones).not.toContain('NL');
    expect(direct.readings()).toEqual([
      { zone: 'DE', ts: iso(ts), gco2eq_kwh: 300, method: 'computed:v1:direct' },
      { zone: 'GB', ts: iso(ts), gco2eq_kwh: 185, method: 'computed:v1:direct' },
    ]);
    expect(lifecycle.readings()).toEqual([
      { zone: 'GB', ts: iso(ts), gco2eq_kwh: 215.5, method: 'computed:v1' },
    ]);
    for (const client of [some, all, direct, lifecycle]) client.close();
  });

  it('resumes from Last-Event-ID without losing or repeating a reading', async () => {
    const first = await stream('/v1/stream?zones=DE,FR');
    await first.until('opened', () => first.retries.length > 0);
    const ts = freshHour();
    await writer.upsertReadings([computed('DE', ts, 1)]);
    await first.untilEvents(1);
    const resumeFrom = first.lastEventId;
    first.close();

    // Written while the client is away: several writes, one of them larger than a replay page
    // (5000 changes), and changes of other zones mixed in.
    const away: StoredReading[][] = [
      [computed('FR', ts, 2), computed('PL', ts, 2)],
      Array.from({ length: 3000 }, (_, i) => computed('DE', ts + (i + 1) * H, 3 + (i % 50))),
      Array.from({ length: 6000 }, (_, i) => computed(i % 2 ? 'FR' : 'NL', ts + (i + 1) * H, 4)),
      [computed('DE', ts, 5)],
    ];
    const versions: number[] = [];
    for (const batch of away) {
      await writer.upsertReadings(batch);
      versions.push(await writer.dataVersion());
    }
    hourCounter += 6001;
    const expected = [
      computed('FR', ts, 2),
      ...away[1]!,
      ...away[2]!.filter((row) => row.zone === 'FR'),
      computed('DE', ts, 5),
    ].map(asEvent);

    const again = await stream('/v1/stream?zones=DE,FR', { 'last-event-id': resumeFrom });
    await again.untilEvents(expected.length, 30_000);
    // Replayed in write order; within one write the store's order is free.
    const key = (reading: Reading) => `${reading.zone} ${reading.ts} ${reading.gco2eq_kwh}`;
    const received = again.readings<Reading>();
    expect(received.map(key).sort()).toEqual(expected.map(key).sort());
    expect(received.at(-1)).toEqual(asEvent(computed('DE', ts, 5)));
    // An id only where a write ends: on its last event, or on a bare id line after it when the
    // write was larger than a replay page (its events for the client were not the last of it).
    const forClient = [1, 3000, 3000, 1].map((readings, i) => ({
      version: versions[i]!,
      readings,
    }));
    const ids = readingsAtEachId(again.raw);
    expect(ids.map(({ id }) => id)).toContain(versions.at(-1));
    for (const { id, readings } of ids) expect(readings).toBe(readingsUpTo(forClient, id));
    expect(again.events.filter((event) => event.hasId).length).toBeGreaterThanOrEqual(2);
    expect(again.lastEventId).toBe(String(await writer.dataVersion()));

    // Then live.
    const live = computed('FR', freshHour(), 6);
    await writer.upsertReadings([live]);
    await again.untilEvents(expected.length + 1);
    expect(again.readings().at(-1)).toEqual(asEvent(live));
    again.close();
  });

  it('sends a write larger than a page once, live and replayed, its id only at its end', async () => {
    const before = String(await writer.dataVersion());
    // A stream without Last-Event-ID starts where this instance has applied the store's writes:
    // the last test's live write may still be on its way (replayed clients read it from the
    // store). Wait until a stream has it, so the clients below open after it.
    const probe = await stream();
    await probe.until('the newest write applied', () => probe.lastEventId === before);
    probe.close();
    const live = await stream();
    const liveDe = await stream('/v1/stream?zones=DE');
    for (const client of [live, liveDe])
      await client.until('opened', () => client.retries.length > 0);
    // 5,500 changes: more than a live page (5,000) and five replay pages (1,000), cut inside a
    // zone; DE comes first in the write, so DE clients get all of theirs before its end.
    const ts = freshHour();
    const large = ['DE', 'FR', 'IE', 'NL', 'PL'].flatMap((zone) =>
      Array.from({ length: 1100 }, (_, i) => computed(zone, ts + i * H, 100 + (i % 7))),
    );
    await writer.upsertReadings(large);
    const largeVersion = await writer.dataVersion();
    const after = computed('FR', ts + 1100 * H, 7);
    await writer.upsertReadings([after]);
    const end = await writer.dataVersion();
    hourCounter += 1101;

    const key = (reading: Reading) => `${reading.zone} ${reading.ts} ${reading.gco2eq_kwh}`;
    const check = async (client: EventStreamClient, zone?: string) => {
      const expected = [...large, after].filter((row) => !zone || row.zone === zone);
      await client.untilEvents(expected.length, 60_000);
      await client.until('the id of the last write', () => client.lastEventId === String(end));
      // Every reading once, in write order.
      const received = client.readings<Reading>();
      expect(received.map(key).sort()).toEqual(expected.map(asEvent).map(key).sort());
      expect(new Set(received.map(key)).size).toBe(received.length);
      if (!zone) expect(received.at(-1)).toEqual(asEvent(after));
      const writes = [
        { version: largeVersion, readings: zone ? expected.length : expected.length - 1 },
        { version: end, readings: zone ? 0 : 1 },
      ];
      // Never an id inside the large write: a client resumes before it or after it.
      for (const { id, readings } of readingsAtEachId(client.raw)) {
        expect(readings).toBe(readingsUpTo(writes, id));
      }
      client.close();
    };
    await check(live);
    await check(liveDe, 'DE');
    // Opened once the live clients have had it all: replayed from the store.
    await check(await stream('/v1/stream', { 'last-event-id': before }));
    await check(await stream('/v1/stream?zones=DE', { 'last-event-id': before }), 'DE');
  }, 300_000);

  it('moves the id on with a bare id line when a write holds nothing for the client', async () => {
    const client = await stream('/v1/stream?zones=IE');
    await client.until('opened', () => client.retries.length > 0);
    await writer.upsertReadings([computed('PL', freshHour(), 10)]);
    const version = String(await writer.dataVersion());
    await client.until('the id moves on', () => client.lastEventId === version);
    expect(client.events).toEqual([]);
    client.close();
  });

  it('rejects a bad query or Last-Event-ID with the JSON errors of the API', async () => {
    const cases: [string, Record<string, string>, number, string][] = [
      ['/v1/stream?zones=XX', {}, 404, 'unknown or empty zone: XX'],
      ['/v1/stream?zones=', {}, 400, 'invalid param: zones'],
      ['/v1/stream?zones=DE,,FR', {}, 400, 'invalid param: zones'],
      ['/v1/stream?zones=all,DE', {}, 400, 'invalid param: zones'],
      ['/v1/stream?zones=DE&zones=FR', {}, 400, 'invalid param: zones'],
      ['/v1/stream?basis=operator', {}, 400, 'invalid param: basis'],
      ['/v1/stream', { 'last-event-id': 'abc' }, 400, 'invalid header: Last-Event-ID'],
      ['/v1/stream', { 'last-event-id': '-1' }, 400, 'invalid header: Last-Event-ID'],
    ];
    for (const [path, headers, status, error] of cases) {
      const response = await api.get(path, { 'x-forwarded-for': freshIp(), ...headers });
      expect(response.status, path).toBe(status);
      expect((response.json as { error: string }).error, path).toBe(error);
      expect(response.headers.get('cache-control'), path).toBe('no-store');
    }
    // Unknown parameters are ignored.
    const extra = await stream('/v1/stream?zones=all&x=1');
    expect(extra.status).toBe(200);
    extra.close();
  });

  it('answers HEAD with the headers only, and OPTIONS and other methods as for /v1', async () => {
    const head = await fetch(`${server.url}/v1/stream`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/event-stream');
    expect(await head.text()).toBe('');
    const options = await fetch(`${server.url}/v1/stream`, {
      method: 'OPTIONS',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' },
    });
    expect(options.status).toBe(204);
    expect(options.headers.get('access-control-allow-origin')).toBe('*');
    const post = await api.request('/v1/stream', { method: 'POST' });
    expect(post.status).toBe(405);
  });

  it('lets one IP hold 5 streams (429 beyond), and frees a place when one closes', async () => {
    const ip = freshIp();
    const five = await Promise.all(
      Array.from({ length: 5 }, () => stream('/v1/stream', { 'x-forwarded-for': ip })),
    );
    expect(five.map((client) => client.status)).toEqual([200, 200, 200, 200, 200]);
    const sixth = await api.get('/v1/stream', { 'x-forwarded-for': ip });
    expect(sixth.status).toBe(429);
    expect(sixth.json).toEqual({
      error: 'too many open streams',
      hint: 'at most 5 open streams per IP; close one, or ask for several zones on one stream',
    });
    expect(sixth.headers.get('retry-after')).toBe('5');
    const otherIp = await stream('/v1/stream');
    expect(otherIp.status).toBe(200);
    otherIp.close();
    five[0]!.close();
    const deadline = Date.now() + 5000;
    let again = await stream('/v1/stream', { 'x-forwarded-for': ip });
    while (again.status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      again = await stream('/v1/stream', { 'x-forwarded-for': ip });
    }
    expect(again.status).toBe(200);
    for (const client of [...five, again]) client.close();
  });

  it('caps the streams of the whole server at STREAM_MAX (503 beyond)', async () => {
    const small = await another({ STREAM_MAX: '2' });
    const two = [await stream('/v1/stream', {}, small), await stream('/v1/stream', {}, small)];
    expect(two.map((client) => client.status)).toEqual([200, 200]);
    const third = await stream('/v1/stream', {}, small);
    expect(third.status).toBe(503);
    expect(third.json()).toEqual({
      error: 'too many streams on this server',
      hint: 'retry after the seconds in retry-after, or on another instance',
    });
    expect(third.headers.get('retry-after')).toBe('30');
    for (const client of two) client.close();
  });

  it('counts a stream once against the rate limit, when it opens', async () => {
    const limited = await another({ RATE_LIMIT_PER_MINUTE: '2' }, { streams: { heartbeatMs: 50 } });
    const ip = freshIp();
    const client = await stream('/v1/stream?zones=DE', { 'x-forwarded-for': ip }, limited);
    expect(client.headers.get('ratelimit-remaining')).toBe('1');
    await writer.upsertReadings([computed('DE', freshHour(), 7)]);
    await client.untilEvents(1);
    await client.until('heartbeats', () => client.comments.length >= 3);
    const next = await fetch(`${limited.url}/v1/zones`, { headers: { 'x-forwarded-for': ip } });
    expect(next.status).toBe(200);
    expect(next.headers.get('ratelimit-remaining')).toBe('0');
    const refused = await fetch(`${limited.url}/v1/stream`, { headers: { 'x-forwarded-for': ip } });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: string }).error).toBe('rate limit exceeded');
    client.close();
  });

  it('keeps a stream open past the socket timeouts with heartbeats every interval', async () => {
    const strict = await another(
      {},
      {
        streams: { heartbeatMs: 300 },
        connections: {
          idleTimeout: 1000,
          requestTimeout: 600,
          headersTimeout: 500,
          keepAliveTimeout: 500,
          checkInterval: 100,
        },
      },
    );
    const client = await stream('/v1/stream?zones=DE', {}, strict);
    // Ten heartbeats 300 ms apart: open for 2.7 s at least, past every socket timeout above.
    await client.until(
      'ten heartbeats',
      () => client.comments.filter((comment) => comment === 'heartbeat').length >= 10,
    );
    expect(client.ended).toBe(false);
    await writer.upsertReadings([computed('DE', freshHour(), 8)]);
    await client.untilEvents(1);
    client.close();
  });

  /** A raw connection that opens a stream, reads its status line, then stops reading. */
  async function pausedStream(on: RunningServer): Promise<{
    socket: Socket;
    closed: () => boolean;
    readAll: (expected?: number) => Promise<{ events: number; distinct: number }>;
  }> {
    const { hostname, port } = new URL(on.url);
    const socket: Socket = connect({ host: hostname, port: Number(port) });
    socket.write(
      `GET /v1/stream?zones=PL HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: ${freshIp()}\r\n\r\n`,
    );
    const first = await new Promise<Buffer>((resolve) => socket.once('data', resolve));
    expect(first.toString()).toMatch(/^HTTP\/1\.1 200 /);
    socket.pause();
    let closed = false;
    socket.on('close', () => (closed = true));
    socket.on('error', () => undefined);
    /**
     * Reads again until the server ends the stream, `expected` events have come, or a pause
     * without data (3 s; 60 s when a count is expected, so a busy machine is not a lost event).
     * Counts the events, and the distinct readings among them (each event is a new hour).
     */
    const readAll = (expected = Infinity) =>
      new Promise<{ events: number; distinct: number }>((resolve) => {
        const chunks: string[] = [];
        const quiet = Number.isFinite(expected) ? 60_000 : 3000;
        // Counted as the chunks come, not in the whole text again on each (6 MB, ~100 chunks):
        // `carried` is the end of the text read so far, too short to hold a whole marker.
        const marker = 'event: reading';
        let events = 0;
        let carried = '';
        const done = () => {
          const hours = chunks.join('').match(/"ts":"[^"]+"/g) ?? [];
          resolve({ events, distinct: new Set(hours).size });
        };
        let timer = setTimeout(done, quiet);
        socket.on('data', (data: Buffer) => {
          const chunk = data.toString();
          chunks.push(chunk);
          const text = carried + chunk;
          events += text.split(marker).length - 1;
          carried = text.slice(-(marker.length - 1));
          clearTimeout(timer);
          if (events >= expected) done();
          else timer = setTimeout(done, quiet);
        });
        socket.on('close', () => {
          clearTimeout(timer);
          done();
        });
        socket.resume();
      });
    return { socket, closed: () => closed, readAll };
  }

  /** About 6 MB of events in one write: more than the kernel buffers of a loopback connection. */
  async function writeManyReadings(store: Store): Promise<number> {
    const ts = freshHour();
    hourCounter += 1001;
    const rows = Array.from({ length: 60_000 }, (_, i) => computed('PL', ts + i * 60, 500));
    await store.upsertReadings(rows);
    return rows.length;
  }

  it('gives a client that pauses every event once it reads again, without buffering for it', async () => {
    // On the suite's server (the write reaches it in any case), once the streams of the tests
    // before have closed.
    const streams = () => server.app.streamStats();
    await until('no stream open', () => streams().open === 0, streams);
    const paused = await pausedStream(server);
    const written = await writeManyReadings(writer);
    // Once the kernel's buffers and maxUnsentBytes are full, the server stops sending it live
    // changes (one write of 6 MB is cut into chunks): it is sent the rest as it reads.
    await until('the paused client is held back', () => streams().replaying === 1, streams);
    expect(paused.closed()).toBe(false);
    expect(streams().open).toBe(1);
    // Every event once: the part of the write sent live is not sent again.
    expect(await paused.readAll(written)).toEqual({ events: written, distinct: written });
    paused.socket.destroy();
  }, 300_000);

  it('lets a client that stopped reading go', async () => {
    // On a store of its own, empty: its 6 MB write would otherwise reach the suite's server and
    // every later one too, for nothing.
    const own = await openDatabase(backend);
    ownDatabases.push(own);
    const tight = await another(
      {},
      {
        streams: { maxUnsentBytes: 16 * 1024, heartbeatMs: 500 },
        connections: { idleTimeout: 1500 },
      },
      own.url,
    );
    const paused = await pausedStream(tight);
    const written = await writeManyReadings(tight.store);
    // Its socket takes nothing for a whole heartbeat interval while bytes wait: the server lets
    // go. The client sees it once it reads what the kernel buffers still hold.
    const streams = () => tight.app.streamStats();
    await until('the server lets the paused client go', () => streams().open === 0, streams);
    expect((await paused.readAll()).events).toBeLessThan(written);
    expect(paused.closed()).toBe(true);
    // The server still serves.
    expect((await fetch(`${tight.url}/v1/health`)).status).toBe(200);
  }, 300_000);

  it('sends every change when the reading cache reloads instead of applying them', async () => {
    // A cache that reloads past 10 changes: the stream reads what it missed from the store.
    const store = await createStore(database.url);
    const reloading = new ReadingCache(store, undefined, { maxChanges: 10, pollMs: 100 });
    await reloading.refresh();
    const app = await buildApp({
      config: loadConfig({ DATABASE_URL: database.url, RATE_LIMIT_PER_MINUTE: '1000000' }),
      store,
      cache: reloading,
    });
    reloading.start();
    try {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as { port: number };
      const client = await EventStreamClient.open(`http://127.0.0.1:${port}/v1/stream?zones=DE`);
      open.push(client);
      await client.until('opened', () => client.retries.length > 0);
      const ts = freshHour();
      hourCounter += 50;
      const rows = Array.from({ length: 50 }, (_, i) => computed('DE', ts + i * H, 10 + i));
      await writer.upsertReadings(rows);
      await client.untilEvents(rows.length);
      // One write: the store's order within it is free.
      const byTs = (a: Reading, b: Reading) => a.ts.localeCompare(b.ts);
      expect(client.readings<Reading>().sort(byTs)).toEqual(rows.map(asEvent));
      expect(client.lastEventId).toBe(String(await writer.dataVersion()));
      client.close();
    } finally {
      await app.close();
      await reloading.stop();
      await store.close();
    }
  });

  it('ends open streams when the server closes, without waiting for them', async () => {
    const closing = await serve(database.url, {}, { cache });
    const client = await stream('/v1/stream', {}, closing);
    await client.until('opened', () => client.retries.length > 0);
    // A close that waited for the stream would never end: its heartbeats keep it open.
    await closing.close();
    await client.until('ended', () => client.ended);
  });

  it('is listed in the index and described by the OpenAPI document', async () => {
    const index = (await api.get('/v1')).json as { other_endpoints: Record<string, string> };
    expect(index.other_endpoints.stream).toContain('/v1/stream');
    const document = await new ApiClient(server.url).loadOpenApi();
    const operation = (document.paths as Record<string, { get: Record<string, unknown> }>)[
      '/v1/stream'
    ]!.get;
    expect(operation.operationId).toBe('streamReadings');
  });
});

describe.runIf(postgres)('GET /v1/stream on two instances of one PostgreSQL store', () => {
  let database: Awaited<ReturnType<typeof openDatabase>>;
  const servers: RunningServer[] = [];
  const clients: EventStreamClient[] = [];

  beforeAll(async () => {
    database = await openDatabase('postgres');
    const store = await createStore(database.url);
    await fillFixedStoreWithBacktest(store);
    await store.close();
    for (let i = 0; i < 2; i++) servers.push(await serve(database.url, {}, { cache: 'ready' }));
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    for (const server of servers) await server.close();
    await database?.drop();
  });

  it("sends a reading written through one instance's store to the streams of both", async () => {
    for (const server of servers) {
      for (const path of ['/v1/stream?zones=DE', '/v1/stream']) {
        const client = await EventStreamClient.open(`${server.url}${path}`);
        clients.push(client);
        await client.until('opened', () => client.retries.length > 0);
      }
    }
    const delays: number[] = [];
    for (let round = 0; round < 5; round++) {
      const reading = computed('DE', FUTURE + (100_000 + round) * H, 250 + round);
      const written = Date.now();
      await servers[0]!.store.upsertReadings([reading]);
      for (const client of clients) {
        await client.untilEvents(round + 1, 10_000);
        const event = client.events[round]!;
        expect(JSON.parse(event.data)).toEqual(asEvent(reading));
        delays.push(event.receivedAt - written);
      }
    }
    const ids = new Set(clients.map((client) => client.lastEventId));
    expect(ids.size).toBe(1);
    delays.sort((a, b) => a - b);
    console.info(
      `stream delay across 2 instances on PostgreSQL: median ${delays[delays.length >> 1]} ms, ` +
        `max ${delays.at(-1)} ms over ${delays.length} deliveries`,
    );
    expect(delays.at(-1)).toBeLessThan(10_000);
  });
});
