import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { updateConsumption } from '../src/consumption/update-consumption.js';
import type { Basis } from '../src/core/factors.js';
import type { DirectedFlow } from '../src/core/flows.js';
import { intensityOfMix } from '../src/core/method.js';
import type { Mix } from '../src/core/reading.js';
import { formatTs } from '../src/core/time.js';
import { round1 } from '../src/core/units.js';
import { buildApp } from '../src/http/app.js';
import { computedReading } from './support/computed-reading.js';
import { ZONES } from '../src/core/zones.js';
import { ReadingCache } from '../src/read/reading-cache.js';
import { createStore } from '../src/storage/create-store.js';
import type { Store } from '../src/storage/store.js';

/**
 * `accounting=consumption` served (extensions §15), from memory and from the store, on values
 * computed here by hand: PL (coal 100 MWh) exports 100 to CZ (nuclear 100), which exports 50 to
 * AT (hydro 50). CZ then consumes half coal, half nuclear; AT half hydro, a quarter of each of
 * the others. GB's operator figures are stored too: GB has no consumption series.
 */

const H = 3600;
const NOW = Date.UTC(2026, 10, 21, 13, 20);
const FIRST = Math.floor(NOW / 1000 / H) * H - 6 * H;
const HOURS = [0, 1, 2].map((k) => FIRST + k * H);
const LAST = HOURS.at(-1)!;

const MIXES: Readonly<Record<string, Mix>> = {
  PL: { coal: 100 },
  CZ: { nuclear: 100 },
  AT: { hydro: 50 },
};
/** What each zone consumes, by the category it was generated as (MWh). */
const CONSUMED: Readonly<Record<string, Mix>> = {
  PL: { coal: 0 },
  CZ: { coal: 75, nuclear: 75 },
  AT: { coal: 25, hydro: 50, nuclear: 25 },
};
const consumed = (zone: string, basis: Basis = 'lifecycle') =>
  round1(intensityOfMix(zone === 'PL' ? { coal: 1 } : CONSUMED[zone]!, basis)!);

/** A border's two directions in one hour, as A11 publishes them: `mwh` one way, 0 back. */
const flow = (from: string, to: string, ts: number, mwh: number): DirectedFlow[] => [
  { from, to, ts, mw: mwh },
  { from: to, to: from, ts, mw: 0 },
];

const iso = (ts: number) => encodeURIComponent(formatTs(ts));
const WINDOW = `from=${iso(FIRST)}&to=${iso(LAST + H)}`;
const EM = '/compat/electricitymaps/v3';

let store: Store;
let cache: ReadingCache;
let fromMemory: FastifyInstance;
let fromStore: FastifyInstance;
let flowsOff: FastifyInstance;
let memoryUrl: string;
const config = loadConfig({ RATE_LIMIT_PER_MINUTE: '1000000', METRICS: 'off', FLOWS: 'on' });

beforeAll(async () => {
  store = await createStore('sqlite::memory:');
  await store.upsertReadings(
    HOURS.flatMap((ts) =>
      Object.entries(MIXES).map(([zone, mix]) => computedReading(zone, ts, mix)),
    ),
  );
  await store.upsertReadings(
    HOURS.map((ts) => ({
      zone: 'GB',
      ts,
      value: 150,
      method: 'upstream:uk-operator:actual' as const,
      complete: true,
      mix: null,
      lifecycle: null,
      direct: null,
    })),
  );
  await store.upsertFlows(
    'europe',
    HOURS.flatMap((ts) => [...flow('PL', 'CZ', ts, 100), ...flow('CZ', 'AT', ts, 50)]),
  );
  await updateConsumption(store, 'europe');
  cache = new ReadingCache(store, undefined, { pollMs: 60_000 });
  await cache.refresh();
  fromMemory = await buildApp({ config, store, clock: () => NOW, cache });
  fromStore = await buildApp({ config, store, clock: () => NOW });
  flowsOff = await buildApp({
    config: loadConfig({ RATE_LIMIT_PER_MINUTE: '1000000', METRICS: 'off', FLOWS: 'off' }),
    store,
    clock: () => NOW,
  });
  await fromMemory.listen({ port: 0, host: '127.0.0.1' });
  const { port } = fromMemory.server.address() as { port: number };
  memoryUrl = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await fromMemory?.close();
  await fromStore?.close();
  await flowsOff?.close();
  await cache?.stop();
  await store?.close();
});

