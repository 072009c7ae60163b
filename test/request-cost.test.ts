import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { Ajv } from 'ajv';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.js';
import { bestOf, type EmissionsData } from '../src/http/compat/carbon-aware/bodies.js';
import type { Basis } from '../src/core/factors.js';
import { ZONES } from '../src/core/zones.js';
import type { ForecastBook, ZoneForecast } from '../src/forecast/book.js';
import { buildApp } from '../src/http/app.js';
import { MIX_PAGE_ROWS } from '../src/http/transport/data-responder.js';
import { REQUEST_LIMITS, ROUTE_WEIGHTS } from '../src/http/contract/request-cost.js';
import { createStore } from '../src/storage/create-store.js';
import type { Store } from '../src/storage/store.js';
import { fillFixedStore, FR_FIRST, H, HOUR_NOW, iso, NOW, NOW_S } from './support/fixed-store.js';

/**
 * Every route's most expensive allowed request and its first refused one (issue 21): the status,
 * the peer's error format on the compatibility routes, and a bound on the work (response bytes
 * and the growth of the process's RSS), never on time. The fixed store of the black-box suites,
 * a forecast for every zone, real HTTP.
 */

const EM = '/compat/electricitymaps/v3';
const CA = '/compat/carbon-aware';
const DAY = 24 * H;
const MIB = 1024 * 1024;

/** A 72-hour hourly forecast from now for every zone, or a forecast that throws (a fault). */
class EveryZone implements ForecastBook {
  constructor(private readonly fault = false) {}
  forecast(zone: string, basis: Basis | undefined): ZoneForecast {
    if (this.fault) throw new TypeError('forecast table corrupted');
    const values = Float64Array.from({ length: 73 }, (_, index) => 200 + (index % 7));
    return {
      zone,
      basis: basis ?? 'lifecycle',
      model: 'test@1',
      generatedAt: NOW_S - 600,
      startTs: HOUR_NOW,
      stepSeconds: H,
      values,
      p10: values,
      p90: values,
    };
  }
}

/** Distinct location names that all resolve: the zone codes, then the same in lower case. */
const NAMES = [...ZONES.map((zone) => zone.code), ...ZONES.map((zone) => zone.code.toLowerCase())];
const locations = (count: number) => NAMES.slice(0, count).join(',');
const { carbonAwareLocations, carbonAwareLocationHours } = REQUEST_LIMITS;
/** The most locations a 100-day window may have. */
const LOCATIONS_OVER_100_DAYS = Math.floor(carbonAwareLocationHours / (100 * 24));

let store: Store;
let app: FastifyInstance;
let base: string;
const logs: { msg?: string; err?: { message?: string } }[] = [];

async function start(book: ForecastBook, limit: string): Promise<FastifyInstance> {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const started = await buildApp({
    config: loadConfig({ RATE_LIMIT_PER_MINUTE: limit }),
    store,
    clock: () => NOW,
    forecasts: book,
    logger: pino({ level: 'warn' }, sink),
  });
  await started.listen({ port: 0, host: '127.0.0.1' });
  return started;
}
const urlOf = (server: FastifyInstance) => {
  const address = server.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
};

beforeAll(async () => {
  store = await createStore('sqlite::memory:');
  await fillFixedStore(store);
  app = await start(new EveryZone(), '1000000000');
  base = urlOf(app);
});
afterAll(async () => {
  await app?.close();
  await store?.close();
});

interface Case {
  readonly name: string;
  readonly allowed: string;
  /** The statuses the allowed request may get (a window without data is 204 on the SDK). */
  readonly allowedStatus: readonly number[];
  readonly refused: string;
  readonly refusedStatus: number;
  /** Which front end's error body the refusal is in. */
  readonly format: 'v1' | 'em' | 'ca';
}

