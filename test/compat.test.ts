import type { FastifyInstance } from 'fastify';
import { round1 } from '../src/core/units.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { Basis } from '../src/core/factors.js';
import type { ForecastBook, ZoneForecast } from '../src/forecast/book.js';
import { buildApp } from '../src/http/app.js';
import { createStore } from '../src/storage/create-store.js';
import type { Store } from '../src/storage/store.js';
import { ReadingCache } from '../src/read/reading-cache.js';
import { expectPeerShape, type PeerSchema } from './compat/peer-schemas.js';
import { ApiClient } from './support/api-client.js';
import {
  DE_INCOMPLETE,
  DE_LAST,
  deValue,
  FR_COUNT,
  FR_FIRST,
  fillFixedStore,
  H,
  HOUR_NOW,
  NOW,
  computed,
  NOW_S,
  US_LAST,
} from './support/fixed-store.js';
import { hourlyMixes } from '../src/core/hourly.js';

/**
 * The compatibility APIs as their known clients call them (docs/compat.md lists each request):
 * every test sends exactly the path, parameters and headers the client's own code sends, and
 * checks every field that client reads. Every response is checked against the peer's documented
 * shape (test/compat/peer-schemas.ts), errors included. Real HTTP, real SQLite store, the fixed
 * data set of the black-box suites, and a small ForecastBook filled with known series (the seam
 * the forecast engine plugs into).
 */

const EM = '/compat/electricitymaps/v3';
const CA = '/compat/carbon-aware';

/** Known forecasts: DE and US-CAISO (lifecycle), hourly for 73 h after each zone's data. */
const FORECAST_START = HOUR_NOW - H; // 12:00Z, the interval after DE's newest reading + 1
const forecastValue = (index: number) => 200 + (index % 5) * 10 + 0.4;
const GENERATED_AT = NOW_S - 600;

class KnownForecasts implements ForecastBook {
  asked: { zone: string; basis: Basis | undefined }[] = [];
  forecast(zone: string, basis: Basis | undefined): ZoneForecast | null {
    this.asked.push({ zone, basis });
    if (zone === 'GB' && basis === 'lifecycle') {
      // Half-hourly, from 13:00Z: 100, 101, 102, ...
      const values = Float64Array.from({ length: 20 }, (_, index) => 100 + index);
      return {
        zone,
        basis,
        model: 'test@1',
        generatedAt: GENERATED_AT,
        startTs: HOUR_NOW,
        stepSeconds: 1800,
        values,
        p10: values,
        p90: values,
      };
    }
    if ((zone !== 'DE' && zone !== 'US-CAISO') || basis !== 'lifecycle') return null;
    const values = Float64Array.from({ length: 73 }, (_, index) => forecastValue(index));
    return {
      zone,
      basis,
      model: 'test@1',
      generatedAt: GENERATED_AT,
      startTs: FORECAST_START,
      stepSeconds: H,
      values,
      p10: values.map((value) => value - 20),
      p90: values.map((value) => value + 20),
    };
  }
}

let store: Store;
let app: FastifyInstance;
let base: string;
const book = new KnownForecasts();

