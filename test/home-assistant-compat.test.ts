import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { StoredReading } from '../src/core/reading.js';
import { buildApp } from '../src/http/app.js';
import { zoneAtHome } from '../src/http/compat/electricitymaps/home-location.js';
import { createStore } from '../src/storage/create-store.js';
import type { Store } from '../src/storage/store.js';
import { DE_LAST, fillFixedStore, H, HOUR_NOW, NOW } from './support/fixed-store.js';

/**
 * `/compat/electricitymaps/v3/home-assistant` as Home Assistant's Electricity Maps integration
 * calls it through aioelectricitymaps (docs/compat.md cites both): `zone` or `lat`/`lon`, an
 * `auth-token` header, and a body it parses as `{status, countryCode, data: {carbonIntensity,
 * fossilFuelPercentage}, units: {carbonIntensity}}`. Real HTTP, a real SQLite store.
 */

const HA = '/compat/electricitymaps/v3/home-assistant';
/** What aioelectricitymaps sends on every request (ElectricityMaps._get). */
const TOKEN = { 'auth-token': 'a-user-token' };

// DE's newest hour with a known mix: 30 % fossil, 70 % wind and nuclear.
const DE_NEWEST = DE_LAST + H;
const DE_VALUE = 212.46;
// GB on the lifecycle basis (Electricity Maps' default), one whole hour of two half hours.
const GB_HOUR = HOUR_NOW - 2 * H;
const gbHalfHour = (ts: number, lifecycle: number): StoredReading => ({
  zone: 'GB',
  ts,
  value: lifecycle - 100,
  method: 'upstream:uk-operator:actual',
  complete: true,
  mix: { gas: 40, 'wind-onshore': 50, nuclear: 10 },
  lifecycle,
  direct: lifecycle / 2,
});

let store: Store;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  store = await createStore('sqlite::memory:');
  await fillFixedStore(store);
  await store.upsertReadings([
    {
      zone: 'DE',
      ts: DE_NEWEST,
      value: DE_VALUE,
      method: 'computed:v1',
      complete: true,
      mix: { gas: 300, 'wind-onshore': 500, nuclear: 200 },
      lifecycle: DE_VALUE,
      direct: 100,
    },
    gbHalfHour(GB_HOUR, 200),
    gbHalfHour(GB_HOUR + 1800, 211),
  ]);
  app = await buildApp({
    config: loadConfig({ RATE_LIMIT_PER_MINUTE: '100000' }),
    store,
    clock: () => NOW,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

afterAll(async () => {
  await app?.close();
  await store?.close();
});

async function get(query: string, headers: Record<string, string> = TOKEN) {
  const response = await fetch(`${base}${HA}${query}`, { headers });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as unknown,
  };
}

/** What aioelectricitymaps' HomeAssistantCarbonIntensityResponse requires of an `ok` body. */
function expectParsable(body: unknown) {
  const ok = body as {
    status: string;
    countryCode: unknown;
    data: { carbonIntensity: unknown; fossilFuelPercentage: unknown };
    units: { carbonIntensity: unknown };
  };
  expect(ok.status).toBe('ok');
  expect(typeof ok.countryCode).toBe('string');
  expect(typeof ok.data.carbonIntensity).toBe('number');
  expect(typeof ok.data.fossilFuelPercentage).toBe('number');
  expect(ok.units.carbonIntensity).toBe('gCO2eq/kWh');
}

describe('GET /compat/electricitymaps/v3/home-assistant', () => {
  it('answers a zone by key with its newest hour and that hour’s fossil share', async () => {
    const answer = await get('?zone=DE');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.headers.get('cache-control')).toBe('public, max-age=300');
    expect(answer.body).toEqual({
      status: 'ok',
      countryCode: 'DE',
      data: {
        datetime: new Date(DE_NEWEST * 1000).toISOString(),
        // 212.46 is served as 212.5 (tenths, memory and store alike), which the shim rounds to 213.
        carbonIntensity: 213,
        fossilFuelPercentage: 30,
      },
      units: { carbonIntensity: 'gCO2eq/kWh' },
    });
    expectParsable(answer.body);
    // The same hour and value as the shim's own latest.
    const latest = (await (
      await fetch(`${base}/compat/electricitymaps/v3/carbon-intensity/latest?zone=DE`)
    ).json()) as { carbonIntensity: number; datetime: string };
    const data = (answer.body as { data: { carbonIntensity: number; datetime: string } }).data;
    expect([data.carbonIntensity, data.datetime]).toEqual([
      latest.carbonIntensity,
      latest.datetime,
    ]);
  });

  it('accepts any auth-token, or none, and ignores it', async () => {
    const withToken = await get('?zone=de');
    expect((await get('?zone=de', {})).body).toEqual(withToken.body);
    expect((await get('?zone=de', { 'auth-token': '' })).body).toEqual(withToken.body);
    expect((await get('?zone=de', { 'auth-token': 'x'.repeat(200) })).status).toBe(200);
  });

  it('answers a half-hourly zone with its hour mean, and Electricity Maps keys', async () => {
    const gb = await get('?zone=GB');
    expect(gb.body).toEqual({
      status: 'ok',
      countryCode: 'GB',
      data: {
        datetime: new Date(GB_HOUR * 1000).toISOString(),
        carbonIntensity: 206,
        fossilFuelPercentage: 40,
      },
      units: { carbonIntensity: 'gCO2eq/kWh' },
    });
    // A key of a zone with no reading: the peer's no-data answer, named by its key.
    expect((await get('?zone=DK-DK1')).body).toEqual({
      status: 'no-data',
      countryCode: 'DK-DK1',
      data: {},
      units: { carbonIntensity: 'gCO2eq/kWh' },
    });
    expect(((await get('?zone=dk-1')).body as { countryCode: string }).countryCode).toBe('DK-DK1');
  });

  it('answers lat/lon as Home Assistant sends its home location', async () => {
    // The coordinates of aioelectricitymaps' own test (Oldenburg, Germany), as strings, and a
    // float as aiohttp writes hass.config.latitude.
    const oldenburg = await get('?lat=53.1357012&lon=8.2024685');
    expectParsable(oldenburg.body);
    expect((oldenburg.body as { countryCode: string }).countryCode).toBe('DE');
    const london = await get('?lat=51.5072178&lon=-0.1275862');
    expect((london.body as { countryCode: string }).countryCode).toBe('GB');
    expect((await get('?lat=55.6761&lon=12.5683')).body).toMatchObject({
      status: 'no-data',
      countryCode: 'DK-DK2',
    });
    // Outside every zone we serve: no data for the selected location.
    expect((await get('?lat=35.6762&lon=139.6503')).body).toEqual({
      status: 'no-data',
      countryCode: '',
      data: {},
      units: { carbonIntensity: 'gCO2eq/kWh' },
    });
  });

  it.each([
    ['', 400, 'give zone (e.g. zone=DE or zone=DK-DK1) or both lat and lon'],
    ['?lat=52.37', 400, 'give zone (e.g. zone=DE or zone=DK-DK1) or both lat and lon'],
    ['?lat=north&lon=4.9', 400, 'invalid lat: use e.g. lat=52.37'],
    ['?lat=52.37&lon=200', 400, 'invalid lon: use e.g. lon=4.90'],
    ['?zone=DE&zone=FR', 400, undefined],
  ])('answers %s with %i in the peer’s error format', async (query, status, message) => {
    const answer = await get(query);
    expect(answer.status).toBe(status);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(answer.body as object)).toEqual(['error']);
    if (message) expect(answer.body).toEqual({ error: message });
  });

  it('answers a zone it does not serve as no-data, named as asked', async () => {
    expect((await get('?zone=JP-TK')).body).toEqual({
      status: 'no-data',
      countryCode: 'JP-TK',
      data: {},
      units: { carbonIntensity: 'gCO2eq/kWh' },
    });
  });
});