const nowIso = iso(NOW_S);
const CASES: Case[] = [
  {
    name: '/v1/intensity/latest',
    allowed: '/v1/intensity/latest',
    allowedStatus: [200],
    refused: '/v1/intensity/latest?basis=market',
    refusedStatus: 400,
    format: 'v1',
  },
  {
    name: '/v1/intensity: a truncated 5000-point page',
    allowed: `/v1/intensity?zone=FR&from=${iso(FR_FIRST)}&to=${iso(HOUR_NOW)}`,
    allowedStatus: [200],
    refused: `/v1/intensity?zone=FR&zone=DE&from=${iso(FR_FIRST)}`,
    refusedStatus: 400,
    format: 'v1',
  },
  {
    name: '/v1/mix',
    allowed: `/v1/mix?zone=FR&from=${iso(FR_FIRST)}&to=${iso(HOUR_NOW)}`,
    allowedStatus: [200],
    refused: `/v1/mix?zone=FR&from=${iso(HOUR_NOW)}&to=${iso(FR_FIRST)}`,
    refusedStatus: 400,
    format: 'v1',
  },
  {
    name: '/v1/schedule: every zone over 72 hours',
    allowed: `/v1/schedule?zones=all&duration_minutes=2880&interruptible=true&earliest=${nowIso}&deadline=${iso(NOW_S + 72 * H)}`,
    allowedStatus: [200, 404],
    refused: `/v1/schedule?zones=all&earliest=${nowIso}&deadline=${iso(NOW_S + 72 * H + 1)}`,
    refusedStatus: 400,
    format: 'v1',
  },
  {
    name: '/v1/intensity/forecast',
    allowed: '/v1/intensity/forecast?zone=DE&horizon_hours=72',
    allowedStatus: [200],
    refused: '/v1/intensity/forecast?zone=DE&horizon_hours=73',
    refusedStatus: 400,
    format: 'v1',
  },
  {
    name: '/v1/export: every zone over 400 days with the mix',
    allowed: `/v1/export?zones=all&from=${iso(HOUR_NOW - 400 * DAY)}&to=${iso(HOUR_NOW)}&format=ndjson&include=mix`,
    allowedStatus: [200],
    refused: `/v1/export?zones=all&from=${iso(HOUR_NOW - 400 * DAY - H)}&to=${iso(HOUR_NOW)}&include=mix`,
    refusedStatus: 400,
    format: 'v1',
  },
  {
    name: 'Electricity Maps past-range',
    allowed: `${EM}/carbon-intensity/past-range?zone=FR&start=${iso(HOUR_NOW - 100 * DAY)}&end=${iso(HOUR_NOW)}`,
    allowedStatus: [200],
    refused: `${EM}/carbon-intensity/past-range?zone=FR&start=${iso(HOUR_NOW - 100 * DAY - 1)}&end=${iso(HOUR_NOW)}`,
    refusedStatus: 400,
    format: 'em',
  },
  {
    name: 'Electricity Maps forecast',
    allowed: `${EM}/carbon-intensity/forecast?zone=DE&horizonHours=72`,
    allowedStatus: [200],
    refused: `${EM}/carbon-intensity/forecast?zone=DE&horizonHours=73`,
    refusedStatus: 400,
    format: 'em',
  },
  {
    name: 'Carbon Aware bylocations: the most locations over 100 days',
    allowed: `${CA}/emissions/bylocations?location=${locations(LOCATIONS_OVER_100_DAYS)}&time=${iso(HOUR_NOW - 100 * DAY)}&toTime=${iso(HOUR_NOW)}`,
    allowedStatus: [200],
    refused: `${CA}/emissions/bylocations?location=${locations(LOCATIONS_OVER_100_DAYS + 1)}&time=${iso(HOUR_NOW - 100 * DAY)}&toTime=${iso(HOUR_NOW)}`,
    refusedStatus: 400,
    format: 'ca',
  },
  {
    name: 'Carbon Aware bylocations: the most distinct locations',
    allowed: `${CA}/emissions/bylocations?location=${locations(carbonAwareLocations)}`,
    allowedStatus: [200],
    refused: `${CA}/emissions/bylocations?location=${locations(carbonAwareLocations + 1)}`,
    refusedStatus: 400,
    format: 'ca',
  },
  {
    name: 'Carbon Aware bylocations/best: one location repeated 3000 times over 100 days',
    allowed: `${CA}/emissions/bylocations/best?location=${'FR,'.repeat(3000)}&time=${iso(HOUR_NOW - 100 * DAY)}&toTime=${iso(HOUR_NOW)}`,
    allowedStatus: [200],
    refused: `${CA}/emissions/bylocations/best?location=${'FR,'.repeat(3000)}&time=${iso(HOUR_NOW - 100 * DAY - 1)}&toTime=${iso(HOUR_NOW)}`,
    refusedStatus: 400,
    format: 'ca',
  },
  {
    name: 'Carbon Aware forecasts/current: the most distinct locations',
    allowed: `${CA}/emissions/forecasts/current?location=${locations(carbonAwareLocations)}&windowSize=60`,
    allowedStatus: [200],
    refused: `${CA}/emissions/forecasts/current?location=${locations(carbonAwareLocations + 1)}`,
    refusedStatus: 400,
    format: 'ca',
  },
  {
    name: 'Carbon Aware average-carbon-intensity',
    allowed: `${CA}/emissions/average-carbon-intensity?location=FR&startTime=${iso(HOUR_NOW - 100 * DAY)}&endTime=${iso(HOUR_NOW)}`,
    allowedStatus: [200],
    refused: `${CA}/emissions/average-carbon-intensity?location=FR&startTime=${iso(HOUR_NOW - 100 * DAY - 1)}&endTime=${iso(HOUR_NOW)}`,
    refusedStatus: 400,
    format: 'ca',
  },
];

