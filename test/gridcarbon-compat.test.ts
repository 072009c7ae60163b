import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startServer, type RunningServer } from '../src/server.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { EventStreamClient } from './support/event-stream.js';
import { fillFixedStore, gb, GB_LAST_ACTUAL, iso } from './support/fixed-store.js';
import { NOW } from './support/fixed-store.js';

/**
 * `/compat/gridcarbon/v1` (extensions §14) over real HTTP: every /v1 route answers under the
 * prefix with the replaced service's source and method names, and is otherwise /v1's answer:
 * same status and headers, a body without those names byte for byte the same, links and paths
 * within the prefix. Run with the reading cache off (Fastify answers) and ready (the fast path
 * answers the data endpoints). The expected renaming is written out here, not taken from the code.
 */

const PREFIX = '/compat/gridcarbon';
const OLD_NAMES: Readonly<Record<string, string>> = {
  'europe-tso': 'entsoe',
  'us-agency': 'eia',
  'uk-operator': 'uk-neso',
  'upstream:uk-operator:actual': 'upstream:uk-neso:actual',
  'upstream:uk-operator:forecast': 'upstream:uk-neso:forecast',
};
const NEW_NAMES = new Set(Object.keys(OLD_NAMES));

/** What a /v1 JSON value becomes under the prefix: names exactly renamed, `/v1` paths moved. */
function underPrefix(value: unknown): unknown {
  if (typeof value === 'string') {
    return OLD_NAMES[value] ?? value.replace(/(^|\s)\/v1(?=$|[/?\s])/g, `$1${PREFIX}/v1`);
  }
  if (Array.isArray(value)) return value.map(underPrefix);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, member]) => [underPrefix(key), underPrefix(member)]),
    );
  }
  return value;
}

/** Every string of a JSON value, keys included. */
function stringsOf(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const member of value) stringsOf(member, into);
  else if (value !== null && typeof value === 'object') {
    for (const [key, member] of Object.entries(value)) {
      into.push(key);
      stringsOf(member, into);
    }
  }
  return into;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