describe('the zone of a home location', () => {
  it.each([
    ['Vienna', 48.2082, 16.3738, 'AT'],
    ['Zürich', 47.3769, 8.5417, 'CH'],
    ['Warsaw', 52.2297, 21.0122, 'PL'],
    ['Prague', 50.0755, 14.4378, 'CZ'],
    ['Helsinki', 60.1699, 24.9384, 'FI'],
    ['Dublin', 53.3498, -6.2603, 'IE'],
    ['Belfast (all-island market)', 54.5973, -5.9301, 'IE'],
    ['Edinburgh', 55.9533, -3.1883, 'GB'],
    ['Luxembourg (DE-LU zone)', 49.6116, 6.1319, 'DE'],
    ['Lisbon', 38.7223, -9.1393, 'PT'],
    ['Madrid', 40.4168, -3.7038, 'ES'],
    ['Strasbourg', 48.5734, 7.7521, 'FR'],
    ['Amsterdam', 52.3676, 4.9041, 'NL'],
    ['Brussels', 50.8503, 4.3517, 'BE'],
    ['Athens', 37.9838, 23.7275, 'GR'],
    ['Bucharest', 44.4268, 26.1025, 'RO'],
    ['Budapest', 47.4979, 19.0402, 'HU'],
    ['Vejle', 55.71, 9.54, 'DK-1'],
    ['Næstved', 55.23, 11.76, 'DK-2'],
    ['Boden', 65.83, 21.69, 'SE-1'],
    ['Örnsköldsvik', 63.29, 18.72, 'SE-2'],
    ['Västerås', 59.61, 16.55, 'SE-3'],
    ['Lund', 55.7, 13.19, 'SE-4'],
    ['Moss', 59.43, 10.66, 'NO-1'],
    ['Sandnes', 58.85, 5.74, 'NO-2'],
    ['Levanger', 63.75, 11.3, 'NO-3'],
    ['Harstad', 68.8, 16.54, 'NO-4'],
    ['Norheimsund', 60.37, 6.14, 'NO-5'],
    ['Parma', 44.8, 10.33, 'IT-NORD'],
    ['Prato', 43.88, 11.1, 'IT-CNOR'],
    ['Avellino', 40.91, 14.79, 'IT-CSUD'],
    ['Altamura', 40.83, 16.55, 'IT-SUD'],
    ['Lamezia Terme', 38.97, 16.31, 'IT-CALA'],
    ['Enna', 37.57, 14.28, 'IT-SICI'],
    ['Alghero', 40.56, 8.32, 'IT-SARD'],
    ['Austin, Texas (the Lower 48)', 30.2672, -97.7431, 'US'],
  ])('%s is in %s', async (_place, lat, lon, zone) => {
    expect((await zoneAtHome(lat, lon))?.code).toBe(zone);
  });

  it.each([
    ['Anchorage', 61.2181, -149.9003],
    ['Honolulu', 21.3069, -157.8583],
    ['Tokyo', 35.6762, 139.6503],
    ['the North Sea', 56.0, 3.0],
    ['Reykjavík', 64.1466, -21.9426],
  ])('%s is in none of our zones', async (_place, lat, lon) => {
    expect(await zoneAtHome(lat, lon)).toBeUndefined();
  });
});