function expectErrorFormat(format: Case['format'], body: Record<string, unknown>, context: string) {
  if (format === 'v1') expect(Object.keys(body).sort(), context).toEqual(['error', 'hint']);
  if (format === 'em') expect(Object.keys(body), context).toEqual(['error']);
  if (format === 'ca') {
    expect(body.status, context).toBe(400);
    expect(typeof body.title, context).toBe('string');
    expect(typeof body.detail, context).toBe('string');
    expect(typeof body.errors, context).toBe('object');
  }
}

describe('each route, its most expensive allowed request and its first refused one', () => {
  it.each(CASES)('$name', async (test) => {
    const rssBefore = process.memoryUsage().rss;
    const allowed = await fetch(`${base}${test.allowed}`);
    const bytes = (await allowed.arrayBuffer()).byteLength;
    expect(test.allowedStatus, `${test.allowed} -> ${allowed.status}`).toContain(allowed.status);
    // The bound on work: a few MB at most, and the process grows by well under 100 MiB.
    expect(bytes).toBeLessThan(10 * MIB);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(100 * MIB);

    const refused = await fetch(`${base}${test.refused}`);
    expect(refused.status).toBe(test.refusedStatus);
    expectErrorFormat(test.format, (await refused.json()) as Record<string, unknown>, test.name);
  });

  it('merges repeated locations: a name given 3000 times is answered once', async () => {
    const window = `time=${iso(HOUR_NOW - 48 * H)}&toTime=${iso(HOUR_NOW)}`;
    const once = await (
      await fetch(`${base}${CA}/emissions/bylocations?location=DE&${window}`)
    ).text();
    const repeated = await fetch(
      `${base}${CA}/emissions/bylocations?location=${'DE,'.repeat(1500)}&${'location=DE&'.repeat(200)}${window}`,
    );
    expect(repeated.status).toBe(200);
    expect(await repeated.text()).toBe(once);
    expect((JSON.parse(once) as unknown[]).length).toBeGreaterThan(40);
  });

  it('names the limit in the refusal', async () => {
    const tooMany = await fetch(
      `${base}${CA}/emissions/bylocations?location=${locations(carbonAwareLocations + 1)}`,
    );
    const body = (await tooMany.json()) as { detail: string; errors: { location: string[] } };
    expect(body.detail).toContain(`At most ${carbonAwareLocations} distinct locations`);
    expect(body.errors.location).toHaveLength(1);
  });
});

