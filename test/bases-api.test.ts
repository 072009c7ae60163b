import { mkdtempSync, rmSync } from 'node:fs';
import { round1 } from '../src/core/units.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { intensityOfMix } from '../src/core/method.js';
import type { StoredMix, StoredReading } from '../src/core/reading.js';
import { ZONES } from '../src/core/zones.js';
import { startServer, type RunningServer } from '../src/server.js';
import { createStore } from '../src/storage/create-store.js';
import { ApiClient } from './support/api-client.js';
import { gbForecast, H, HOUR_NOW, iso, NOW } from './support/fixed-store.js';
import { createThrowawayDatabase, isPostgresAvailable } from './support/postgres.js';
import { computedReading } from './support/computed-reading.js';

/**
 * Black-box suite of the extensions' sections 0 to 3 (basis, /v1/mix, /v1/factors, Link on
 * truncation) over real HTTP, on SQLite and PostgreSQL, from memory (the fast path) and from the
 * store (the framework routes); every response validated against the OpenAPI document.
 */

/** Amounts with one decimal, as served: recomputing from /v1/mix then sees exact inputs. */
const amount = (seed: number) => round1(50 + ((seed * 7919) % 997) / 3);

// Every non-GB zone: 3 published hours with a mix of five fuels, then one incomplete hour.
const FIRST = HOUR_NOW - 10 * H;
const mixOf = (zoneIndex: number, hour: number): Record<string, number> => ({
  coal: amount(zoneIndex * 31 + hour),
  gas: amount(zoneIndex * 17 + hour * 3),
  nuclear: amount(zoneIndex * 5 + 1),
  'wind-onshore': amount(zoneIndex * 11 + hour * 7),
  solar: hour === 1 ? 0 : amount(zoneIndex + hour),
});
const READINGS: StoredReading[] = [];
ZONES.forEach((zone, zoneIndex) => {
  if (zone.code === 'GB') return;
  for (let hour = 0; hour < 3; hour++) {
    READINGS.push(computedReading(zone.code, FIRST + hour * H, mixOf(zoneIndex, hour)));
  }
  READINGS.push({
    zone: zone.code,
    ts: FIRST + 3 * H,
    value: 820,
    method: 'computed:v1',
    complete: false,
    mix: { coal: 10 },
    lifecycle: null,
    direct: null,
  });
});
// FR also has 5100 earlier hours, for truncation of /v1/mix.
const FR_LONG = 5100;
const FR_START = FIRST - FR_LONG * H;
for (let i = 0; i < FR_LONG; i++) {
  READINGS.push(computedReading('FR', FR_START + i * H, { gas: 10 + (i % 5), nuclear: 90 }));
}
// GB: the operator's figures for 6 half-hours, then a forecast; its mix (in %) for 5 of them
// and for one half-hour the operator has not settled; one with no included share at all.
const GB_FIRST = HOUR_NOW - 4 * H;
const GB_SHARES = [
  {
    biomass: 5.1,
    coal: 0,
    gas: 30.2,
    nuclear: 14.9,
    hydro: 1.2,
    solar: 8.3,
    'wind-onshore': 28.4,
    other: 0.6,
  },
  {
    biomass: 4.8,
    coal: 1,
    gas: 35,
    nuclear: 15,
    hydro: 1,
    solar: 0,
    'wind-onshore': 31.2,
    other: 1,
  },
  {
    biomass: 6,
    coal: 0,
    gas: 20.5,
    nuclear: 16,
    hydro: 2,
    solar: 12.5,
    'wind-onshore': 40,
    other: 0,
  },
  { biomass: 0, coal: 0, gas: 0, nuclear: 0, hydro: 0, solar: 0, 'wind-onshore': 0, other: 0 },
  { biomass: 5, coal: 0, gas: 25, nuclear: 15, hydro: 1, solar: 10, 'wind-onshore': 35, other: 1 },
  { biomass: 5, coal: 0, gas: 27, nuclear: 15, hydro: 1, solar: 9, 'wind-onshore': 33, other: 1 },
];
const GB_OPERATOR = [120, 131, 98, 110, 115, 117];
const GB_READINGS: StoredReading[] = GB_OPERATOR.map((value, i) => ({
  zone: 'GB',
  ts: GB_FIRST + i * 1800,
  value,
  method: 'upstream:uk-operator:actual',
  complete: true,
  mix: null,
  lifecycle: null,
  direct: null,
}));
const gbMix = (i: number): StoredMix => {
  const mix = GB_SHARES[i]!;
  const lifecycle = intensityOfMix(mix, 'lifecycle');
  return {
    zone: 'GB',
    ts: GB_FIRST + i * 1800,
    mix,
    lifecycle,
    direct: lifecycle === null ? null : intensityOfMix(mix, 'direct'),
  };
};
// Half-hour 5 has no operator figure (settled later); half-hour 4 has none of its own mix yet.
GB_READINGS.pop();
const GB_MIXES = [0, 1, 2, 3, 5].map(gbMix);
const GB_FORECAST = gbForecast(GB_FIRST + 6 * 1800, 142);

