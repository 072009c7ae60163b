import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.js';
import { CATEGORIES } from '../src/core/factors.js';
import type { StoredReading } from '../src/core/reading.js';
import { ZONES } from '../src/core/zones.js';
import { startServer, type RunningServer } from '../src/server.js';
import { createStore } from '../src/storage/create-store.js';
import { ApiClient } from './support/api-client.js';
import { fillFixedStoreWithBacktest } from './support/fixed-backtest.js';
import { FR_FIRST, H, HOUR_NOW, iso, NOW, NOW_S } from './support/fixed-store.js';
import { createThrowawayDatabase, isPostgresAvailable } from './support/postgres.js';

/**
 * Black-box suite of `GET /v1/export` (extensions §6) over real HTTP, on SQLite and PostgreSQL,
 * from memory and from the store: every row equals the `/v1/intensity` pages of the same window
 * (followed through their Link headers), on every basis and in both formats; the mix columns
 * equal `/v1/mix`; the window limit, the errors, the rate limit (once per export) and the cap on
 * concurrent exports per IP.
 */

// Each server forks a forecast worker: from the build, not through tsx.
vi.mock('node:child_process', async (original) =>
  (await import('./support/built-workers.js')).forkingBuiltModules(await original()),
);

const postgres = await isPostgresAvailable('export suite (PostgreSQL)');
const backends: ('sqlite' | 'postgres')[] = [
  'sqlite',
  ...(postgres ? (['postgres'] as const) : []),
];
const cases = backends.flatMap((backend) =>
  (['ready', 'off'] as const).map((cache) => ({ backend, cache })),
);

const DAY = 24 * H;
/** The window every comparison uses: the fixed store's data and the bulk below, 399 days. */
const FROM = HOUR_NOW - 399 * DAY;
const TO = NOW_S;

// Bulk: 30 more zones, 2000 hours each with a mix of eight fuels, so that an NDJSON export with
// its mix (~14 MB) outlasts what the kernel buffers of a client that does not read.
const FIXED_ZONES = new Set(['DE', 'FR', 'US', 'GB', 'IE']);
const BULK_ZONES = ZONES.map((zone) => zone.code)
  .filter((code) => !FIXED_ZONES.has(code))
  .slice(0, 30);
const BULK_HOURS = 2000;
const BULK_FIRST = HOUR_NOW - 390 * DAY;
const tenth = (seed: number) => Math.round(((seed * 7919) % 99_991) / 7) / 10;
const bulkRow = (zone: string, zoneIndex: number, hour: number): StoredReading => {
  const value = 100 + tenth(zoneIndex * 1000 + hour) / 10;
  return {
    zone,
    ts: BULK_FIRST + hour * H,
    value,
    method: 'computed:v1',
    complete: true,
    mix: {
      coal: tenth(hour + 1),
      gas: tenth(hour + 2),
      oil: tenth(hour + 3),
      biomass: tenth(hour + 4),
      hydro: tenth(hour + 5),
      nuclear: tenth(hour + 6),
      solar: hour % 24 < 6 ? 0 : tenth(hour + 7),
      'wind-onshore': tenth(hour + 8),
    },
    lifecycle: value,
    direct: value / 2,
  };
};
const BULK: StoredReading[] = BULK_ZONES.flatMap((zone, zoneIndex) =>
  Array.from({ length: BULK_HOURS }, (_, hour) => bulkRow(zone, zoneIndex, hour)),
);

const MIX_COLUMNS = CATEGORIES.map((category) => category.replaceAll('-', '_'));

interface Row {
  zone: string;
  ts: string;
  gco2eq_kwh: number;
  method: string;
}
interface History {
  data: { ts: string; gco2eq_kwh: number; method: string }[];
}
interface MixBody {
  data: { ts: string; generation: Record<string, number> }[];
}

/**
 * `expect(actual).toEqual(expected)` for the 80,000 rows of a whole export: vitest's comparison
 * (24 of them, a tenth of the suite's CPU in a profile) runs only when node's, stricter and many
 * times faster, finds a difference; it then decides, and shows the difference.
 */
function expectRowsEqual(actual: readonly Row[], expected: readonly Row[]): void {
  if (!isDeepStrictEqual(actual, expected)) expect(actual).toEqual(expected);
}

/** The rows of a CSV export: header checked by the caller, values as numbers. */
function parseCsv(text: string): { header: string[]; rows: string[][] } {
  expect(text.endsWith('\n')).toBe(true);
  const [header, ...rows] = text.slice(0, -1).split('\n');
  return { header: header!.split(','), rows: rows.map((line) => line.split(',')) };
}

const csvRow = (cells: string[]): Row => ({
  zone: cells[0]!,
  ts: cells[1]!,
  gco2eq_kwh: Number(cells[2]),
  method: cells[3]!,
});