describe('the heaviest requests hold the event loop in short slices, counted rather than timed', () => {
  it('/v1/mix reads its 5000 intervals a page at a time, with a turn of the event loop between pages', async () => {
    const read = store.mixesInWindow.bind(store);
    const reads: { limit: number; afterTurn: boolean }[] = [];
    let turned = true;
    store.mixesInWindow = (zone, from, to, limit) => {
      reads.push({ limit, afterTurn: turned });
      turned = false;
      // Runs only once the loop has had a turn: before the next read if the reader yields.
      setImmediate(() => (turned = true));
      return read(zone, from, to, limit);
    };
    try {
      // A window not asked before: nothing kept answers it.
      const from = FR_FIRST + H;
      const response = await fetch(`${base}/v1/mix?zone=FR&from=${iso(from)}&to=${iso(HOUR_NOW)}`);
      const body = (await response.json()) as { count: number; data: { ts: string }[] };
      expect(body.count).toBe(5000);
      // Pages meet without a gap or a repeat.
      expect(body.data.map((point) => point.ts)).toEqual(
        Array.from({ length: 5000 }, (_, i) => iso(from + i * H)),
      );
      expect(response.headers.get('link')).toContain(`from=${iso(from + 5000 * H)}`);
    } finally {
      store.mixesInWindow = read;
    }
    expect(reads.length).toBeGreaterThanOrEqual(Math.ceil(5001 / MIX_PAGE_ROWS));
    expect(reads.every((one) => one.limit <= MIX_PAGE_ROWS)).toBe(true);
    expect(reads.every((one) => one.afterTurn)).toBe(true);
  });

  it('/v1/schedule compiles no schema validator on its first request', async () => {
    // fast-json-stringify compiles an Ajv validator for a nullable member the first time it
    // serializes one: over 100 ms holding the loop, on a fresh app's first schedule.
    const fresh = await start(new EveryZone(), '1000000000');
    const compiles = vi.spyOn(Ajv.prototype, 'getSchema');
    try {
      const heaviest = CASES.find((test) => test.name.startsWith('/v1/schedule'))!.allowed;
      const response = await fetch(`${urlOf(fresh)}${heaviest}`);
      expect(response.status).toBe(200);
      expect(((await response.json()) as { now: unknown }).now).not.toBeNull();
      expect(compiles).not.toHaveBeenCalled();
    } finally {
      compiles.mockRestore();
      await fresh.close();
    }
  });
});

describe('bestOf', () => {
  it('finds the lowest of 300,000 points (a spread argument list would overflow the stack)', () => {
    const points: EmissionsData[] = Array.from({ length: 300_000 }, (_, index) => ({
      location: 'GB',
      time: String(index),
      rating: 100 + ((index * 7919) % 1000) / 10,
      duration: '00:30:00',
    }));
    const best = bestOf(points);
    expect(best.length).toBeGreaterThan(0);
    expect(best.every((point) => point.rating === 100)).toBe(true);
    expect(bestOf([])).toEqual([]);
  });
});

describe('rate-limit weights', () => {
  it('a costly compatibility route counts its weight, /v1 counts one', async () => {
    const weight = ROUTE_WEIGHTS[`${CA}/emissions/bylocations`]!;
    expect(weight).toBeGreaterThan(1);
    const limited = await start(new EveryZone(), String(2 * weight + 1));
    try {
      const url = urlOf(limited);
      const remaining = async (path: string) => {
        const response = await fetch(`${url}${path}`);
        await response.arrayBuffer();
        return [response.status, response.headers.get('ratelimit-remaining')];
      };
      expect(await remaining('/v1/zones')).toEqual([200, String(2 * weight)]);
      expect(await remaining(`${CA}/emissions/bylocations?location=DE`)).toEqual([
        200,
        String(weight),
      ]);
      expect(await remaining(`${CA}/emissions/bylocations?location=DE`)).toEqual([200, '0']);
      const refused = await fetch(`${url}${CA}/emissions/bylocations?location=DE`);
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { status: number }).status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});

describe('a fault on a compatibility route', () => {
  it('answers 500 in the peer format and logs it with its cause', async () => {
    const faulty = await start(new EveryZone(true), '1000000');
    try {
      const url = urlOf(faulty);
      logs.length = 0;
      const ca = await fetch(`${url}${CA}/emissions/forecasts/current?location=DE`);
      expect(ca.status).toBe(500);
      expect(((await ca.json()) as { status: number }).status).toBe(500);
      const em = await fetch(`${url}${EM}/carbon-intensity/forecast?zone=DE`);
      expect(em.status).toBe(500);
      expect(Object.keys((await em.json()) as object)).toEqual(['error']);
      const logged = logs.filter((line) => line.msg === 'unhandled error');
      expect(logged).toHaveLength(2);
      expect(logged.map((line) => line.err?.message)).toEqual([
        'forecast table corrupted',
        'forecast table corrupted',
      ]);
    } finally {
      await faulty.close();
    }
  });
});

describe('docs/api.md', () => {
  it('states the weight of every weighted route', () => {
    const api = readFileSync(fileURLToPath(new URL('../docs/api.md', import.meta.url)), 'utf8');
    for (const [route, weight] of Object.entries(ROUTE_WEIGHTS)) {
      expect(api, route).toMatch(new RegExp(`\\| \`${route}\` +\\| ${weight} +\\|`));
    }
  });
});