const dir = mkdtempSync(join(tmpdir(), 'gridco2-gridcarbon-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The /v1 routes, each with a query that gives a body (errors below). */
const ROUTES = [
  '',
  '/health',
  '/status',
  '/zones',
  '/zones/cloud',
  '/intensity/latest',
  '/intensity/latest?zone=GB',
  '/intensity/latest?zone=de',
  '/intensity?zone=GB',
  '/intensity?zone=DE',
  '/intensity?zone=GB&basis=lifecycle',
  '/mix?zone=DE',
  '/factors',
  '/intensity/forecast?zone=GB',
  '/intensity/forecast?zone=DE',
  '/intensity/forecast/skill',
  '/schedule?zones=DE,GB',
  '/openapi.json',
];

/** The contract's errors, as /v1 answers them. */
const ERRORS = [
  '/intensity',
  '/intensity?zone=',
  '/intensity/latest?zone=ZZ',
  '/intensity?zone=XX',
  '/intensity?zone=DE&from=yesterday',
  '/intensity?zone=DE&from=2026-11-21&to=2026-11-20',
  '/intensity?zone=DE&zone=FR',
  '/intensity/latest?basis=operator',
  '/mix?zone=GB&zone=DE',
  '/export?zones=DE&format=xml',
  '/stream?zones=XX',
  '/schedule',
  '/nope',
  '/intensity/latest/extra',
  '/intensity?zone=%ZZ',
  '/%E0%A4%A',
];

describe.each(['off', 'ready'] as const)('with the reading cache %s', (cache) => {
  let server: RunningServer;
  let file: string;

  beforeAll(async () => {
    file = join(dir, `gridcarbon-${cache}.db`);
    const store = new SqliteStore(file);
    await fillFixedStore(store);
    await store.close();
    const config = loadConfig({
      PORT: '0',
      DATABASE_URL: `sqlite:${file}`,
      LOG_LEVEL: 'silent',
      INGEST: 'off',
      DASHBOARD: 'off',
      RATE_LIMIT_PER_MINUTE: '1000000',
      TRUST_PROXY: '127.0.0.1',
    });
    server = await startServer(config, { clock: () => NOW, cache, streams: { pollMs: 200 } });
  });
  afterAll(async () => {
    await server?.close();
  });

  const get = async (
    path: string,
    headers: Record<string, string> = {},
    method = 'GET',
  ): Promise<Answer> => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { 'accept-encoding': 'identity', ...headers },
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
  const both = async (path: string, headers: Record<string, string> = {}, method = 'GET') => ({
    v1: await get(`/v1${path}`, headers, method),
    compat: await get(`${PREFIX}/v1${path}`, headers, method),
  });

  /** The compat answer is /v1's under the prefix: status, headers, body. */
  function expectRenamed({ v1, compat }: { v1: Answer; compat: Answer }) {
    expect(compat.status).toBe(v1.status);
    for (const name of [
      'content-type',
      'cache-control',
      'etag',
      'access-control-allow-origin',
      'access-control-expose-headers',
      'ratelimit-limit',
      'retry-after',
      'allow',
      'vary',
      'content-disposition',
    ]) {
      expect(compat.headers.get(name), name).toBe(v1.headers.get(name));
    }
    expect(Number(compat.headers.get('content-length'))).toBe(Buffer.byteLength(compat.text));
    const v1Body: unknown = JSON.parse(v1.text);
    const compatBody: unknown = JSON.parse(compat.text);
    expect(compatBody).toEqual(underPrefix(v1Body));
    // Nothing of our names is left as a value or a key.
    expect(stringsOf(compatBody).filter((text) => NEW_NAMES.has(text))).toEqual([]);
    if (stringsOf(v1Body).every((text) => !NEW_NAMES.has(text) && !/(^|\s)\/v1/.test(text))) {
      expect(compat.text).toBe(v1.text);
    }
  }

  it.each(ROUTES)('GET %s answers under the prefix, renamed', async (path) => {
    const answers = await both(path);
    expect(answers.v1.status).toBeLessThan(500);
    expectRenamed(answers);
  });

  it.each(ERRORS)('the error of %s is /v1 error under the prefix', async (path) => {
    const answers = await both(path);
    expect(answers.v1.status).toBeGreaterThanOrEqual(400);
    expectRenamed(answers);
  });

  it('names sources and methods as the replaced service did', async () => {
    const zones = JSON.parse((await get(`${PREFIX}/v1/zones`)).text) as {
      data: { zone: string; source: string }[];
    };
    const count = (source: string) => zones.data.filter((zone) => zone.source === source).length;
    expect([count('entsoe'), count('eia'), count('uk-neso')]).toEqual([33, 11, 1]);
    expect(zones.data.find((zone) => zone.zone === 'GB')?.source).toBe('uk-neso');

    const gbLatest = JSON.parse((await get(`${PREFIX}/v1/intensity/latest?zone=GB`)).text) as {
      data: { method: string }[];
    };
    expect(gbLatest.data[0]?.method).toBe('upstream:uk-neso:forecast');
    const gbHistory = JSON.parse((await get(`${PREFIX}/v1/intensity?zone=GB`)).text) as {
      data: { method: string }[];
    };
    expect(new Set(gbHistory.data.map((reading) => reading.method))).toEqual(
      new Set(['upstream:uk-neso:actual', 'upstream:uk-neso:forecast']),
    );
    const de = JSON.parse((await get(`${PREFIX}/v1/intensity/latest?zone=DE`)).text) as {
      data: { method: string }[];
    };
    expect(de.data[0]?.method).toBe('computed:v1');

    const status = JSON.parse((await get(`${PREFIX}/v1/status`)).text) as {
      sources: { source: string }[];
    };
    expect(status.sources.map((source) => source.source)).toEqual(['entsoe', 'eia', 'uk-neso']);
    const factors = JSON.parse((await get(`${PREFIX}/v1/factors`)).text) as {
      mappings: Record<string, unknown>;
    };
    expect(Object.keys(factors.mappings)).toEqual(['entsoe', 'eia', 'uk-neso']);
  });

  it('points its index, hints and OpenAPI paths within the prefix', async () => {
    const index = JSON.parse((await get(`${PREFIX}/v1`)).text) as {
      endpoints: Record<string, string>;
      openapi: string;
    };
    expect(index.endpoints.health).toMatch(/^GET \/compat\/gridcarbon\/v1\/health: /);
    expect(index.openapi).toBe('/compat/gridcarbon/v1/openapi.json');
    const missing = JSON.parse((await get(`${PREFIX}/v1/nope?x=1`)).text) as unknown;
    expect(missing).toEqual({
      error: 'not found: /compat/gridcarbon/v1/nope',
      hint: 'see /compat/gridcarbon/v1 for the endpoints',
    });
    const openapi = JSON.parse((await get(`${PREFIX}/v1/openapi.json`)).text) as {
      paths: Record<string, unknown>;
    };
    const paths = Object.keys(openapi.paths);
    expect(paths).toContain('/compat/gridcarbon/v1/intensity/latest');
    expect(paths.filter((path) => !path.startsWith('/compat/gridcarbon/v1'))).toEqual([]);
    expect(JSON.stringify(openapi)).toContain('"uk-neso"');
  });

  it('pages a truncated history with a Link within the prefix, in the names the client sent', async () => {
    const first = await get(`${PREFIX}/v1/intensity?zone=FR&from=2026-01-01&to=2026-11-21`);
    const v1 = await get('/v1/intensity?zone=FR&from=2026-01-01&to=2026-11-21');
    expect(first.text).toBe(v1.text);
    const body = JSON.parse(first.text) as { truncated: boolean; note: string };
    expect(body.truncated).toBe(true);
    const link = first.headers.get('link') ?? '';
    expect(link).toBe(v1.headers.get('link')?.replace('</v1/', `<${PREFIX}/v1/`));
    expect(link).toMatch(/^<\/compat\/gridcarbon\/v1\/intensity\?zone=FR&from=[^>]+>; rel="next"$/);
    const next = await get(/<([^>]+)>/.exec(link)![1]!);
    expect(next.status).toBe(200);
    expect((JSON.parse(next.text) as { count: number }).count).toBeGreaterThan(0);

    // An old source name in the query is given to /v1 as ours, and echoed back as sent.
    const named = await get(
      `${PREFIX}/v1/intensity?zone=FR&from=2026-01-01&to=2026-11-21&source=eia`,
    );
    expect(named.headers.get('link')).toMatch(/&source=eia>/);
  });

  it('answers HEAD with the renamed length and no body, 304 on its ETag, CORS and 405 as /v1', async () => {
    const got = await get(`${PREFIX}/v1/intensity/latest?zone=GB`);
    const head = await new Promise<{ status: number; length: string | undefined; body: string }>(
      (resolve, reject) => {
        httpRequest(
          `${server.url}${PREFIX}/v1/intensity/latest?zone=GB`,
          { method: 'HEAD', agent: false },
          (response) => {
            let body = '';
            response.on('data', (chunk: Buffer) => (body += chunk.toString()));
            response.on('end', () =>
              resolve({
                status: response.statusCode ?? 0,
                length: response.headers['content-length'],
                body,
              }),
            );
          },
        )
          .on('error', reject)
          .end();
      },
    );
    expect(head).toEqual({ status: 200, length: String(Buffer.byteLength(got.text)), body: '' });

    const etag = got.headers.get('etag')!;
    const cached = await get(`${PREFIX}/v1/intensity/latest?zone=GB`, { 'if-none-match': etag });
    expect(cached.status).toBe(304);
    expect(cached.text).toBe('');

    // A HEAD of a long response stays a HEAD: its headers, and no stream opened.
    for (const path of ['/export?zones=DE,GB', '/stream?zones=GB']) {
      const heads = await both(path, {}, 'HEAD');
      expect(heads.compat.status).toBe(200);
      expect(heads.compat.text).toBe('');
      for (const name of ['content-type', 'cache-control', 'content-disposition']) {
        expect(heads.compat.headers.get(name)).toBe(heads.v1.headers.get(name));
      }
    }

    expectRenamedHeadersOnly(await both('/zones', {}, 'OPTIONS'));
    const post = await both('/zones', {}, 'POST');
    expect(post.compat.status).toBe(405);
    expectRenamed(post);
  });

  function expectRenamedHeadersOnly({ v1, compat }: { v1: Answer; compat: Answer }) {
    expect(compat.status).toBe(v1.status);
    for (const name of ['access-control-allow-origin', 'access-control-allow-methods']) {
      expect(compat.headers.get(name)).toBe(v1.headers.get(name));
    }
    expect(compat.text).toBe(v1.text);
  }

  it('renames a compressed body and compresses it again', async () => {
    const gzip = await fetch(`${server.url}${PREFIX}/v1/intensity?zone=GB`, {
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(gzip.headers.get('content-encoding')).toBe('gzip');
    const raw = Buffer.from(await gzip.arrayBuffer());
    // fetch decodes gzip itself; the length sent is the compressed one.
    const identity = await get(`${PREFIX}/v1/intensity?zone=GB`);
    expect(raw.toString('utf8')).toBe(identity.text);
    expect(identity.text).toContain('"upstream:uk-neso:actual"');
    const rawGzip = await new Promise<Buffer>((resolve, reject) => {
      httpRequest(
        `${server.url}${PREFIX}/v1/intensity?zone=GB`,
        { headers: { 'accept-encoding': 'gzip' }, agent: false },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            expect(Number(response.headers['content-length'])).toBe(Buffer.concat(chunks).length);
            resolve(Buffer.concat(chunks));
          });
        },
      )
        .on('error', reject)
        .end();
    });
    expect(gunzipSync(rawGzip).toString('utf8')).toBe(identity.text);
  });

  it('exports CSV and NDJSON with the old method names, other rows as /v1 writes them', async () => {
    const query = '/export?zones=DE,GB&from=2026-11-20T12:00:00Z&to=2026-11-21T13:00:00Z';
    const csv = await both(query);
    expect(csv.compat.status).toBe(200);
    expect(csv.compat.headers.get('content-disposition')).toBe(
      csv.v1.headers.get('content-disposition'),
    );
    expect(csv.compat.headers.get('content-type')).toBe(csv.v1.headers.get('content-type'));
    const v1Lines = csv.v1.text.split('\n');
    const compatLines = csv.compat.text.split('\n');
    expect(compatLines).toHaveLength(v1Lines.length);
    expect(compatLines.filter((line) => line.startsWith('GB,')).length).toBeGreaterThan(0);
    compatLines.forEach((line, index) => {
      const [zone, ts, value, method] = v1Lines[index]!.split(',');
      const expected =
        zone === 'GB' ? [zone, ts, value, OLD_NAMES[method!]].join(',') : v1Lines[index];
      expect(line).toBe(expected);
    });

    const ndjson = await both(`${query}&format=ndjson`);
    const rows = ndjson.compat.text.trim().split('\n');
    const v1Rows = ndjson.v1.text.trim().split('\n');
    expect(rows.map((row) => JSON.parse(row) as unknown)).toEqual(
      v1Rows.map((row) => underPrefix(JSON.parse(row))),
    );
  });

  it('streams events with the old method names', async () => {
    const client = await EventStreamClient.open(`${server.url}${PREFIX}/v1/stream?zones=GB`);
    try {
      expect(client.status).toBe(200);
      expect(client.headers.get('content-type')).toBe('text/event-stream');
      const writer = new SqliteStore(file);
      const ts = GB_LAST_ACTUAL + 1800;
      await writer.upsertReadings([gb(ts, 123)]);
      await writer.close();
      await client.untilEvents(1);
      expect(JSON.parse(client.events[0]!.data)).toEqual({
        zone: 'GB',
        ts: iso(ts),
        gco2eq_kwh: 123,
        method: 'upstream:uk-neso:actual',
      });
    } finally {
      client.close();
    }
  });
});