/** Every endpoint that serves consumption values. */
const PATHS = [
  '/v1/intensity/latest?accounting=consumption',
  '/v1/intensity/latest?zone=AT&accounting=consumption&basis=direct',
  `/v1/intensity?zone=CZ&accounting=consumption&${WINDOW}`,
  `/v1/intensity?zone=AT&basis=direct&accounting=consumption&${WINDOW}`,
  `/v1/mix?zone=CZ&accounting=consumption&${WINDOW}`,
  `/v1/export?zones=all&accounting=consumption&${WINDOW}&include=mix`,
  `/v1/export?zones=AT,CZ&accounting=consumption&basis=direct&${WINDOW}&format=ndjson&include=mix`,
  `/v1/intensity/stats?zone=AT&accounting=consumption&${WINDOW}`,
  '/v1/intensity/level?zones=all&accounting=consumption',
  `${EM}/carbon-intensity/latest?zone=CZ`,
  `${EM}/carbon-intensity/history?zone=AT`,
  `${EM}/power-breakdown/latest?zone=CZ`,
];

describe('accounting=consumption', () => {
  it.each(PATHS)('is served identically from memory and from the store: %s', async (path) => {
    const memory = await fromMemory.inject({ url: path });
    const stored = await fromStore.inject({ url: path });
    expect(memory.statusCode, memory.body).toBe(200);
    expect(stored.statusCode, stored.body).toBe(200);
    expect(memory.body).toBe(stored.body);
    // And by the fast path, over a socket, where it answers.
    const socket = await fetch(`${memoryUrl}${path}`);
    expect(await socket.text()).toBe(memory.body);
  });

  it('serves the hand-traced values with their methods, GB left out', async () => {
    const body = (await fromStore.inject({ url: PATHS[0]! })).json();
    expect(body.data).toEqual(
      ['CZ', 'AT', 'PL']
        .map((zone) => ({
          zone,
          ts: formatTs(LAST),
          gco2eq_kwh: consumed(zone),
          method: 'computed:v1:consumption',
        }))
        .sort((a, b) => zoneOrder(a.zone) - zoneOrder(b.zone)),
    );
    const direct = (await fromMemory.inject({ url: PATHS[1]! })).json();
    expect(direct.data).toEqual([
      {
        zone: 'AT',
        ts: formatTs(LAST),
        gco2eq_kwh: consumed('AT', 'direct'),
        method: 'computed:v1:direct:consumption',
      },
    ]);
    // The production values are untouched.
    const production = (await fromMemory.inject({ url: '/v1/intensity/latest?zone=AT' })).json();
    expect(production.data[0].gco2eq_kwh).toBe(round1(intensityOfMix(MIXES.AT!)!));
  });

  it('serves the traced mix: consumption by category, imports and exports per neighbour', async () => {
    const body = (await fromMemory.inject({ url: PATHS[4]! })).json();
    expect(body).toMatchObject({ zone: 'CZ', unit: 'MWh', count: 3, truncated: false });
    expect(body.data[0]).toEqual({
      ts: formatTs(FIRST),
      consumption: { coal: 75, nuclear: 75 },
      imports: { PL: 100 },
      exports: { AT: 50 },
      estimated_pct: 0,
      estimated_borders: [],
      renewable_pct: 0,
      low_carbon_pct: 50,
    });
  });

  it('exports the zones that have a series, their traced mix as columns', async () => {
    const csv = (await fromMemory.inject({ url: PATHS[5]! })).body.trim().split('\n');
    expect(csv[0]).toMatch(/^zone,ts,gco2eq_kwh,method,.*,imported_estimated$/);
    expect(csv.slice(1).map((line) => line.split(',')[0])).toEqual(
      [...Array(3).fill('CZ'), ...Array(3).fill('AT'), ...Array(3).fill('PL')].sort(
        (a, b) => zoneOrder(a) - zoneOrder(b),
      ),
    );
    const ndjson = (await fromStore.inject({ url: PATHS[6]! })).body.trim().split('\n');
    const cz = ndjson.map((line) => JSON.parse(line)).find((row) => row.zone === 'CZ');
    expect(cz).toMatchObject({
      zone: 'CZ',
      gco2eq_kwh: consumed('CZ', 'direct'),
      method: 'computed:v1:direct:consumption',
      consumption: { coal: 75, nuclear: 75 },
    });
  });

  it('gives statistics and levels of consumption values, saying so', async () => {
    const stats = (await fromMemory.inject({ url: PATHS[7]! })).json();
    expect(stats).toMatchObject({
      zone: 'AT',
      basis: 'lifecycle',
      accounting: 'consumption',
      count: 3,
      mean: consumed('AT'),
    });
    const level = (await fromMemory.inject({ url: PATHS[8]! })).json();
    expect(level).toMatchObject({ basis: 'lifecycle', accounting: 'consumption' });
    expect(level.data.map((entry: { zone: string }) => entry.zone)).toEqual(
      ['CZ', 'AT', 'PL'].sort((a, b) => zoneOrder(a) - zoneOrder(b)),
    );
    for (const entry of level.data) expect(entry.forecast).toEqual([]);
  });

  it('answers Electricity Maps clients with consumption values and traced breakdowns', async () => {
    for (const app of [fromMemory, fromStore]) {
      const latest = (await app.inject({ url: `${EM}/carbon-intensity/latest?zone=CZ` })).json();
      expect(latest.carbonIntensity).toBe(Math.round(consumed('CZ')));
      const breakdown = (await app.inject({ url: `${EM}/power-breakdown/latest?zone=CZ` })).json();
      expect(breakdown).toMatchObject({
        powerConsumptionBreakdown: { coal: 75, nuclear: 75, hydro: 0 },
        powerProductionBreakdown: { coal: 0, nuclear: 100 },
        powerImportBreakdown: { PL: 100 },
        powerExportBreakdown: { AT: 50 },
        powerConsumptionTotal: 150,
        powerProductionTotal: 100,
        powerImportTotal: 100,
        powerExportTotal: 50,
        fossilFreePercentage: 50,
      });
      // A zone without consumption values: its production answer, as before.
      const production = `${EM}/carbon-intensity/history?zone=DE`;
      expect((await app.inject({ url: production })).body).toBe(
        (await flowsOff.inject({ url: production })).body,
      );
    }
  });

  it('lists the annual intensities of unsolved neighbours in /v1/factors', async () => {
    const body = (await fromMemory.inject({ url: '/v1/factors' })).json();
    const turkey = body.unsolved_neighbours.find((row: { codes: string[] }) =>
      row.codes.includes('TR'),
    );
    expect(turkey).toMatchObject({ area: 'Türkiye', source: expect.stringContaining('TR') });
    expect(turkey.lifecycle).toBeGreaterThan(turkey.direct);
  });

  it('leaves every production body as it was: no accounting member', async () => {
    const stats = (
      await fromMemory.inject({ url: `/v1/intensity/stats?zone=AT&${WINDOW}` })
    ).json();
    expect(stats.basis).toBe('default');
    expect(stats).not.toHaveProperty('accounting');
  });

  it.each([
    ['/v1/intensity/latest?accounting=Consumption', 400, 'invalid param: accounting'],
    ['/v1/intensity/latest?accounting=', 400, 'invalid param: accounting'],
    [`/v1/mix?zone=DE&accounting=both&${WINDOW}`, 400, 'invalid param: accounting'],
    [
      '/v1/intensity/latest?zone=GB&accounting=consumption',
      404,
      'no consumption series for zone: GB',
    ],
    [
      `/v1/intensity?zone=gb&accounting=consumption&${WINDOW}`,
      404,
      'no consumption series for zone: GB',
    ],
    [
      `/v1/export?zones=DE,GB&accounting=consumption&${WINDOW}`,
      404,
      'no consumption series for zone: GB',
    ],
    [
      '/v1/intensity/level?zone=GB&accounting=consumption',
      404,
      'no consumption series for zone: GB',
    ],
    ['/v1/intensity/forecast?zone=DE&accounting=consumption', 400, 'unsupported param: accounting'],
    ['/v1/schedule?zones=DE&accounting=consumption', 400, 'unsupported param: accounting'],
    ['/v1/stream?zones=DE&accounting=consumption', 400, 'unsupported param: accounting'],
    ['/v1/intensity/forecast?zone=DE&accounting=nope', 400, 'invalid param: accounting'],
    [
      '/v1/intensity/latest?accounting=consumption&accounting=production',
      400,
      'invalid param: accounting',
    ],
  ])('refuses %s with %i %s', async (path, status, error) => {
    for (const app of [fromMemory, fromStore]) {
      const response = await app.inject({ url: path });
      expect(response.statusCode, response.body).toBe(status);
      expect(response.json().error).toBe(error);
      expect(response.json().hint).toEqual(expect.any(String));
    }
  });

  it('names where consumption is served when an endpoint has none', async () => {
    const body = (
      await fromStore.inject({ url: '/v1/intensity/forecast?zone=DE&accounting=consumption' })
    ).json();
    expect(body.hint).toContain('/v1/intensity/latest');
  });

  it('is refused with a hint naming FLOWS where border flows are off', async () => {
    const response = await flowsOff.inject({ url: '/v1/intensity/latest?accounting=consumption' });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      error: 'unsupported param: accounting',
      hint: expect.stringContaining('FLOWS=on'),
    });
    // accounting=production is the default, and means it.
    const production = await flowsOff.inject({ url: '/v1/intensity/latest?accounting=production' });
    expect(production.body).toBe((await flowsOff.inject({ url: '/v1/intensity/latest' })).body);
  });

  it('follows revisions in memory: a changed flow, and a zone no longer solved', async () => {
    // PL's export to CZ in the last hour doubles; AT's mix of that hour becomes incomplete.
    await store.upsertFlows('europe', flow('PL', 'CZ', LAST, 200));
    await store.upsertReadings([
      { ...computedReading('AT', LAST, MIXES.AT!), complete: false, lifecycle: null, direct: null },
    ]);
    await updateConsumption(store, 'europe');
    await cache.refresh();
    const url = `/v1/intensity?zone=CZ&accounting=consumption&${WINDOW}`;
    const memory = (await fromMemory.inject({ url })).body;
    expect(memory).toBe((await fromStore.inject({ url })).body);
    const values = JSON.parse(memory).data.map((point: { gco2eq_kwh: number }) => point.gco2eq_kwh);
    expect(values.slice(0, 2)).toEqual([consumed('CZ'), consumed('CZ')]);
    expect(values[2]).toBe(round1(intensityOfMix({ coal: 200, nuclear: 100 })!));
    const at = `/v1/intensity?zone=AT&accounting=consumption&${WINDOW}`;
    expect((await fromMemory.inject({ url: at })).json().count).toBe(2);
    expect((await fromMemory.inject({ url: at })).body).toBe(
      (await fromStore.inject({ url: at })).body,
    );
  });
});

/** The zones' order in /v1/zones. */
const zoneOrder = (zone: string): number => ZONES.findIndex((candidate) => candidate.code === zone);
