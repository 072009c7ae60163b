import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.js';
import { SOURCES } from '../src/core/sources.js';
import { formatTs } from '../src/core/time.js';
import { round1 } from '../src/core/units.js';
import { EXTRA_ZONES, servableZones } from '../src/core/zone-registry.js';
import { ZONES } from '../src/core/zones.js';
import { buildApp } from '../src/http/app.js';
import { ingestSource } from '../src/ingest/ingest-source.js';
import { ReadingCache } from '../src/read/reading-cache.js';
import { startSimulator, type Simulator } from '../src/simulator/index.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import type { Store } from '../src/storage/store.js';
import { API_ERRORS } from '../src/http/contract/errors.js';
import { signalReads } from '../src/queries/signal-reads.js';
import { Reads } from '../src/read/reads.js';
import { startDeliverer } from '../src/webhooks/deliverer.js';
import { EventStreamClient } from './support/event-stream.js';
import { loggerInto } from './support/log-lines.js';
import { startWebhookReceiver, until } from './support/webhook-receiver.js';

/**
 * `ZONES=all` (extensions §16) against the upstream simulator over HTTP: a pass of every source
 * with FLOWS=on stores the flow graphs' extra nodes beside the zones; a server with ZONES=all
 * lists them after the 45 and serves their values, production and consumption, from memory and
 * from the store; a server without ZONES keeps to the 45, byte for byte.
 */

const H = 3600;
const NOW_MS = Date.UTC(2026, 10, 21, 13, 20, 0);
const NOW = NOW_MS / 1000;
const WINDOW_SECONDS = 48 * H;

const logger = loggerInto([]);
const dir = mkdtempSync(join(tmpdir(), 'gridco2-zones-all-'));
let simulator: Simulator;
let store: Store;
let cache: ReadingCache;
const apps: FastifyInstance[] = [];
let allFromMemory: string;
let allFromStore: FastifyInstance;
let contract: FastifyInstance;

const settings = (simulatorUrl: string, zones?: string) => ({
  DEMO: 'on',
  DATABASE_URL: 'sqlite::memory:',
  FLOWS: 'on',
  METRICS: 'off',
  WEBHOOKS: 'on',
  WEBHOOK_ALLOW: '127.0.0.1',
  RATE_LIMIT_PER_MINUTE: '1000000',
  ENTSOE_BASE_URL: `${simulatorUrl}/api`,
  ENTSOE_TOKEN: 'simulated',
  EIA_BASE_URL: `${simulatorUrl}/v2`,
  EIA_API_KEY: 'simulated',
  NESO_BASE_URL: simulatorUrl,
  ...(zones && { ZONES: zones }),
});

const serve = async (config: Config, withCache?: ReadingCache) => {
  const app = await buildApp({
    config,
    store,
    clock: () => NOW_MS,
    ...(withCache && { cache: withCache }),
  });
  apps.push(app);
  return app;
};

beforeAll(async () => {
  simulator = await startSimulator({ seed: 3, now: () => NOW_MS });
  const all = loadConfig(settings(simulator.url, 'all'));
  store = new SqliteStore(join(dir, 'store.db'));
  const clock = {
    now: () => NOW_MS,
    sleep: async () => undefined,
    timeout: () => new AbortController().signal,
  };
  const signal = new AbortController().signal;
  await Promise.all(
    SOURCES.map((source) =>
      ingestSource({ config: all, store, logger, source, clock, localUpstream: true }).pass(
        signal,
        WINDOW_SECONDS,
      ),
    ),
  );
  cache = new ReadingCache(store, undefined, { pollMs: 60_000, zones: servableZones('all') });
  await cache.refresh();
  const fromMemory = await serve(all, cache);
  // Over HTTP: the fast path answers from memory, as in production.
  allFromMemory = await fromMemory.listen({ port: 0, host: '127.0.0.1' });
  allFromStore = await serve(all);
  contract = await serve(loadConfig(settings(simulator.url)));
}, 120_000);

afterAll(async () => {
  for (const app of apps) await app.close();
  await cache?.stop();
  await store?.close();
  await simulator?.close();
  rmSync(dir, { recursive: true, force: true });
});