beforeAll(async () => {
  store = await createStore('sqlite::memory:');
  await fillFixedStore(store);
  app = await buildApp({
    config: loadConfig({ RATE_LIMIT_PER_MINUTE: '100000' }),
    store,
    clock: () => NOW,
    forecasts: book,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

afterAll(async () => {
  await app?.close();
  await store?.close();
});

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

async function send(path: string, headers: Record<string, string>, schema?: PeerSchema) {
  const response = await fetch(`${base}${path}`, { headers });
  const text = await response.text();
  const answer: Answer = {
    status: response.status,
    headers: response.headers,
    body: text === '' ? undefined : JSON.parse(text),
  };
  if (schema) expectPeerShape(schema, answer.body);
  return answer;
}

const emTime = (s: number) => new Date(s * 1000).toISOString();
const dotnet = (s: number) => `${new Date(s * 1000).toISOString().slice(0, 19)}+00:00`;

// The DE readings in the last 24 hours: hourly up to DE_LAST, without the incomplete hour.
const DE_LAST_24H: number[] = [];
for (let ts = Math.ceil((NOW_S - 24 * H) / H) * H; ts <= DE_LAST; ts += H) {
  if (ts !== DE_INCOMPLETE) DE_LAST_24H.push(ts);
}

describe('evcc (tariff/electricitymaps.go)', () => {
  // evcc: GET {uri}/carbon-intensity/forecast?zone={ZONE upper-cased}, header X-BLOBR-KEY, JSON.
  const headers = { 'X-BLOBR-KEY': 'any-token', Accept: 'application/json' };

  it('reads forecast[].carbonIntensity and forecast[].datetime', async () => {
    const answer = await send(`${EM}/carbon-intensity/forecast?zone=DE`, headers, 'emForecast');
    expect(answer.status).toBe(200);
    const body = answer.body as {
      zone: string;
      forecast: { carbonIntensity: number; datetime: string }[];
      updatedAt: string;
    };
    expect(body.zone).toBe('DE');
    // From the interval in progress (13:00Z) for 24 hours, whole numbers as Electricity Maps.
    expect(body.forecast).toHaveLength(24);
    body.forecast.forEach((point, i) => {
      const index = (HOUR_NOW - FORECAST_START) / H + i;
      expect(point.datetime).toBe(emTime(HOUR_NOW + i * H));
      expect(point.carbonIntensity).toBe(Math.round(forecastValue(index)));
    });
    expect(body.updatedAt).toBe(emTime(GENERATED_AT));
    expect(book.asked.at(-1)).toEqual({ zone: 'DE', basis: 'lifecycle' });
  });

  it('gets the error it reads (`error`) when a zone has no forecast', async () => {
    const answer = await send(`${EM}/carbon-intensity/forecast?zone=FR`, headers, 'emError');
    expect(answer.status).toBe(404);
    expect((answer.body as { error: string }).error).toContain('no forecast available for zone FR');
    expect(answer.headers.get('cache-control')).toBe('no-store');
  });
});

describe('grid-intensity-go (pkg/provider/electricity_maps.go)', () => {
  // Older provider: GET {apiURL}/carbon-intensity/latest?zone={location}, header auth-token.
  it('reads carbonIntensity and datetime (RFC 3339) of the latest reading', async () => {
    const answer = await send(
      `${EM}/carbon-intensity/latest?zone=DE`,
      { 'auth-token': 'token' },
      'emLatest',
    );
    expect(answer.status).toBe(200);
    const body = answer.body as { carbonIntensity: number; datetime: string; zone: string };
    expect(body.zone).toBe('DE');
    expect(body.carbonIntensity).toBe(Math.round(deValue(DE_LAST)));
    expect(Date.parse(body.datetime) / 1000).toBe(DE_LAST);
  });

  // Newer provider (commit cc6e43d): GET {apiURL}/carbon-intensity/history?zone={location},
  // header auth-token; indexes result[0] and reads isEstimated, datetime, carbonIntensity.
  it('history: isEstimated, datetime and carbonIntensity of every hour, with rate-limit headers', async () => {
    const answer = await send(
      `${EM}/carbon-intensity/history?zone=DE`,
      { 'auth-token': 'token' },
      'emHistory',
    );
    expect(answer.status).toBe(200);
    const history = (
      answer.body as {
        history: { carbonIntensity: number; datetime: string; isEstimated: boolean }[];
      }
    ).history;
    expect(history.map((point) => point.datetime)).toEqual(DE_LAST_24H.map(emTime));
    expect(history.every((point) => point.isEstimated === false)).toBe(true);
    expect(history.map((point) => point.carbonIntensity)).toEqual(
      DE_LAST_24H.map((ts) => Math.round(deValue(ts))),
    );
    expect(answer.headers.get('ratelimit-limit')).toBe('100000');
  });
});

describe('Electricity Maps shim: 1-hour data and lagging zones', () => {
  const headers = { 'auth-token': 'token' };
  // GB is half-hourly in our read model: here with values on each basis and a varying mix, every
  // half hour of the last 24 hours up to 12:30Z (the fixed set's GB readings have none).
  const gbValue = (ts: number) => 100 + (ts % 7);
  const gbGas = (ts: number) => 1 + (ts % 5);
  const gbHour = (hour: number) => Math.round((gbValue(hour) + gbValue(hour + 1800)) / 2);
  let gbStore: Store;
  let gbApp: FastifyInstance;
  beforeAll(async () => {
    gbStore = await createStore('sqlite::memory:');
    const readings = [];
    for (let ts = HOUR_NOW - 24 * H; ts < HOUR_NOW; ts += 1800) {
      readings.push({
        ...computed('GB', ts, gbValue(ts)),
        mix: { gas: gbGas(ts), 'wind-onshore': 2 },
      });
    }
    await gbStore.upsertReadings(readings);
    gbApp = await buildApp({
      config: loadConfig({ RATE_LIMIT_PER_MINUTE: '100000' }),
      store: gbStore,
      clock: () => NOW,
      forecasts: book,
    });
  });
  afterAll(async () => {
    await gbApp?.close();
    await gbStore?.close();
  });
  const gbGet = async (path: string, schema: PeerSchema) => {
    const answer = await gbApp.inject({ url: `${EM}${path}`, headers });
    expect(answer.statusCode, path).toBe(200);
    const body = answer.json() as unknown;
    expectPeerShape(schema, body);
    return body;
  };

  it('GB latest, history and past-range: hourly means of both halves, stamped on the hour', async () => {
    const latest = (await gbGet('/carbon-intensity/latest?zone=GB', 'emLatest')) as {
      datetime: string;
      carbonIntensity: number;
      updatedAt: string;
    };
    expect(latest.datetime).toBe(emTime(HOUR_NOW - H));
    expect(latest.carbonIntensity).toBe(gbHour(HOUR_NOW - H));
    expect(latest.updatedAt).toBe(emTime(HOUR_NOW));

    // history: [12:20Z yesterday, now); yesterday's 13:00Z hour has only its second half.
    const history = (await gbGet('/carbon-intensity/history?zone=GB', 'emHistory')) as {
      history: { datetime: string; carbonIntensity: number }[];
    };
    const expected = Array.from({ length: 23 }, (_, i) => HOUR_NOW - 23 * H + i * H);
    expect(history.history.map((point) => point.datetime)).toEqual(expected.map(emTime));
    expect(history.history.map((point) => point.carbonIntensity)).toEqual(expected.map(gbHour));

    // past-range 09:30-12:00: the 10:00 and 11:00 hours, not the half-covered 09:00.
    const range = (await gbGet(
      `/carbon-intensity/past-range?zone=GB&start=${emTime(HOUR_NOW - 3.5 * H)}&end=${emTime(HOUR_NOW - H)}`,
      'emPastRange',
    )) as { data: { datetime: string }[] };
    expect(range.data.map((point) => point.datetime)).toEqual([
      emTime(HOUR_NOW - 3 * H),
      emTime(HOUR_NOW - 2 * H),
    ]);
  });

  it('GB power breakdown latest and history: hourly, the shares of both halves averaged', async () => {
    const hour = HOUR_NOW - H;
    const gas = (gbGas(hour) + gbGas(hour + 1800)) / 2;
    const latest = (await gbGet('/power-breakdown/latest?zone=GB', 'emPowerLatest')) as {
      datetime: string;
      renewablePercentage: number;
    };
    expect(latest.datetime).toBe(emTime(hour));
    expect(latest.renewablePercentage).toBe(Math.round((100 * 2) / (2 + gas)));
    const history = (await gbGet('/power-breakdown/history?zone=GB', 'emPowerHistory')) as {
      history: { datetime: string }[];
    };
    expect(history.history).toHaveLength(23);
    expect(history.history.at(-1)!.datetime).toBe(emTime(hour));
  });

  it('GB forecast (evcc sets End = datetime + 1h): hourly means on the hour', async () => {
    const answer = await send(
      `${EM}/carbon-intensity/forecast?zone=GB&horizonHours=6`,
      { 'X-BLOBR-KEY': 'any-token' },
      'emForecast',
    );
    expect(answer.status).toBe(200);
    const forecast = (answer.body as { forecast: { datetime: string; carbonIntensity: number }[] })
      .forecast;
    // Half hours 100, 101 | 102, 103 | ...: hour i is the mean 100.5 + 2i.
    expect(forecast).toEqual(
      Array.from({ length: 6 }, (_, i) => ({
        datetime: emTime(HOUR_NOW + i * H),
        carbonIntensity: Math.round(100.5 + 2 * i),
      })),
    );
  });

  it('power breakdown of a half-hourly mix: energies add up, shares average', () => {
    const halves: { ts: number; mix: Record<string, number> }[] = [
      { ts: HOUR_NOW, mix: { wind: 10, gas: 30 } },
      { ts: HOUR_NOW + 1800, mix: { wind: 20, coal: 4 } },
      { ts: HOUR_NOW + H, mix: { wind: 1 } },
    ];
    expect(hourlyMixes(halves, 1800, 'MWh')).toEqual([
      { ts: HOUR_NOW, mix: { wind: 30, gas: 30, coal: 4 } },
    ]);
    expect(hourlyMixes(halves, 1800, '%')).toEqual([
      { ts: HOUR_NOW, mix: { wind: 15, gas: 15, coal: 2 } },
    ]);
    expect(hourlyMixes(halves, H, 'MWh')).toEqual(halves);
  });

  it('history of a zone more than 24 h behind: the 24 hours up to its newest reading', async () => {
    // Ten hours later, US's newest reading is 30 hours old: grid-intensity-go indexes result[0].
    const later = await buildApp({
      config: loadConfig({ RATE_LIMIT_PER_MINUTE: '100000' }),
      store,
      clock: () => NOW + 10 * H * 1000,
      forecasts: book,
    });
    try {
      const answer = await later.inject({
        url: `${EM}/carbon-intensity/history?zone=US`,
        headers,
      });
      expect(answer.statusCode).toBe(200);
      const body = answer.json() as { history: { datetime: string; carbonIntensity: number }[] };
      expect(body.history.map((point) => point.datetime)).toEqual([
        emTime(US_LAST - H),
        emTime(US_LAST),
      ]);
      expect(body.history[0]!.carbonIntensity).toBe(400);
      // No reading at all: 404 like latest, not an empty list.
      const none = await later.inject({ url: `${EM}/carbon-intensity/history?zone=IE`, headers });
      expect(none.statusCode).toBe(404);
      expect((none.json() as { error: string }).error).toContain('no recent data for zone IE');
    } finally {
      await later.close();
    }
  });
});

describe('Carbon Aware SDK, Electricity Maps data source (ElectricityMapsClient.cs)', () => {
  // Accept: application/json and `auth-token`; paths relative to the base URL; zone or lat/lon.
  const headers = { Accept: 'application/json', 'auth-token': 'token' };

  it('zones: a dictionary of zone keys whose access lists the paths it calls', async () => {
    const answer = await send(`${EM}/zones`, headers, 'emZones');
    const zones = answer.body as Record<string, { zoneName: string; access: string[] }>;
    expect(Object.keys(zones)).toHaveLength(45);
    for (const key of ['DE', 'DK-DK1', 'SE-SE4', 'US-CAL-CISO', 'IT-NO', 'GB', 'IT-CALA']) {
      for (const path of [
        'carbon-intensity/history',
        'carbon-intensity/forecast',
        'carbon-intensity/past-range',
      ]) {
        expect(zones[key]?.access, `${key} ${path}`).toContain(path);
      }
    }
    expect(zones['DK-DK1']!.zoneName).toBe('Denmark West (DK1)');
    // The SDK looks a zone up exactly and case-sensitively: only the upper-case Electricity Maps
    // keys are listed (docs/compat.md tells SDK users to configure those), not gridco2's codes.
    expect(Object.keys(zones).every((key) => key === key.toUpperCase())).toBe(true);
    expect(zones['DK-1']).toBeUndefined();
    expect(zones['dk-dk1']).toBeUndefined();
  });

  it('forecast by zone and by lat/lon (an Azure region point): zone, updatedAt, values', async () => {
    const byZone = await send(`${EM}/carbon-intensity/forecast?zone=DE`, headers, 'emForecast');
    // germanywestcentral, as the SDK's azure-regions.json gives it.
    const byPoint = await send(
      `${EM}/carbon-intensity/forecast?lat=50.110924&lon=8.682127`,
      headers,
      'emForecast',
    );
    expect(byPoint.status).toBe(200);
    expect(byPoint.body).toEqual(byZone.body);
    // A culture with a decimal comma (the SDK formats the forecast's lat/lon without a culture).
    const comma = await send(
      `${EM}/carbon-intensity/forecast?lat=50%2C110924&lon=8%2C682127`,
      headers,
      'emForecast',
    );
    expect(comma.body).toEqual(byZone.body);
  });

  it('history by zone and by lat/lon: every field of HistoryCarbonIntensityData', async () => {
    const byZone = await send(`${EM}/carbon-intensity/history?zone=DE`, headers, 'emHistory');
    const body = byZone.body as {
      zone: string;
      history: {
        carbonIntensity: number;
        datetime: string;
        updatedAt: string;
        createdAt: string;
        emissionFactorType: string;
        isEstimated: boolean;
        estimationMethod: null;
      }[];
    };
    expect(body.zone).toBe('DE');
    expect(body.history).toHaveLength(DE_LAST_24H.length);
    const first = body.history[0]!;
    expect(first).toEqual({
      zone: 'DE',
      carbonIntensity: Math.round(deValue(DE_LAST_24H[0]!)),
      datetime: emTime(DE_LAST_24H[0]!),
      updatedAt: emTime(DE_LAST_24H[0]! + H),
      createdAt: emTime(DE_LAST_24H[0]! + H),
      emissionFactorType: 'lifecycle',
      isEstimated: false,
      estimationMethod: null,
    });
    const byPoint = await send(
      `${EM}/carbon-intensity/history?lat=50.110924&lon=8.682127`,
      headers,
      'emHistory',
    );
    expect(byPoint.body).toEqual(byZone.body);
  });

  it('past-range by zone and lat/lon, with start/end as .NET and as RFC 3339 write them', async () => {
    const start = DE_LAST - 3 * H;
    const end = DE_LAST + H;
    const forms = [
      `start=${encodeURIComponent(dotnet(start))}&end=${encodeURIComponent(dotnet(end))}`,
      `start=${emTime(start)}&end=${emTime(end)}`,
      // An offset whose `+` arrived unescaped reads as a space; still the same instant.
      `start=${dotnet(start)}&end=${dotnet(end)}`,
    ];
    for (const query of forms) {
      const answer = await send(
        `${EM}/carbon-intensity/past-range?zone=DE&${query}`,
        headers,
        'emPastRange',
      );
      expect(answer.status, query).toBe(200);
      const data = (answer.body as { data: { datetime: string; carbonIntensity: number }[] }).data;
      expect(data.map((point) => point.datetime)).toEqual(
        [start, start + H, start + 2 * H, start + 3 * H]
          .filter((ts) => ts !== DE_INCOMPLETE)
          .map(emTime),
      );
    }
    const byPoint = await send(
      `${EM}/carbon-intensity/past-range?lat=50.110924&lon=8.682127&${forms[1]}`,
      headers,
      'emPastRange',
    );
    expect((byPoint.body as { zone: string }).zone).toBe('DE');
  });

  it('direct emission factors when asked, lifecycle otherwise', async () => {
    const answer = await send(
      `${EM}/carbon-intensity/latest?zone=DE&emissionFactorType=direct`,
      headers,
      'emLatest',
    );
    const body = answer.body as { carbonIntensity: number; emissionFactorType: string };
    expect(body.emissionFactorType).toBe('direct');
    expect(body.carbonIntensity).toBe(Math.round(deValue(DE_LAST) * 0.75));
  });

  it('a point far from every data centre: 404 in its format, with a hint to pass zone', async () => {
    const answer = await send(
      `${EM}/carbon-intensity/forecast?lat=36.6681&lon=-40.3889`,
      headers,
      'emError',
    );
    expect(answer.status).toBe(404);
    const error = (answer.body as { error: string }).error;
    expect(error).toContain('within 50 km');
    expect(error).toContain('pass zone');
  });
});

describe('Electricity Maps zone keys, power breakdown and errors', () => {
  it.each([
    ['DK-DK1', 'DK-DK1'],
    ['dk-1', 'DK-DK1'],
    ['SE-SE4', 'SE-SE4'],
    ['US-CAL-CISO', 'US-CAL-CISO'],
    ['IT-NO', 'IT-NO'],
    ['aws:eu-central-1', 'DE'],
  ])('zone=%s is answered as %s', async (zone, key) => {
    // past-range: 200 with the key even where we hold no data (history is then a 404).
    const answer = await send(
      `${EM}/carbon-intensity/past-range?zone=${zone}&start=2026-11-21T00:00:00Z&end=2026-11-21T06:00:00Z`,
      {},
      'emPastRange',
    );
    expect(answer.status).toBe(200);
    expect((answer.body as { zone: string }).zone).toBe(key);
  });

  it.each([
    ['/carbon-intensity/latest', 400, 'give zone'],
    ['/carbon-intensity/latest?zone=XX', 404, 'not served here'],
    ['/carbon-intensity/latest?zone=FR&zone=DE', 400, 'zone'],
    ['/carbon-intensity/latest?zone=DE&emissionFactorType=marginal', 400, 'emissionFactorType'],
    ['/carbon-intensity/latest?lat=91&lon=0', 400, 'lat'],
    ['/carbon-intensity/latest?lat=50.11', 400, 'lat and lon'],
    ['/carbon-intensity/latest?zone=IE', 404, 'no recent data'],
    ['/carbon-intensity/past-range?zone=DE&start=2026-11-20T00:00:00Z', 400, 'end'],
    ['/carbon-intensity/past-range?zone=DE&start=2026-11-20&end=2026-11-19', 400, 'before'],
    ['/carbon-intensity/past-range?zone=DE&start=2026-01-01&end=2026-11-19', 400, '100 days'],
    ['/carbon-intensity/forecast?zone=DE&horizonHours=5', 400, 'horizonHours'],
    ['/no-such-path', 404, 'not found'],
  ])('%s: %i in its format', async (path, status, words) => {
    const answer = await send(`${EM}${path}`, {}, 'emError');
    expect(answer.status).toBe(status);
    expect((answer.body as { error: string }).error).toContain(words);
  });

  it('power-breakdown latest and history, production-based, in MW', async () => {
    const latest = await send(`${EM}/power-breakdown/latest?zone=DE`, {}, 'emPowerLatest');
    const body = latest.body as {
      datetime: string;
      powerProductionBreakdown: Record<string, number>;
      powerProductionTotal: number;
      renewablePercentage: number;
      fossilFreePercentage: number;
    };
    // The fixed store's stand-in mix: 1 MWh of gas and 1 of coal in each hour.
    expect(body.datetime).toBe(emTime(DE_LAST));
    expect(body.powerProductionBreakdown.gas).toBe(1);
    expect(body.powerProductionBreakdown.coal).toBe(1);
    expect(body.powerProductionBreakdown.wind).toBe(0);
    expect(body.powerProductionTotal).toBe(2);
    expect(body.renewablePercentage).toBe(0);
    expect(body.fossilFreePercentage).toBe(0);
    const history = await send(`${EM}/power-breakdown/history?zone=DE`, {}, 'emPowerHistory');
    expect((history.body as { history: unknown[] }).history).toHaveLength(DE_LAST_24H.length);
  });
});

describe('Kubernetes carbon-intensity exporter (pkg/exporter/exporter.go)', () => {
  // GetCurrentForecastData(ctx, []string{region}, {DataStartAt: empty, DataEndAt: empty}):
  // GET {base}/emissions/forecasts/current?location={region}, Accept: application/json.
  it('reads [0].forecastData[].value and [0].dataStartAt for an Azure region', async () => {
    const answer = await send(
      `${CA}/emissions/forecasts/current?location=westus`,
      { Accept: 'application/json' },
      'caForecasts',
    );
    expect(answer.status).toBe(200);
    const [forecast] = answer.body as {
      location: string;
      dataStartAt: string;
      dataEndAt: string;
      windowSize: number;
      generatedAt: string;
      optimalDataPoints: { timestamp: string; value: number; duration: number }[];
      forecastData: { location: string; timestamp: string; value: number; duration: number }[];
    }[];
    expect(forecast!.location).toBe('westus');
    expect(forecast!.dataStartAt).toBe(dotnet(HOUR_NOW));
    expect(forecast!.dataEndAt).toBe(dotnet(FORECAST_START + 73 * H));
    expect(forecast!.generatedAt).toBe(dotnet(GENERATED_AT));
    expect(forecast!.windowSize).toBe(60);
    // From the interval in progress to the end of the forecast: 72 one-hour points.
    expect(forecast!.forecastData).toHaveLength(72);
    forecast!.forecastData.forEach((point, i) => {
      expect(point.timestamp).toBe(dotnet(HOUR_NOW + i * H));
      expect(point.value).toBe(forecastValue(i + 1));
      expect(point.duration).toBe(60);
      expect(point.location).toBe('westus');
    });
    const values = forecast!.forecastData.map((point) => point.value);
    expect(forecast!.optimalDataPoints).toHaveLength(1);
    expect(forecast!.optimalDataPoints[0]!.value).toBe(Math.min(...values));
    expect(book.asked.at(-1)).toEqual({ zone: 'US-CAISO', basis: 'lifecycle' });
  });

  it('a location without a forecast: 404 problem details naming it, never 204 or a dropped entry', async () => {
    const alone = await send(
      `${CA}/emissions/forecasts/current?location=westeurope`,
      { Accept: 'application/json' },
      'caProblem',
    );
    expect(alone.status).toBe(404);
    const problem = alone.body as { title: string; status: number; detail: string };
    expect(problem.status).toBe(404);
    expect(problem.title).toContain("'westeurope'");
    expect(problem.detail).toContain("'westeurope'");
    // With a location that has one: still the error, not a shorter list whose [0] is another.
    const mixed = await send(
      `${CA}/emissions/forecasts/current?location=westeurope&location=DE`,
      {},
      'caProblem',
    );
    expect(mixed.status).toBe(404);
  });
});

describe('Camunda carbon reductor (CarbonAwareApiClient: getOptimalDataPoints().get(0))', () => {
  it('dataEndAt = now + 30 min with windowSize=10 on hourly data: a window, not empty lists', async () => {
    const end = NOW_S + 30 * 60;
    const answer = await send(
      `${CA}/emissions/forecasts/current?location=DE` +
        `&dataEndAt=${encodeURIComponent(dotnet(end))}&windowSize=10`,
      { Accept: 'application/json' },
      'caForecasts',
    );
    expect(answer.status).toBe(200);
    const [forecast] = answer.body as {
      windowSize: number;
      optimalDataPoints: { timestamp: string; duration: number; value: number }[];
      forecastData: { timestamp: string; duration: number; value: number }[];
    }[];
    // One 10-minute window from the interval in progress (13:00-13:10); the next (14:00) ends
    // after dataEndAt (13:50).
    const index = (HOUR_NOW - FORECAST_START) / H;
    expect(forecast!.forecastData).toEqual([
      { location: 'DE', timestamp: dotnet(HOUR_NOW), duration: 10, value: forecastValue(index) },
    ]);
    expect(forecast!.optimalDataPoints[0]).toEqual(forecast!.forecastData[0]);
    expect(forecast!.windowSize).toBe(10);
  });

  it('a window starts at dataStartAt, lasts exactly windowSize and weights the overlap', async () => {
    const start = HOUR_NOW + 30 * 60; // 13:30
    const end = HOUR_NOW + 3 * H; // 16:00
    const answer = await send(
      `${CA}/emissions/forecasts/current?location=DE&dataStartAt=${encodeURIComponent(dotnet(start))}` +
        `&dataEndAt=${encodeURIComponent(dotnet(end))}&windowSize=90`,
      {},
      'caForecasts',
    );
    const [forecast] = answer.body as {
      forecastData: { timestamp: string; duration: number; value: number }[];
    }[];
    const index = (HOUR_NOW - FORECAST_START) / H;
    // 13:30-15:00 and 14:30-16:00: half of one interval and all of the next, one hour apart.
    const weighted = (i: number) =>
      round1((forecastValue(i) * 30 + forecastValue(i + 1) * 60) / 90);
    expect(forecast!.forecastData).toEqual([
      { location: 'DE', timestamp: dotnet(start), duration: 90, value: weighted(index) },
      { location: 'DE', timestamp: dotnet(start + H), duration: 90, value: weighted(index + 1) },
    ]);
  });

  it('windowSize=0 gives the intervals unchanged; a window longer than the scope gives none', async () => {
    const end = HOUR_NOW + 3 * H;
    const query = `location=DE&dataEndAt=${encodeURIComponent(dotnet(end))}`;
    const zero = await send(
      `${CA}/emissions/forecasts/current?${query}&windowSize=0`,
      {},
      'caForecasts',
    );
    const [points] = zero.body as { windowSize: number; forecastData: { duration: number }[] }[];
    expect(points!.forecastData).toHaveLength(3);
    expect(points!.forecastData.every((point) => point.duration === 60)).toBe(true);
    expect(points!.windowSize).toBe(60);
    const long = await send(
      `${CA}/emissions/forecasts/current?${query}&windowSize=240`,
      {},
      'caForecasts',
    );
    const [none] = long.body as { forecastData: unknown[]; optimalDataPoints: unknown[] }[];
    expect(none!.forecastData).toEqual([]);
    expect(none!.optimalDataPoints).toEqual([]);
  });
});

describe('Carbon Aware SDK WebAPI: the other routes', () => {
  it('forecasts/current with dataStartAt, dataEndAt and windowSize averages the windows', async () => {
    const start = HOUR_NOW + 2 * H;
    const end = HOUR_NOW + 8 * H;
    const answer = await send(
      `${CA}/emissions/forecasts/current?location=DE&location=aws:us-west-1` +
        `&dataStartAt=${encodeURIComponent(dotnet(start))}&dataEndAt=${encodeURIComponent(dotnet(end))}&windowSize=120`,
      {},
      'caForecasts',
    );
    const forecasts = answer.body as {
      location: string;
      forecastData: { timestamp: string; value: number }[];
    }[];
    expect(forecasts.map((forecast) => forecast.location)).toEqual(['DE', 'aws:us-west-1']);
    // 2-hour windows starting at 15:00 .. 19:00 (the last ends at 21:00 = dataEndAt).
    const first = (start - FORECAST_START) / H;
    expect(forecasts[0]!.forecastData.map((point) => point.value)).toEqual(
      [0, 1, 2, 3, 4].map((i) =>
        round1((forecastValue(first + i) + forecastValue(first + i + 1)) / 2),
      ),
    );
  });

  it('bylocations, bylocation and bylocations/best: EmissionsData of the observed values', async () => {
    const query = `time=${emTime(DE_LAST - 2 * H)}&toTime=${emTime(DE_LAST + H)}`;
    const all = await send(
      `${CA}/emissions/bylocations?location=DE&location=FR&${query}`,
      {},
      'caEmissionsData',
    );
    const list = all.body as { location: string; time: string; rating: number; duration: string }[];
    expect(list.filter((point) => point.location === 'DE').map((point) => point.rating)).toEqual(
      [DE_LAST - 2 * H, DE_LAST - H, DE_LAST].map((ts) => round1(deValue(ts))),
    );
    expect(list[0]!.duration).toBe('01:00:00');
    expect(list[0]!.time).toBe(dotnet(DE_LAST - 2 * H));
    const one = await send(
      `${CA}/emissions/bylocation?location=DE&${query}`,
      {},
      'caEmissionsData',
    );
    expect((one.body as unknown[]).length).toBe(3);
    const best = await send(
      `${CA}/emissions/bylocations/best?location=DE&location=FR&${query}`,
      {},
      'caEmissionsData',
    );
    const lowest = Math.min(...list.map((point) => point.rating));
    expect((best.body as { rating: number }[]).every((point) => point.rating === lowest)).toBe(
      true,
    );
    // Nothing in the window: 204.
    const none = await send(`${CA}/emissions/bylocations?location=IE`, {});
    expect(none.status).toBe(204);
  });

  it('bylocations, bylocation, best without time: the newest published point per location', async () => {
    const frLast = FR_FIRST + (FR_COUNT - 1) * H;
    const newest = await send(
      `${CA}/emissions/bylocations?location=DE&location=FR`,
      { Accept: 'application/json' },
      'caEmissionsData',
    );
    expect(newest.status).toBe(200);
    expect(
      (newest.body as { location: string; time: string; rating: number }[]).map((point) => [
        point.location,
        point.time,
        point.rating,
      ]),
    ).toEqual([
      ['DE', dotnet(DE_LAST), round1(deValue(DE_LAST))],
      ['FR', dotnet(frLast), 50 + ((FR_COUNT - 1) % 7)],
    ]);
    const one = await send(`${CA}/emissions/bylocation?location=DE`, {}, 'caEmissionsData');
    expect((one.body as { time: string }[]).map((point) => point.time)).toEqual([dotnet(DE_LAST)]);
    const best = await send(
      `${CA}/emissions/bylocations/best?location=DE&location=FR`,
      {},
      'caEmissionsData',
    );
    expect((best.body as { location: string }[]).map((point) => point.location)).toEqual(['FR']);
    // time alone (toTime = time in the SDK): the interval covering it.
    const at = await send(
      `${CA}/emissions/bylocation?location=DE&time=${encodeURIComponent(dotnet(DE_LAST - H + 1800))}`,
      {},
      'caEmissionsData',
    );
    expect((at.body as { time: string }[]).map((point) => point.time)).toEqual([
      dotnet(DE_LAST - H),
    ]);
  });

  it('toTime without time: 400 in the SDK validation format, errors.time', async () => {
    const answer = await send(
      `${CA}/emissions/bylocations?location=DE&toTime=${encodeURIComponent(dotnet(DE_LAST))}`,
      {},
      'caProblem',
    );
    expect(answer.status).toBe(400);
    const problem = answer.body as { title: string; errors: Record<string, string[]> };
    expect(problem.title).toBe('One or more validation errors occurred.');
    expect(problem.errors.time).toHaveLength(1);
  });

  it('average-carbon-intensity weights each interval by its overlap with the window', async () => {
    const start = DE_LAST - H + 1800;
    const end = DE_LAST + H;
    const answer = await send(
      `${CA}/emissions/average-carbon-intensity?location=germanywestcentral` +
        `&startTime=${encodeURIComponent(dotnet(start))}&endTime=${encodeURIComponent(dotnet(end))}`,
      {},
      'caAverage',
    );
    const expected = (round1(deValue(DE_LAST - H)) * 1800 + round1(deValue(DE_LAST)) * 3600) / 5400;
    expect(answer.body).toEqual({
      location: 'germanywestcentral',
      startTime: dotnet(start),
      endTime: dotnet(end),
      carbonIntensity: round1(expected),
    });
  });

  it('locations: cloud regions with their points, and the zone codes', async () => {
    const answer = await send(`${CA}/locations`, {}, 'caLocations');
    const locations = answer.body as Record<string, { latitude: number | null; name: string }>;
    expect(locations.westeurope).toEqual({ latitude: 52.3667, longitude: 4.9, name: 'westeurope' });
    expect(locations['DK-1']).toEqual({ latitude: null, longitude: null, name: 'DK-1' });
  });

  it.each([
    ['/emissions/forecasts/current', 400, 'location'],
    ['/emissions/forecasts/current?location=nowhere', 400, 'nowhere'],
    ['/emissions/forecasts/current?location=DE&windowSize=-5', 400, 'windowSize'],
    ['/emissions/forecasts/current?location=DE&dataStartAt=tomorrow', 400, 'dataStartAt'],
    ['/emissions/bylocations?location=DE&time=2026-11-20&toTime=2026-11-19', 400, 'time'],
    ['/emissions/average-carbon-intensity?location=DE&startTime=2026-11-20', 400, 'endTime'],
    ['/nothing-here', 404, 'not found'],
  ])('%s: %i as problem details', async (path, status, words) => {
    const answer = await send(`${CA}${path}`, {}, 'caProblem');
    expect(answer.status).toBe(status);
    const body = answer.body as {
      detail: string;
      status: number;
      errors: Record<string, string[]>;
    };
    expect(body.status).toBe(status);
    expect(JSON.stringify(body)).toContain(words);
  });
});

describe('timestamps as the Go and .NET clients write them', () => {
  // The Kubernetes exporter's Go client formats time.Time with String(): `2026-11-21 13:00:00
  // +0000 UTC`, or cut before the zone name; .NET sends `+00:00` whose `+` may arrive as a space.
  const forms = (ts: number) => {
    const base = new Date(ts * 1000).toISOString().slice(0, 19).replace('T', ' ');
    const shifted = new Date((ts - 5 * H) * 1000).toISOString().slice(0, 19).replace('T', ' ');
    return [
      `${base} +0000 UTC`,
      `${base} +0000`,
      `${base} GMT`,
      `${base.replace(' ', 'T')} 00:00`,
      `${base.replace(' ', 'T')}+0000`,
      `${shifted} -0500`,
      `${shifted.replace(' ', 'T')}-05:00`,
    ];
  };

  it.each(forms(HOUR_NOW + 2 * H))('forecasts/current dataStartAt=%s', async (form) => {
    const answer = await send(
      `${CA}/emissions/forecasts/current?location=DE&dataStartAt=${encodeURIComponent(form)}` +
        `&dataEndAt=${encodeURIComponent(dotnet(HOUR_NOW + 4 * H))}`,
      {},
      'caForecasts',
    );
    expect(answer.status).toBe(200);
    const [forecast] = answer.body as { dataStartAt: string; forecastData: unknown[] }[];
    expect(forecast!.dataStartAt).toBe(dotnet(HOUR_NOW + 2 * H));
    expect(forecast!.forecastData).toHaveLength(2);
  });

  it.each(forms(DE_LAST - H))('past-range start=%s', async (form) => {
    const answer = await send(
      `${EM}/carbon-intensity/past-range?zone=DE&start=${encodeURIComponent(form)}&end=${emTime(DE_LAST + H)}`,
      {},
      'emPastRange',
    );
    expect(answer.status).toBe(200);
    expect((answer.body as { data: { datetime: string }[] }).data.map((p) => p.datetime)).toEqual([
      emTime(DE_LAST - H),
      emTime(DE_LAST),
    ]);
  });

  it('a malformed time is still a 400 naming it', async () => {
    const answer = await send(
      `${CA}/emissions/forecasts/current?location=DE&dataStartAt=${encodeURIComponent('2026-11-21 13:00:00 +00000 UTC')}`,
      {},
      'caProblem',
    );
    expect(answer.status).toBe(400);
    expect((answer.body as { errors: Record<string, string[]> }).errors.dataStartAt).toHaveLength(
      1,
    );
  });
});

describe('rate limit', () => {
  it('counts compat requests with /v1, and refuses in each peer format', async () => {
    const limitedStore = await createStore('sqlite::memory:');
    const limited = await buildApp({
      config: loadConfig({ RATE_LIMIT_PER_MINUTE: '2' }),
      store: limitedStore,
      clock: () => NOW,
      forecasts: book,
    });
    try {
      const ok = await limited.inject({ url: '/v1/zones' });
      expect(ok.statusCode).toBe(200);
      const second = await limited.inject({ url: `${EM}/zones` });
      expect(second.statusCode).toBe(200);
      const em = await limited.inject({ url: `${EM}/carbon-intensity/latest?zone=DE` });
      expect(em.statusCode).toBe(429);
      expectPeerShape('emError', em.json());
      expect(em.headers['retry-after']).toBeDefined();
      const ca = await limited.inject({ url: `${CA}/locations` });
      expect(ca.statusCode).toBe(429);
      expectPeerShape('caProblem', ca.json());
    } finally {
      await limited.close();
      await limitedStore.close();
    }
  });
});

describe('GET /v1/zones/cloud and provider:region on /v1', () => {
  it('lists the table, valid against the OpenAPI document, and zone= takes provider:region', async () => {
    const api = new ApiClient(base);
    await api.loadOpenApi();
    const cloud = await api.get('/v1/zones/cloud');
    expect(cloud.status).toBe(200);
    const rows = (cloud.json as { data: { id: string; zone: string; source: string }[] }).data;
    expect(rows).toHaveLength(59);
    expect(rows.find((row) => row.id === 'aws:eu-central-1')?.zone).toBe('DE');
    const byRegion = await api.get('/v1/intensity?zone=aws:eu-central-1');
    const byCode = await api.get('/v1/intensity?zone=DE');
    expect(byRegion.status).toBe(200);
    expect(byRegion.text).toBe(byCode.text);
    const latest = await api.get('/v1/intensity/latest?zone=azure:germanywestcentral');
    expect((latest.json as { data: { zone: string }[] }).data[0]!.zone).toBe('DE');
    const unknown = await api.get('/v1/intensity?zone=aws:mars-north-1');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({
      error: 'unknown cloud region: aws:mars-north-1',
      hint: 'see /v1/zones/cloud for the cloud regions located in the 45 zones, e.g. zone=aws:eu-central-1',
    });
    const index = (await api.get('/v1')).json as { other_endpoints: Record<string, string> };
    expect(index.other_endpoints.cloud_zones).toContain('/v1/zones/cloud');
    expect(api.validated).toBeGreaterThanOrEqual(6);
  });
});

describe('from memory', () => {
  it('answers the same bodies when the reading cache serves', async () => {
    const cache = new ReadingCache(store, undefined, { pollMs: 60_000 });
    const cached = await buildApp({
      config: loadConfig({ RATE_LIMIT_PER_MINUTE: '100000' }),
      store,
      clock: () => NOW,
      forecasts: book,
      cache,
    });
    try {
      await cache.refresh();
      expect(cache.ready).toBe(true);
      for (const path of [
        `${EM}/carbon-intensity/latest?zone=DE`,
        `${EM}/carbon-intensity/history?zone=DE&emissionFactorType=direct`,
        `${EM}/carbon-intensity/past-range?zone=GB&start=2026-11-21T00:00:00Z&end=2026-11-21T14:00:00Z`,
        `${CA}/emissions/bylocations?location=DE`,
      ]) {
        const fromMemory = await cached.inject({ url: path });
        const fromStore = await fetch(`${base}${path}`);
        expect(fromMemory.statusCode, path).toBe(200);
        expect(fromMemory.body, path).toBe(await fromStore.text());
      }
    } finally {
      await cached.close();
      await cache.stop();
    }
  });
});