async function openDatabase(backend: 'sqlite' | 'postgres') {
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'gridco2-export-'));
    return {
      url: `sqlite:${join(dir, 'export.db')}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const database = await createThrowawayDatabase();
  return { url: database.url, drop: () => database.drop() };
}

type Database = Awaited<ReturnType<typeof openDatabase>>;

/** The fixed store and the bulk in a new database of `backend`. */
async function openFilledDatabase(backend: 'sqlite' | 'postgres'): Promise<Database> {
  const database = await openDatabase(backend);
  const store = await createStore(database.url);
  await fillFixedStoreWithBacktest(store);
  for (let start = 0; start < BULK.length; start += 10_000) {
    await store.upsertReadings(BULK.slice(start, start + 10_000));
  }
  await store.close();
  return database;
}

/**
 * One filled database per backend, for the cases with and without the reading cache: the suite
 * only reads it (each case's servers read it their own way), so it is written once.
 */
const filled = new Map<'sqlite' | 'postgres', Promise<Database>>();
const filledDatabase = (backend: 'sqlite' | 'postgres') => {
  const database = filled.get(backend) ?? openFilledDatabase(backend);
  filled.set(backend, database);
  return database;
};
afterAll(async () => {
  for (const database of filled.values()) await (await database).drop();
});

describe.each(cases)('GET /v1/export on $backend, reading cache $cache', ({ backend, cache }) => {
  let database: Database;
  let server: RunningServer;
  let api: ApiClient;
  let ipCount = 0;
  const freshIp = () => `10.8.${(++ipCount >> 8) & 255}.${ipCount & 255}`;

  const serve = (env: Record<string, string> = {}) =>
    startServer(
      loadConfig({
        PORT: '0',
        DATABASE_URL: database.url,
        INGEST: 'off',
        LOG_LEVEL: 'silent',
        RATE_LIMIT_PER_MINUTE: '1000000',
        TRUST_PROXY: '127.0.0.1',
        ...env,
      }),
      { clock: () => NOW, cache },
    );
  const download = (path: string, ip = freshIp(), on: RunningServer = server) =>
    fetch(`${on.url}${path}`, { headers: { 'x-forwarded-for': ip } });

  beforeAll(async () => {
    database = await filledDatabase(backend);
    server = await serve();
    api = new ApiClient(server.url);
    await api.loadOpenApi();
  });
  afterAll(async () => {
    await server?.close();
  });

  /** Every row /v1/intensity gives for a zone and window, following its Link headers. */
  async function intensityPages(zone: string, query: string): Promise<Row[]> {
    const rows: Row[] = [];
    let path: string | undefined = `/v1/intensity?zone=${zone}${query}`;
    while (path) {
      const response = await api.get(path);
      expect(response.status, path).toBe(200);
      for (const point of (response.json as History).data) rows.push({ zone, ...point });
      path = /^<([^>]+)>; rel="next"$/.exec(response.headers.get('link') ?? '')?.[1];
    }
    return rows;
  }

  it.each([undefined, 'lifecycle', 'direct'])(
    'gives, on basis %s, exactly the rows of the /v1/intensity pages of the same window',
    async (basis) => {
      const query = `&from=${iso(FROM)}&to=${iso(TO)}${basis ? `&basis=${basis}` : ''}`;
      const response = await download(`/v1/export?zones=all${query}`);
      expect(response.status).toBe(200);
      const csv = parseCsv(await response.text());
      expect(csv.header).toEqual(['zone', 'ts', 'gco2eq_kwh', 'method']);
      const exported = csv.rows.map(csvRow);

      const paged: Row[] = [];
      for (const zone of ZONES) paged.push(...(await intensityPages(zone.code, query)));
      // More than the 5000-point cap of one page: FR alone has 6000.
      expect(paged.length).toBeGreaterThan(BULK.length + 6000);
      expectRowsEqual(exported, paged);

      const ndjson = await (await download(`/v1/export?zones=all${query}&format=ndjson`)).text();
      const lines = ndjson.slice(0, -1).split('\n');
      expectRowsEqual(
        lines.map((line) => JSON.parse(line) as Row),
        paged,
      );
      expect(Object.keys(JSON.parse(lines[0]!) as object)).toEqual([
        'zone',
        'ts',
        'gco2eq_kwh',
        'method',
      ]);
    },
  );

  it('sends a CSV attachment, streamed in chunks, with open CORS and max-age=600', async () => {
    const response = await download(`/v1/export?zones=de,FR&from=${iso(FR_FIRST)}&to=${iso(TO)}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="gridco2-DE_FR-${iso(FR_FIRST).replaceAll(/[-:]/g, '')}-` +
        `${iso(TO).replaceAll(/[-:]/g, '')}.csv"`,
    );
    expect(response.headers.get('cache-control')).toBe('max-age=600');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-expose-headers')).toMatch(/Content-Disposition/);
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    expect(response.headers.get('content-length')).toBeNull();
    expect(response.headers.get('etag')).toBeNull();
    const { rows } = parseCsv(await response.text());
    // Ordered by zone as /v1/zones (DE before FR), then by ts.
    const zones = rows.map((row) => row[0]);
    expect(zones.indexOf('FR')).toBeGreaterThan(zones.lastIndexOf('DE'));
    const frTimes = rows.filter((row) => row[0] === 'FR').map((row) => row[1]!);
    expect(frTimes).toHaveLength(6000);
    expect([...frTimes].sort()).toEqual(frTimes);
  });

  it('defaults to the 24 hours before the request, like /v1/intensity', async () => {
    const response = await download('/v1/export?zones=DE,GB&format=ndjson');
    expect(response.headers.get('content-type')).toBe('application/x-ndjson');
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="gridco2-DE_GB-${iso(TO - DAY).replaceAll(/[-:]/g, '')}-` +
        `${iso(TO).replaceAll(/[-:]/g, '')}.ndjson"`,
    );
    const lines = (await response.text()).slice(0, -1).split('\n');
    const expected = [...(await intensityPages('DE', '')), ...(await intensityPages('GB', ''))];
    expect(lines.map((line) => JSON.parse(line) as Row)).toEqual(expected);
    // GB's newest half-hour is the operator's forecast, as /v1/intensity shows it.
    expect(expected.at(-1)!.method).toBe('upstream:uk-operator:forecast');
  });

  it('adds one column per category with include=mix, as /v1/mix gives them', async () => {
    const zones = ['DE', BULK_ZONES[0]!, 'GB'];
    const window = `&from=${iso(BULK_FIRST)}&to=${iso(TO)}`;
    const response = await download(`/v1/export?zones=${zones.join(',')}${window}&include=mix`);
    const { header, rows } = parseCsv(await response.text());
    expect(header).toEqual(['zone', 'ts', 'gco2eq_kwh', 'method', ...MIX_COLUMNS]);
    for (const zone of zones) {
      const mixes = new Map<string, Record<string, number>>();
      let path: string | undefined = `/v1/mix?zone=${zone}${window}`;
      while (path) {
        const page = await api.get(path);
        for (const point of (page.json as MixBody).data) mixes.set(point.ts, point.generation);
        path = /^<([^>]+)>; rel="next"$/.exec(page.headers.get('link') ?? '')?.[1];
      }
      const ofZone = rows.filter((row) => row[0] === zone);
      expect(ofZone.length, zone).toBeGreaterThan(0);
      for (const row of ofZone) {
        const generation = mixes.get(row[1]!) ?? {};
        // Empty where the interval has no value for a category (GB's operator figures: all).
        expect(row.slice(4), `${zone} ${row[1]}`).toEqual(
          MIX_COLUMNS.map((column) =>
            generation[column] === undefined ? '' : String(generation[column]),
          ),
        );
      }
      if (zone === 'GB') expect(mixes.size).toBe(0);
      else expect(mixes.size).toBe(ofZone.length);
    }
    const ndjson = await (
      await download(`/v1/export?zones=${BULK_ZONES[0]},GB${window}&include=mix&format=ndjson`)
    ).text();
    const lines = ndjson
      .slice(0, -1)
      .split('\n')
      .map((line) => JSON.parse(line) as Row & { generation: Record<string, number> | null });
    expect(lines[0]!.generation).toEqual({
      coal: tenth(1),
      gas: tenth(2),
      oil: tenth(3),
      biomass: tenth(4),
      hydro: tenth(5),
      nuclear: tenth(6),
      solar: 0,
      wind_onshore: tenth(8),
    });
    expect(lines.at(-1)).toMatchObject({ zone: 'GB', generation: null });
  });

  it('takes a window of 400 days at most', async () => {
    const from = Date.UTC(2001, 0, 1) / 1000;
    const longest = await download(
      `/v1/export?zones=all&from=${iso(from)}&to=${iso(from + 400 * DAY)}`,
    );
    expect(longest.status).toBe(200);
    expect(await longest.text()).toBe('zone,ts,gco2eq_kwh,method\n');
    const tooLong = await api.get(
      `/v1/export?zones=DE&from=${iso(from)}&to=${iso(from + 400 * DAY + 1)}`,
    );
    expect(tooLong.status).toBe(400);
    expect(tooLong.json).toEqual({
      error: 'invalid window: an export covers at most 400 days',
      hint: 'split it into requests of at most 400 days, e.g. one per year',
    });
  });

  it.each([
    ['/v1/export', 400, 'missing required param: zones'],
    ['/v1/export?zones=', 400, 'missing required param: zones'],
    ['/v1/export?zones=DE,,FR', 400, 'invalid param: zones'],
    ['/v1/export?zones=all,DE', 400, 'invalid param: zones'],
    ['/v1/export?zones=DE&zones=FR', 400, 'invalid param: zones'],
    ['/v1/export?zones=DE,XX', 404, 'unknown or empty zone: XX'],
    ['/v1/export?zones=DE&from=junk', 400, 'invalid param: from'],
    [
      '/v1/export?zones=DE&from=2026-11-21&to=2026-11-20',
      400,
      'invalid window: from must be before to',
    ],
    ['/v1/export?zones=DE&format=xml', 400, 'invalid param: format'],
    ['/v1/export?zones=DE&format=csv&format=csv', 400, 'invalid param: format'],
    ['/v1/export?zones=DE&basis=operator', 400, 'invalid param: basis'],
    ['/v1/export?zones=DE&include=generation', 400, 'invalid param: include'],
  ])('%s -> %i %s', async (path, status, error) => {
    const response = await api.get(path, { 'x-forwarded-for': freshIp() });
    expect(response.status).toBe(status);
    expect((response.json as { error: string }).error).toBe(error);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('ignores unknown parameters, and answers HEAD with the headers only', async () => {
    const path = `/v1/export?zones=DE&from=${iso(FROM)}&to=${iso(TO)}`;
    const plain = await (await download(path)).text();
    expect(await (await download(`${path}&x=1&zone=FR`)).text()).toBe(plain);
    const head = await fetch(`${server.url}${path}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    expect(await head.text()).toBe('');
    const post = await api.request(path, { method: 'POST' });
    expect(post.status).toBe(405);
  });

  it('counts one export once against the rate limit, however many rows it streams', async () => {
    const limited = await serve({ RATE_LIMIT_PER_MINUTE: '3' });
    try {
      const ip = freshIp();
      const path = `/v1/export?zones=all&from=${iso(FROM)}&to=${iso(TO)}`;
      for (const remaining of ['2', '1', '0']) {
        const response = await download(path, ip, limited);
        expect(response.status).toBe(200);
        expect(response.headers.get('ratelimit-remaining')).toBe(remaining);
        expect((await response.text()).length).toBeGreaterThan(1_000_000);
      }
      const refused = await download(path, ip, limited);
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { error: string }).error).toBe('rate limit exceeded');
    } finally {
      await limited.close();
    }
  });

  it('runs at most 2 exports at a time per IP (429 beyond), and frees the place when one ends', async () => {
    const ip = freshIp();
    const path = `/v1/export?zones=all&from=${iso(FROM)}&to=${iso(TO)}&format=ndjson&include=mix`;
    /** An export whose client reads the status line, then stops reading. */
    const stalled = async (): Promise<Socket> => {
      const { hostname, port } = new URL(server.url);
      const socket = connect({ host: hostname, port: Number(port) });
      socket.on('error', () => undefined);
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: ${ip}\r\n\r\n`);
      const first = await new Promise<Buffer>((resolve) => socket.once('data', resolve));
      expect(first.toString()).toMatch(/^HTTP\/1\.1 200 /);
      socket.pause();
      return socket;
    };
    const two = [await stalled(), await stalled()];
    const third = await api.get(path, { 'x-forwarded-for': ip });
    expect(third.status).toBe(429);
    expect(third.json).toEqual({
      error: 'too many exports under way',
      hint: 'at most 2 exports at a time per IP; retry when one has finished',
    });
    expect(third.headers.get('retry-after')).toBe('5');
    // Another IP is not held back.
    const other = await download(`/v1/export?zones=DE&from=${iso(FROM)}&to=${iso(TO)}`);
    expect(other.status).toBe(200);
    await other.text();
    two[0]!.destroy();
    const deadline = Date.now() + 5000;
    let again = await download(`/v1/export?zones=DE`, ip);
    while (again.status !== 200 && Date.now() < deadline) {
      await again.text();
      await new Promise((resolve) => setTimeout(resolve, 50));
      again = await download(`/v1/export?zones=DE`, ip);
    }
    expect(again.status).toBe(200);
    await again.text();
    two[1]!.destroy();
  });

  it('is listed in the index and described by the OpenAPI document', async () => {
    const index = (await api.get('/v1')).json as { other_endpoints: Record<string, string> };
    expect(index.other_endpoints.export).toContain('/v1/export');
    const document = await new ApiClient(server.url).loadOpenApi();
    const operation = (
      document.paths as Record<string, { get: { operationId: string; responses: object } }>
    )['/v1/export']!.get;
    expect(operation.operationId).toBe('exportReadings');
    expect(Object.keys(operation.responses)).toEqual(
      expect.arrayContaining(['200', '400', '404', '429', '503']),
    );
  });
});