const getJson = async (path: string) => {
  const response = await fetch(`${allFromMemory}${path}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};
const injected = async (app: FastifyInstance, path: string) => {
  const response = await app.inject(path);
  return { status: response.statusCode, body: response.json<Record<string, unknown>>() };
};
type Row = { zone: string; ts: string; gco2eq_kwh: number; method: string };
const rows = (body: Record<string, unknown>) => body.data as Row[];
/** The extra nodes `/v1/zones` lists now (after the 45), by source. */
const servedExtra = async () => {
  const listed = (await getJson('/v1/zones')).body.data as { zone: string; source: string }[];
  return listed.slice(45);
};

describe('ZONES=all against the simulator (extensions §16)', () => {
  it('lists the 45, then every extra node with a recent complete mix, with its name and source', async () => {
    const { status, body } = await getJson('/v1/zones');
    expect(status).toBe(200);
    const listed = body.data as { zone: string; name: string; source: string }[];
    expect(listed.slice(0, 45).map((zone) => zone.zone)).toEqual(ZONES.map((zone) => zone.code));
    const extra = listed.slice(45);
    for (const code of ['EE', 'SK', 'US-AECI', 'US-DUK']) {
      expect(extra.map((zone) => zone.zone)).toContain(code);
    }
    expect(extra.find((zone) => zone.zone === 'SK')).toEqual({
      zone: 'SK',
      name: 'Slovakia',
      source: 'europe-tso',
      resolution_min: 60,
    });
    expect(extra.find((zone) => zone.zone === 'US-DUK')).toMatchObject({ source: 'us-agency' });
    // In the order of the extra nodes, each one a node with a complete mix stored.
    const order = EXTRA_ZONES.map((zone) => zone.code);
    const codes = extra.map((zone) => zone.zone);
    expect([...codes].sort((a, b) => order.indexOf(a) - order.indexOf(b))).toEqual(codes);
    for (const code of codes) {
      expect(await store.readingsInWindow(code, NOW - 7 * 24 * H, NOW + H, 1), code).toHaveLength(
        1,
      );
    }
    expect((await injected(allFromStore, '/v1/zones')).body).toEqual(body);
    // The replaced service's prefix serves them too, under its source names.
    const gridcarbon = await getJson('/compat/gridcarbon/v1/zones');
    expect((gridcarbon.body.data as { zone: string }[]).find((zone) => zone.zone === 'SK')).toEqual(
      { zone: 'SK', name: 'Slovakia', source: 'entsoe', resolution_min: 60 },
    );
  });

  it("serves an extra node's newest production and consumption values, as stored", async () => {
    const accountings = [
      { query: '', method: 'computed:v1', newest: () => store.latestPerZone() },
      {
        query: '&accounting=consumption',
        method: 'computed:v1:consumption',
        newest: () => store.latestConsumptionPerZone('lifecycle'),
      },
    ];
    for (const code of ['EE', 'SK', 'US-AECI']) {
      for (const { query, method, newest } of accountings) {
        const stored = (await newest()).find((reading) => reading.zone === code);
        if (!stored) throw new Error(`${code}: nothing stored${query}`);
        const path = `/v1/intensity/latest?zone=${code.toLowerCase()}${query}`;
        const latest = await getJson(path);
        expect(latest.status, path).toBe(200);
        expect(rows(latest.body)).toEqual([
          { zone: code, ts: formatTs(stored.ts), gco2eq_kwh: round1(stored.value), method },
        ]);
        expect((await injected(allFromStore, path)).body).toEqual(latest.body);
      }
    }
  });

  it('answers every zone of latest in the order of /v1/zones, from memory and from the store', async () => {
    const zones = rows((await getJson('/v1/zones')).body).map((zone) => zone.zone);
    const latest = await getJson('/v1/intensity/latest');
    const served = rows(latest.body).map((reading) => reading.zone);
    expect(served).toEqual(zones.filter((zone) => served.includes(zone)));
    expect(served).toContain('EE');
    expect(served).toContain('US-AECI');
    expect((await injected(allFromStore, '/v1/intensity/latest')).body).toEqual(latest.body);
    const traced = rows((await getJson('/v1/intensity/latest?accounting=consumption')).body);
    expect(traced.map((reading) => reading.zone)).toContain('SK');
    expect(traced.map((reading) => reading.zone)).not.toContain('GB');
  });

  it('serves windows, mixes, exports, levels and stats of an extra node', async () => {
    const from = encodeURIComponent(formatTs(NOW - 24 * H));
    const to = encodeURIComponent(formatTs(NOW));
    const window = `from=${from}&to=${to}`;
    const history = await getJson(`/v1/intensity?zone=SK&${window}`);
    expect(history.status).toBe(200);
    expect(history.body.count).toBeGreaterThan(0);
    const mix = await getJson(`/v1/mix?zone=SK&${window}`);
    expect(mix.status).toBe(200);
    expect(mix.body).toMatchObject({ zone: 'SK', unit: 'MWh' });
    expect(mix.body.count).toBe(history.body.count);
    const traced = await getJson(`/v1/mix?zone=US-AECI&${window}&accounting=consumption`);
    expect(traced.status).toBe(200);
    expect(traced.body.count).toBeGreaterThan(0);
    const stats = await getJson(`/v1/intensity/stats?zone=EE&${window}`);
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ zone: 'EE' });
    const level = await getJson('/v1/intensity/level?zone=EE&horizon_hours=0');
    expect(level.status).toBe(200);

    const exported = await fetch(`${allFromMemory}/v1/export?zones=all&${window}`);
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-disposition')).toContain('gridco2-all-');
    const lines = (await exported.text()).trim().split('\n');
    expect(lines.some((line) => line.startsWith('SK,'))).toBe(true);
    expect(lines.some((line) => line.startsWith('US-AECI,'))).toBe(true);
  });

  it('streams the readings of an extra node, asked by name or with every zone', async () => {
    const zoneOf = (data: string) => (JSON.parse(data) as { zone: string }).zone;
    const every = await EventStreamClient.open(`${allFromMemory}/v1/stream`, {
      'last-event-id': '0',
    });
    const one = await EventStreamClient.open(`${allFromMemory}/v1/stream?zones=us-aeci`, {
      'last-event-id': '0',
    });
    try {
      const readings = (client: EventStreamClient) =>
        client.events.filter((event) => event.event === 'reading').map((e) => zoneOf(e.data));
      await every.until('a reading of SK', () => readings(every).includes('SK'));
      await one.until('readings of US-AECI', () => readings(one).length >= 10);
      expect(new Set(readings(one))).toEqual(new Set(['US-AECI']));
    } finally {
      every.close();
      one.close();
    }
  });

  it("gives an extra node without a forecast the forecast endpoint's usual empty answer", async () => {
    const forecast = await getJson('/v1/intensity/forecast?zone=EE');
    expect(forecast.status).toBe(200);
    expect(forecast.body).toMatchObject({ zone: 'EE', count: 0, data: [] });
    expect(forecast.body.note).toEqual((await getJson('/v1/intensity/forecast?zone=DE')).body.note);
  });

  it("reports each served node's freshness in /v1/status, under its source", async () => {
    const extra = await servedExtra();
    const status = await getJson('/v1/status');
    const sources = status.body.sources as { source: string; zones: number }[];
    const zonesOf = (source: string) => sources.find((each) => each.source === source)?.zones;
    const extraOf = (source: string) => extra.filter((zone) => zone.source === source).length;
    expect(extraOf('europe-tso')).toBeGreaterThan(0);
    expect(extraOf('us-agency')).toBeGreaterThan(0);
    expect(zonesOf('europe-tso')).toBe(33 + extraOf('europe-tso'));
    expect(zonesOf('us-agency')).toBe(11 + extraOf('us-agency'));
    expect(zonesOf('uk-operator')).toBe(1);
    expect((await injected(allFromStore, '/v1/status')).body).toEqual(status.body);
    // Without ZONES, the 45's freshness as before.
    const contractSources = (await injected(contract, '/v1/status')).body.sources as {
      source: string;
      zones: number;
    }[];
    expect(contractSources.map((each) => each.zones)).toEqual([33, 11, 1]);
  });

  it('takes and delivers webhook subscriptions to a served node, by name and with all', async () => {
    const receiver = await startWebhookReceiver();
    const fromMemory = apps[0]!;
    // From the store, as server.ts wires it, with the app's served zones.
    const deliverer = startDeliverer({
      store,
      ...signalReads(
        new Reads(store, undefined, API_ERRORS.storeUnavailable, fromMemory.servedZones),
      ),
      zones: () => fromMemory.servedZones.current,
      forecasts: () => ({ forecast: () => null }),
      allow: ['127.0.0.1'],
      clock: () => NOW_MS,
      turnMs: 50,
    });
    const subscribe = (app: FastifyInstance, zones: string[] | 'all') =>
      app.inject({
        method: 'POST',
        url: '/v1/subscriptions',
        // Holds at once (below the highest value there is): it fires when created.
        payload: { url: receiver.url, zones, condition: { type: 'below', gco2eq_kwh: 100000 } },
      });
    try {
      const byName = await subscribe(fromMemory, ['ee', 'US-AECI']);
      expect(byName.statusCode, byName.body).toBe(201);
      expect(byName.json()).toMatchObject({ zones: ['EE', 'US-AECI'] });
      const every = await subscribe(fromMemory, 'all');
      expect(every.statusCode).toBe(201);
      // Without ZONES, an extra node is no zone to subscribe to.
      const refused = await subscribe(contract, ['EE']);
      expect(refused.statusCode).toBe(400);
      expect(refused.json().hint).toContain('zones');

      type Event = { subscription: string; zone: string };
      const events = () => receiver.receipts.map((receipt) => JSON.parse(receipt.body) as Event);
      const zonesOf = (id: string) =>
        new Set(
          events()
            .filter((event) => event.subscription === id)
            .map((event) => event.zone),
        );
      // `all`: the 45 and the served nodes alike.
      const wanted = {
        [byName.json().id]: ['EE', 'US-AECI'],
        [every.json().id]: ['DE', 'SK', 'US-DUK'],
      };
      await until(
        'events of both subscriptions',
        () =>
          Object.entries(wanted).every(([id, codes]) =>
            codes.every((code) => zonesOf(id).has(code)),
          )
            ? true
            : undefined,
        60_000,
      );
      expect(zonesOf(byName.json().id)).toEqual(new Set(['EE', 'US-AECI']));
      expect(zonesOf(every.json().id)).toContain('SK');
    } finally {
      await deliverer.stop();
      await receiver.close();
    }
  });

  it('takes a subscription to every served zone by name, one entry per zone served', async () => {
    const codes = (await servedExtra()).map((zone) => zone.zone);
    const served = [...ZONES.map((zone) => zone.code), ...codes];
    const subscribe = (app: FastifyInstance, zones: string[]) =>
      app.inject({
        method: 'POST',
        url: '/v1/subscriptions',
        payload: { url: 'http://127.0.0.1:9/hook', zones, condition: { type: 'published' } },
      });
    const refusal = {
      error: 'invalid subscription',
      hint: 'zones is "all" or a non-empty list of codes from /v1/zones',
    };
    // More than 45: every zone served, each once.
    const every = await subscribe(
      apps[0]!,
      served.map((code) => code.toLowerCase()),
    );
    expect(every.statusCode, every.body).toBe(201);
    expect(every.json().zones).toEqual(served);
    // One entry more than the zones served is more than a list of each once.
    const over = await subscribe(apps[0]!, [...served, 'DE']);
    expect({ status: over.statusCode, body: over.json() }).toEqual({ status: 400, body: refusal });
    // Without ZONES, as before: the 45 each once, and no entry more.
    const contractCodes = ZONES.map((zone) => zone.code);
    expect((await subscribe(contract, contractCodes)).statusCode).toBe(201);
    const overContract = await subscribe(contract, [...contractCodes, 'DE']);
    expect({ status: overContract.statusCode, body: overContract.json() }).toEqual({
      status: 400,
      body: refusal,
    });
  });

  it('counts served nodes in the per-zone metrics gauges', async () => {
    const app = await serve(
      loadConfig({ ...settings(simulator.url, 'all'), METRICS: 'on', METRICS_ADDR: 'public' }),
      cache,
    );
    const metrics = (await app.inject('/metrics')).body;
    const sample = (name: string, labels: string) =>
      metrics.split('\n').find((line) => line.startsWith(`${name}{`) && line.includes(labels));
    expect(sample('gridco2_zone_lag_seconds', 'zone="EE",source="europe-tso"')).toBeDefined();
    expect(sample('gridco2_zone_lag_seconds', 'zone="US-AECI",source="us-agency"')).toBeDefined();
    expect(sample('gridco2_zone_points', 'zone="SK"')).toMatch(/ [1-9]\d*$/);
    expect(sample('grid_intensity_carbon_average', 'location="EE"')).toBeDefined();
    const lagged = metrics
      .split('\n')
      .filter((line) => line.startsWith('gridco2_zone_lag_seconds{'));
    expect(lagged.length).toBeGreaterThan(45);
    expect(lagged.length).toBeLessThanOrEqual(45 + EXTRA_ZONES.length);
  });

  it('serves a node to the Electricity Maps, Home Assistant and Carbon Aware clients by its code', async () => {
    const EM = '/compat/electricitymaps/v3';
    const zones = await getJson(`${EM}/zones`);
    expect(zones.body.EE).toEqual({ zoneName: 'Estonia', access: expect.any(Array) });
    expect(Object.keys(zones.body)).toContain('US-AECI');
    const latest = await getJson(`${EM}/carbon-intensity/latest?zone=EE`);
    expect(latest.status).toBe(200);
    const newest = (
      await getJson('/v1/intensity/latest?zone=EE&accounting=consumption&basis=lifecycle')
    ).body;
    expect(latest.body).toMatchObject({
      zone: 'EE',
      datetime: rows(newest)[0]!.ts.replace('Z', '.000Z'),
    });
    const history = await getJson(`${EM}/power-breakdown/history?zone=us-aeci`);
    expect(history.status).toBe(200);
    expect((history.body.history as unknown[]).length).toBeGreaterThan(0);
    // Home Assistant: a home in Tallinn is in EE.
    const home = await getJson(`${EM}/home-assistant?lat=59.437&lon=24.745`);
    expect(home.body).toMatchObject({ status: 'ok', countryCode: 'EE' });
    const locations = await getJson('/compat/carbon-aware/locations');
    expect(locations.body.SK).toEqual({ latitude: null, longitude: null, name: 'SK' });
    const observed = await getJson('/compat/carbon-aware/emissions/bylocations?location=SK');
    expect(observed.status).toBe(200);
    expect(observed.body).toMatchObject([{ location: 'SK' }]);

    // Without ZONES: unknown, as before.
    const unknown = await injected(contract, `${EM}/carbon-intensity/latest?zone=EE`);
    expect(unknown.status).toBe(404);
    expect(Object.keys((await injected(contract, `${EM}/zones`)).body)).not.toContain('EE');
    const away = await injected(contract, `${EM}/home-assistant?lat=59.437&lon=24.745`);
    expect(away.body).toMatchObject({ status: 'no-data' });
  });

  it("says in the index that the flow graphs' nodes are served too", async () => {
    const description = (body: Record<string, unknown>) => body.description as string;
    const withoutZones = description((await injected(contract, '/v1')).body);
    const all = description((await getJson('/v1')).body);
    // Without ZONES, the sentence of the contract's index, as before.
    expect(withoutZones).toBe(
      'Hourly grid carbon intensity: how much CO2-equivalent one kWh of electricity carries on ' +
        '45 grids (33 European bidding zones, 11 US balancing authorities, Great Britain). ' +
        'Timestamps are UTC and name the start of the interval.',
    );
    expect(all).toBe(
      withoutZones.replace(
        'Great Britain).',
        "Great Britain), and on the flow graphs' other nodes with a complete mix in the last 7 days (/v1/zones).",
      ),
    );
  });

  it("keeps /v1/zones/cloud to the table's regions, each in one of the 45", async () => {
    const cloud = await getJson('/v1/zones/cloud');
    expect(cloud.body).toEqual((await injected(contract, '/v1/zones/cloud')).body);
    const codes = new Set(ZONES.map((zone) => zone.code));
    for (const region of cloud.body.data as { zone: string }[])
      expect(codes).toContain(region.zone);
  });

  it('without ZONES, keeps to the 45: an extra node is an unknown zone, as before', async () => {
    const zones = await injected(contract, '/v1/zones');
    expect(rows(zones.body).map((zone) => zone.zone)).toEqual(ZONES.map((zone) => zone.code));
    const latest = await injected(contract, '/v1/intensity/latest?zone=EE');
    expect(latest).toEqual({
      status: 404,
      body: { error: 'unknown or empty zone: EE', hint: 'see /v1/zones for the zone codes' },
    });
    const every = rows((await injected(contract, '/v1/intensity/latest')).body);
    expect(every.map((reading) => reading.zone)).not.toContain('EE');
    expect(every.length).toBeLessThanOrEqual(45);
    // A boundary node (no mix upstream: Türkiye) is never a zone, with ZONES=all either.
    const gone = await getJson('/v1/intensity/latest?zone=TR');
    expect(gone.status).toBe(404);
  });
});

describe('/v1/schedule with ZONES=all (extensions §5, §16)', () => {
  // A past window: the simulator's published values, no forecast needed (the app has none).
  // Inside the 48 hours ingested, before the newest day that US balancing authorities lag by.
  const earliest = NOW - 46 * H;
  const deadline = NOW - 22 * H;
  const window = `earliest=${encodeURIComponent(formatTs(earliest))}&deadline=${encodeURIComponent(formatTs(deadline))}`;
  type Option = { zone: string; start: string; end: string; gco2eq_kwh: number };
  type Schedule = { now: Option; best: Option; options: Option[]; note?: string };
  const scheduleOf = (body: Record<string, unknown>) => body as unknown as Schedule;
  const servedZones = async () =>
    (await getJson('/v1/zones')).body.data as { zone: string; resolution_min: number }[];

  it('plans over every served zone with zones=all, each on its own published values', async () => {
    const served = await servedZones();
    const path = `/v1/schedule?zones=all&duration_minutes=60&${window}`;
    const { status, body } = await getJson(path);
    expect(status, JSON.stringify(body)).toBe(200);
    const planned = scheduleOf(body);
    expect(served.length).toBeGreaterThan(45);
    // Every served zone has an option (the window holds published values of each), none other.
    expect(planned.note).toBeUndefined();
    expect(new Set(planned.options.map((option) => option.zone))).toEqual(
      new Set(served.map((zone) => zone.zone)),
    );
    // `now` runs in the first zone of /v1/zones, as without ZONES.
    expect(planned.now.zone).toBe('DE');
    expect(planned.best).toEqual(planned.options[0]);
    // Ascending; ties to the earlier start, then to the zone listed first.
    const place = new Map(served.map((zone, index) => [zone.zone, index]));
    const ranked = [...planned.options].sort(
      (a, b) =>
        a.gco2eq_kwh - b.gco2eq_kwh ||
        a.start.localeCompare(b.start) ||
        place.get(a.zone)! - place.get(b.zone)!,
    );
    expect(planned.options).toEqual(ranked);
    // An hourly zone's best hour is its lowest published value of the window's whole hours,
    // the earliest of equal ones, as /v1/intensity serves them.
    const firstHour = Math.ceil(earliest / H) * H;
    for (const zone of served.filter((each) => each.resolution_min === 60)) {
      const history = await getJson(
        `/v1/intensity?zone=${zone.zone}&from=${encodeURIComponent(formatTs(firstHour))}&to=${encodeURIComponent(formatTs(deadline - (deadline % H)))}`,
      );
      const lowest = rows(history.body).reduce((low, reading) =>
        reading.gco2eq_kwh < low.gco2eq_kwh ? reading : low,
      );
      const start = Date.parse(lowest.ts) / 1000;
      expect(planned.options.find((option) => option.zone === zone.zone)).toEqual({
        zone: zone.zone,
        start: formatTs(start),
        end: formatTs(start + H),
        gco2eq_kwh: lowest.gco2eq_kwh,
      });
    }
    // From the store, the same plan.
    expect((await injected(allFromStore, path)).body).toEqual(body);
    // The 45's windows are those of a server without ZONES.
    const withoutZones = scheduleOf((await injected(contract, path)).body);
    const contractCodes = new Set(ZONES.map((zone) => zone.code));
    expect(planned.options.filter((option) => contractCodes.has(option.zone))).toEqual(
      withoutZones.options,
    );
    expect(withoutZones.options).toHaveLength(45);
    expect(planned.now).toEqual(withoutZones.now);
  });

  it('takes served nodes in a list, in the order given, of any length up to every served zone', async () => {
    const all = scheduleOf(
      (await getJson(`/v1/schedule?zones=all&duration_minutes=60&${window}`)).body,
    );
    const optionOf = (zone: string) => all.options.find((option) => option.zone === zone);
    const listed = await getJson(
      `/v1/schedule?zones=${encodeURIComponent(' sk,EE ,us-aeci,ee,DE')}&duration_minutes=60&${window}`,
    );
    expect(listed.status).toBe(200);
    const planned = scheduleOf(listed.body);
    // The first listed is the home zone of `now`; a repeat is counted once.
    expect(planned.now.zone).toBe('SK');
    expect(planned.options.map((option) => option.zone).sort()).toEqual(
      ['DE', 'EE', 'SK', 'US-AECI'].sort(),
    );
    for (const option of planned.options) expect(option).toEqual(optionOf(option.zone));
    // Every served code, each twice (well over 45 entries): the plan of zones=all.
    const codes = (await servedZones()).map((zone) => zone.zone);
    const everyTwice = [...codes, ...codes.map((code) => code.toLowerCase())].join(',');
    const spelled = await getJson(`/v1/schedule?zones=${everyTwice}&duration_minutes=60&${window}`);
    expect(spelled.status).toBe(200);
    expect(spelled.body).toEqual(all);
  });

  it('documents a list of up to every zone served in the OpenAPI document', async () => {
    type Parameter = { name: string; in: string; description?: string };
    const parameters = async (app: FastifyInstance) => {
      const document = (await injected(app, '/v1/openapi.json')).body as {
        paths: Record<string, { get: { parameters: Parameter[] } }>;
      };
      return document.paths['/v1/schedule']!.get.parameters;
    };
    const all = await parameters(allFromStore);
    const withoutZones = await parameters(contract);
    const zonesOf = (listed: Parameter[]) => listed.find((each) => each.name === 'zones')!;
    expect(zonesOf(withoutZones).description).toContain('At most 45 (a repeat counted once).');
    expect(zonesOf(all).description).toBe(
      zonesOf(withoutZones).description!.replace('At most 45', 'At most one per zone served'),
    );
    // Every other parameter as without ZONES.
    const others = (listed: Parameter[]) => listed.filter((each) => each.name !== 'zones');
    expect(others(all)).toEqual(others(withoutZones));
  });

  it('refuses what a server without ZONES refuses, with the same errors', async () => {
    const tooLate = encodeURIComponent(formatTs(NOW + 73 * H));
    const short = `earliest=${encodeURIComponent(formatTs(NOW - 2 * H))}&deadline=${encodeURIComponent(formatTs(NOW - 2 * H + 1800))}`;
    const future = `earliest=${encodeURIComponent(formatTs(NOW))}&deadline=${encodeURIComponent(formatTs(NOW + 24 * H))}`;
    // Each with a served node, and as a server without ZONES is asked it with one of the 45.
    const cases = [
      ['zones=EE&accounting=consumption', 'zones=DE&accounting=consumption'],
      ['zones=all&accounting=consumption', 'zones=all&accounting=consumption'],
      ['zones=EE&accounting=traced', 'zones=DE&accounting=traced'],
      ['zones=EE,', 'zones=DE,'],
      ['zones=all,EE', 'zones=all,DE'],
      ['zones=EE&duration_minutes=4321', 'zones=DE&duration_minutes=4321'],
      [`zones=EE&deadline=${tooLate}`, `zones=DE&deadline=${tooLate}`],
      [`zones=EE&${short}`, `zones=DE&${short}`],
      ['zones=EE,TR', 'zones=DE,TR'],
      ['zones=', 'zones='],
      // No forecast of either: no values for a job in the future (the app has no forecasts).
      [`zones=EE,US-AECI&${future}`, `zones=DE,US-PJM&${future}`],
    ];
    for (const [all, contractQuery] of cases) {
      const answer = await getJson(`/v1/schedule?${all}`);
      const expected = await injected(contract, `/v1/schedule?${contractQuery}`);
      expect(expected.status, contractQuery).toBeGreaterThanOrEqual(400);
      // §15: the schedule takes no accounting.
      if (all?.includes('accounting')) expect(answer.status, all).toBe(400);
      expect(answer, all).toEqual(expected);
    }
    // Without ZONES, a served node is an unknown zone, as before.
    expect(await injected(contract, `/v1/schedule?zones=DE,EE&${window}`)).toEqual({
      status: 404,
      body: { error: 'unknown or empty zone: EE', hint: 'see /v1/zones for the zone codes' },
    });
  });
});