const postgres = await isPostgresAvailable('basis and mix API suite (PostgreSQL)');
const backends = ['sqlite', ...(postgres ? ['postgres'] : [])] as const;
const modes = ['ready', 'off'] as const;
const cases = backends.flatMap((backend) => modes.map((cache) => ({ backend, cache })));

describe.each(cases)('extensions 0-3 on $backend, reading cache $cache', ({ backend, cache }) => {
  let server: RunningServer;
  let api: ApiClient;
  let cleanup: () => Promise<void> = async () => undefined;
  const json = <T>(response: { json: unknown }) => response.json as T;

  beforeAll(async () => {
    let databaseUrl: string;
    if (backend === 'sqlite') {
      const dir = mkdtempSync(join(tmpdir(), 'gridco2-bases-'));
      databaseUrl = `sqlite:${join(dir, 'bases.db')}`;
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    } else {
      const database = await createThrowawayDatabase();
      databaseUrl = database.url;
      cleanup = () => database.drop();
    }
    const store = await createStore(databaseUrl);
    await store.upsertReadings([...READINGS, ...GB_READINGS]);
    await store.upsertMixes(GB_MIXES);
    await store.upsertForecasts([GB_FORECAST]);
    await store.close();
    const config = loadConfig({
      PORT: '0',
      DATABASE_URL: databaseUrl,
      INGEST: 'off',
      LOG_LEVEL: 'silent',
      RATE_LIMIT_PER_MINUTE: '1000000',
    });
    server = await startServer(config, { clock: () => NOW, cache });
    api = new ApiClient(server.url);
    await api.loadOpenApi();
  });
  afterAll(async () => {
    await server?.close();
    await cleanup();
  });

  interface Latest {
    data: { zone: string; ts: string; gco2eq_kwh: number; method: string }[];
  }
  interface History {
    count: number;
    truncated: boolean;
    note?: string;
    data: { ts: string; gco2eq_kwh: number; method: string }[];
  }
  interface Mix {
    zone: string;
    from: string;
    to: string;
    unit: string;
    count: number;
    truncated: boolean;
    note?: string;
    data: {
      ts: string;
      generation: Record<string, number>;
      renewable_pct: number;
      low_carbon_pct: number;
    }[];
  }
  interface Factors {
    unit: string;
    bases: Record<
      string,
      { method: string; factors: Record<string, { value: number; source: string }> }
    >;
    mappings: Record<string, Record<string, string>>;
  }

  describe('basis on /v1/intensity/latest and /v1/intensity', () => {
    it('lifecycle: every zone computed:v1, GB from its mix, half-hourly', async () => {
      const latest = json<Latest>(await api.get('/v1/intensity/latest?basis=lifecycle'));
      expect(latest.data.map((reading) => reading.zone)).toEqual(ZONES.map((zone) => zone.code));
      expect(new Set(latest.data.map((reading) => reading.method))).toEqual(
        new Set(['computed:v1']),
      );
      const gb = latest.data.find((reading) => reading.zone === 'GB')!;
      // The newest published mix: half-hour 5 (4 has no mix, 3 has no included share).
      expect(gb).toEqual({
        zone: 'GB',
        ts: iso(GB_FIRST + 5 * 1800),
        gco2eq_kwh: round1(gbMix(5).lifecycle!),
        method: 'computed:v1',
      });
      const history = json<History>(
        await api.get(`/v1/intensity?zone=GB&basis=lifecycle&from=${iso(GB_FIRST)}`),
      );
      expect(history.data.map((point) => point.ts)).toEqual(
        [0, 1, 2, 5].map((i) => iso(GB_FIRST + i * 1800)),
      );
    });

    it('direct: every zone computed:v1:direct from the same mix', async () => {
      const latest = json<Latest>(await api.get('/v1/intensity/latest?basis=direct'));
      expect(latest.data).toHaveLength(45);
      expect(new Set(latest.data.map((reading) => reading.method))).toEqual(
        new Set(['computed:v1:direct']),
      );
      const de = json<Latest>(await api.get('/v1/intensity/latest?zone=de&basis=direct')).data;
      expect(de).toEqual([
        {
          zone: 'DE',
          ts: iso(FIRST + 2 * H),
          gco2eq_kwh: round1(intensityOfMix(mixOf(0, 2), 'direct')!),
          method: 'computed:v1:direct',
        },
      ]);
    });

    it("no basis: each zone's own value, GB the operator's with its forecast", async () => {
      const latest = json<Latest>(await api.get('/v1/intensity/latest'));
      expect(latest.data.find((reading) => reading.zone === 'GB')).toEqual({
        zone: 'GB',
        ts: iso(GB_FORECAST.ts),
        gco2eq_kwh: 142,
        method: 'upstream:uk-operator:forecast',
      });
      const history = json<History>(await api.get(`/v1/intensity?zone=GB&from=${iso(GB_FIRST)}`));
      expect(history.data.map((point) => point.gco2eq_kwh)).toEqual([120, 131, 98, 110, 115, 142]);
    });

    it.each(['', 'LIFECYCLE', 'operator', 'lifecycle,direct', ' direct'])(
      'rejects basis=%j with a hint naming the two values',
      async (basis) => {
        for (const path of [
          `/v1/intensity/latest?basis=${encodeURIComponent(basis)}`,
          `/v1/intensity?zone=DE&basis=${encodeURIComponent(basis)}`,
        ]) {
          const response = await api.get(path);
          expect(response.status).toBe(400);
          expect(response.json).toEqual({
            error: 'invalid param: basis',
            hint: 'use basis=lifecycle or basis=direct, or leave it out',
          });
          expect(response.headers.get('cache-control')).toBe('no-store');
        }
      },
    );

    it('rejects a repeated basis, and a zone without data on a basis is 404 on latest', async () => {
      const repeated = await api.get('/v1/intensity?zone=DE&basis=direct&basis=direct');
      expect(json<{ error: string }>(repeated).error).toBe('invalid param: basis');
      expect((await api.get('/v1/intensity/latest?zone=XX&basis=direct')).status).toBe(404);
    });

    it('caches and tags each basis apart', async () => {
      const own = await api.get('/v1/intensity?zone=DE');
      const direct = await api.get('/v1/intensity?zone=DE&basis=direct');
      expect(own.headers.get('etag')).not.toBe(direct.headers.get('etag'));
      expect(direct.headers.get('cache-control')).toBe('max-age=600');
      const again = await api.get('/v1/intensity?zone=DE&basis=direct', {
        'if-none-match': direct.headers.get('etag')!,
      });
      expect(again.status).toBe(304);
    });
  });

  describe('GET /v1/mix', () => {
    it('gives the generation of each published interval, with its shares', async () => {
      const response = await api.get(`/v1/mix?zone=de&from=${iso(FIRST)}&to=${iso(FIRST + 4 * H)}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('max-age=600');
      expect(response.headers.get('etag')).toMatch(/^"/);
      const body = json<Mix>(response);
      expect(Object.keys(body)).toEqual([
        'zone',
        'from',
        'to',
        'unit',
        'count',
        'truncated',
        'data',
      ]);
      expect(body).toMatchObject({ zone: 'DE', unit: 'MWh', count: 3, truncated: false });
      // The incomplete fourth hour is never listed.
      expect(body.data.map((point) => point.ts)).toEqual([0, 1, 2].map((h) => iso(FIRST + h * H)));
      const first = body.data[0]!;
      const mix = mixOf(0, 0);
      expect(first.generation).toEqual({
        coal: mix.coal,
        gas: mix.gas,
        nuclear: mix.nuclear,
        solar: mix.solar,
        wind_onshore: mix['wind-onshore'],
      });
      const total = mix.coal! + mix.gas! + mix.nuclear! + mix.solar! + mix['wind-onshore']!;
      const renewable = mix.solar! + mix['wind-onshore']!;
      expect(first.renewable_pct).toBe(round1((100 * renewable) / total));
      expect(first.low_carbon_pct).toBe(round1((100 * (renewable + mix.nuclear!)) / total));
      // A category with a value of 0 in the interval is listed with it.
      expect(body.data[1]!.generation.solar).toBe(0);
    });

    it('gives GB in % of generation, imports never listed', async () => {
      const body = json<Mix>(await api.get(`/v1/mix?zone=GB&from=${iso(GB_FIRST)}`));
      expect(body.unit).toBe('%');
      expect(body.data.map((point) => point.ts)).toEqual(
        [0, 1, 2, 5].map((i) => iso(GB_FIRST + i * 1800)),
      );
      expect(body.data[0]!.generation).toEqual({
        coal: 0,
        gas: 30.2,
        biomass: 5.1,
        hydro: 1.2,
        nuclear: 14.9,
        solar: 8.3,
        wind_onshore: 28.4,
        other: 0.6,
      });
    });

    it('truncates at 5000 points with a note and a Link to the rest', async () => {
      const response = await api.get(`/v1/mix?zone=FR&from=${iso(FR_START)}&to=${iso(FIRST)}`);
      const body = json<Mix>(response);
      expect(body.count).toBe(5000);
      expect(body.truncated).toBe(true);
      const next = iso(FR_START + 5000 * H);
      expect(body.note).toContain(`from=${next}`);
      expect(response.headers.get('link')).toBe(
        `</v1/mix?zone=FR&from=${next}&to=${iso(FIRST)}>; rel="next"`,
      );
      const rest = json<Mix>(await api.get(`/v1/mix?zone=FR&from=${next}&to=${iso(FIRST)}`));
      expect(rest).toMatchObject({ count: FR_LONG - 5000, truncated: false });
    });

    it('defaults to the 24 hours before the request, and answers 200 empty beyond history', async () => {
      const body = json<Mix>(await api.get('/v1/mix?zone=PL'));
      expect(body.to).toBe(iso(NOW / 1000));
      expect(body.from).toBe(iso(NOW / 1000 - 24 * H));
      expect(body.count).toBe(3);
      const empty = json<Mix>(await api.get('/v1/mix?zone=PL&from=2020-01-01&to=2020-01-02'));
      expect(empty).toMatchObject({ count: 0, truncated: false, data: [] });
    });

    it.each([
      ['/v1/mix', 400, 'missing required param: zone'],
      ['/v1/mix?zone=', 400, 'missing required param: zone'],
      ['/v1/mix?zone=XX', 404, 'unknown or empty zone: XX'],
      ['/v1/mix?zone=DE&from=junk', 400, 'invalid param: from'],
      [
        '/v1/mix?zone=DE&from=2026-11-21&to=2026-11-20',
        400,
        'invalid window: from must be before to',
      ],
      ['/v1/mix?zone=DE&zone=FR', 400, 'invalid param: zone'],
    ])('%s -> %i %s', async (path, status, error) => {
      const response = await api.get(path);
      expect(response.status).toBe(status);
      expect(json<{ error: string }>(response).error).toBe(error);
      expect(response.headers.get('cache-control')).toBe('no-store');
    });

    it('ignores a basis (a mix has none) and unknown parameters', async () => {
      const plain = await api.get(`/v1/mix?zone=DE&from=${iso(FIRST)}`);
      const extra = await api.get(`/v1/mix?zone=DE&from=${iso(FIRST)}&basis=direct&x=1`);
      expect(extra.text).toBe(plain.text);
    });
  });

  describe('GET /v1/factors', () => {
    it('lists both factor tables with sources, and every upstream code mapping', async () => {
      const response = await api.get('/v1/factors');
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('public, max-age=86400');
      expect(response.headers.get('ratelimit-limit')).toBeNull();
      const body = json<Factors>(response);
      expect(body.unit).toBe('gCO2eq/kWh');
      expect(body.bases.lifecycle!.method).toBe('computed:v1');
      expect(body.bases.direct!.method).toBe('computed:v1:direct');
      const value = (basis: string, category: string) =>
        body.bases[basis]!.factors[category]!.value;
      expect([
        value('lifecycle', 'coal'),
        value('lifecycle', 'solar'),
        value('lifecycle', 'nuclear'),
      ]).toEqual([820, 48, 12]);
      expect(
        ['coal', 'gas', 'oil', 'other', 'biomass', 'nuclear', 'wind_onshore'].map((c) =>
          value('direct', c),
        ),
      ).toEqual([760, 370, 406, 575, 0, 0, 0]);
      for (const basis of ['lifecycle', 'direct']) {
        expect(Object.keys(body.bases[basis]!.factors)).toHaveLength(12);
        for (const factor of Object.values(body.bases[basis]!.factors)) {
          expect(factor.source.length).toBeGreaterThan(5);
        }
      }
      expect(body.mappings['europe-tso']).toMatchObject({
        B10: 'excluded',
        B25: 'excluded',
        B19: 'wind_onshore',
      });
      expect(body.mappings['us-agency']).toMatchObject({ BAT: 'excluded', WND: 'wind_onshore' });
      expect(body.mappings['uk-operator']).toMatchObject({
        imports: 'excluded',
        wind: 'wind_onshore',
      });
    });
  });

  it('lists /v1/mix and /v1/factors in the index', async () => {
    const index = json<{ other_endpoints: Record<string, string> }>(await api.get('/v1'));
    expect(index.other_endpoints.mix).toContain('/v1/mix');
    expect(index.other_endpoints.factors).toContain('/v1/factors');
  });

  it('gives, for every zone, the values /v1/mix and /v1/factors recompute to', async () => {
    const factors = json<Factors>(await api.get('/v1/factors'));
    const from = iso(Math.min(FIRST, GB_FIRST));
    for (const zone of ZONES) {
      const mix = json<Mix>(await api.get(`/v1/mix?zone=${zone.code}&from=${from}`));
      expect(mix.count, zone.code).toBeGreaterThan(0);
      for (const basis of ['lifecycle', 'direct']) {
        const served = json<History>(
          await api.get(`/v1/intensity?zone=${zone.code}&basis=${basis}&from=${from}`),
        );
        const table = factors.bases[basis]!.factors;
        const recomputed = mix.data.map((point) => {
          let emissions = 0;
          let total = 0;
          for (const [category, amount] of Object.entries(point.generation)) {
            emissions += amount * table[category]!.value;
            total += amount;
          }
          return { ts: point.ts, gco2eq_kwh: round1(emissions / total) };
        });
        expect(
          served.data.map(({ ts, gco2eq_kwh }) => ({ ts, gco2eq_kwh })),
          `${zone.code} ${basis}`,
        ).toEqual(recomputed);
      }
    }
    expect(api.validated).toBeGreaterThan(0);
  });
});
