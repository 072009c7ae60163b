import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { Basis } from '../src/core/factors.js';
import { round1 } from '../src/core/units.js';
import type { ForecastBook, ZoneForecast } from '../src/forecast/book.js';
import { buildApp } from '../src/http/app.js';
import { API_ERRORS } from '../src/http/contract/errors.js';
import { signalReads } from '../src/queries/signal-reads.js';
import { ReadingCache } from '../src/read/reading-cache.js';
import { Reads } from '../src/read/reads.js';
import { createStore } from '../src/storage/create-store.js';
import type { Store } from '../src/storage/store.js';
import { startDeliverer, type Deliverer } from '../src/webhooks/deliverer.js';
import { EventStreamClient } from './support/event-stream.js';
import { computed, H, HOUR_NOW, iso, NOW } from './support/fixed-store.js';
import { startWebhookReceiver, until, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * Issue 39: a value whose exact decimal is a tie is served the same way by every path that emits
 * it. 2491/20 = 124.55 is stored; its binary double lies just below the tie (124.549999...), so
 * `toFixed(1)` gives 124.5 where the one rounding rule (core/units.ts) serves 124.6. Each path
 * must show 124.6, or the figure its peer format derives from it (Electricity Maps' whole
 * `carbonIntensity`: 125). Derived figures that land on the same kind of tie are checked too:
 * 0.5 kWh x 249.1 = 124.55 g (stats' `emissions_g`, schedule's `savings.grams`).
 */

const TIE = 2491 / 20;
const SERVED = 124.6;
/** Electricity Maps' carbonIntensity is a whole number, rounded from the served 124.6. */
const WHOLE = 125;

/** DE's newest hour holds the tie; the hour before it 373.7 (249.1 above the served tie). */
const T_TIE = HOUR_NOW - 2 * H;
const T_BEFORE = T_TIE - H;
/** An hour of 249.1: 0.5 kWh over it emits the tie 124.55 g. */
const T_HALF_KWH = T_TIE - 3 * H;
const FIRST = T_TIE - 35 * 24 * H;

const DE = Array.from({ length: (T_TIE - FIRST) / H + 1 }, (_, i) => {
  const ts = FIRST + i * H;
  const special = new Map([
    [T_TIE, TIE],
    [T_BEFORE, 373.7],
    [T_HALF_KWH, 249.1],
  ]);
  // 35 days, enough reference for a level; the other values are whole and far from any tie.
  return computed('DE', ts, special.get(ts) ?? 150 + (i % 40) * 5);
});

/** A forecast of the tie for every hour after DE's newest reading. */
function deForecast(basis: Basis | undefined): ZoneForecast {
  const values = new Float64Array(48).fill(TIE);
  return {
    zone: 'DE',
    basis: basis ?? 'lifecycle',
    model: 'test@1',
    generatedAt: NOW / 1000,
    startTs: T_TIE + H,
    stepSeconds: H,
    values,
    p10: values,
    p90: values,
  };
}
const BOOK: ForecastBook = {
  forecast: (zone, basis) => (zone === 'DE' ? deForecast(basis) : null),
};

const q = (ts: number) => encodeURIComponent(iso(ts));
const EM = '/compat/electricitymaps/v3';
const CA = '/compat/carbon-aware';
const emTime = (ts: number) => new Date(ts * 1000).toISOString();
const dotnetTime = (ts: number) => `${iso(ts).slice(0, -1)}+00:00`;

/** `value`'s member at `keys`, undefined where any is missing. */
const dig = (value: unknown, ...keys: (string | number)[]): unknown =>
  keys.reduce<unknown>(
    (at, key) => (at as Record<string | number, unknown> | undefined)?.[key],
    value,
  );
/** The entry of a JSON list whose `key` is `equals`. */
const entry = (list: unknown, key: string, equals: string): unknown =>
  (list as Record<string, unknown>[]).find((item) => item[key] === equals);
const json = (body: string): unknown => JSON.parse(body);

interface ServedTie {
  readonly path: string;
  readonly value: (body: string) => unknown;
  readonly expected: number;
}

/** Every path that emits the tie (or a figure that lands on it), and what it must show. */
const SERVED_TIES: readonly ServedTie[] = [
  {
    path: '/v1/intensity/latest?zone=DE',
    value: (body) => dig(json(body), 'data', 0, 'gco2eq_kwh'),
    expected: SERVED,
  },
  {
    path: `/v1/intensity?zone=DE&from=${q(T_TIE - 24 * H)}&to=${q(HOUR_NOW)}`,
    value: (body) => dig(entry(dig(json(body), 'data'), 'ts', iso(T_TIE)), 'gco2eq_kwh'),
    expected: SERVED,
  },
  {
    path: `/v1/export?zones=DE&from=${q(T_TIE - 24 * H)}&to=${q(HOUR_NOW)}&format=csv`,
    value: (body) => {
      const [header, ...rows] = body
        .trim()
        .split('\n')
        .map((line) => line.split(','));
      const row = rows.find((cells) => cells[header!.indexOf('ts')] === iso(T_TIE));
      return Number(row?.[header!.indexOf('gco2eq_kwh')]);
    },
    expected: SERVED,
  },
  {
    path: `/v1/export?zones=DE&from=${q(T_TIE - 24 * H)}&to=${q(HOUR_NOW)}&format=ndjson`,
    value: (body) => dig(entry(body.trim().split('\n').map(json), 'ts', iso(T_TIE)), 'gco2eq_kwh'),
    expected: SERVED,
  },
  {
    path: `/v1/schedule?zones=DE&duration_minutes=60&earliest=${q(T_BEFORE)}&deadline=${q(T_TIE + H)}`,
    value: (body) => dig(json(body), 'best', 'gco2eq_kwh'),
    expected: SERVED,
  },
  {
    // Saving 373.7 - 124.6 = 249.1 gCO2eq/kWh, for 0.5 kWh: the tie 124.55 g.
    path: `/v1/schedule?zones=DE&duration_minutes=60&earliest=${q(T_BEFORE)}&deadline=${q(T_TIE + H)}&energy_kwh=0.5`,
    value: (body) => dig(json(body), 'savings', 'grams'),
    expected: SERVED,
  },
  {
    path: `/v1/intensity/stats?zone=DE&from=${q(T_TIE)}&to=${q(T_TIE + H)}`,
    value: (body) => dig(json(body), 'mean'),
    expected: SERVED,
  },
  {
    path: `/v1/intensity/stats?zone=DE&from=${q(T_HALF_KWH)}&to=${q(T_HALF_KWH + H)}&energy_kwh=0.5`,
    value: (body) => dig(json(body), 'emissions_g'),
    expected: SERVED,
  },
  {
    path: '/v1/intensity/level?zone=DE&horizon_hours=0',
    value: (body) => dig(json(body), 'data', 0, 'now', 'gco2eq_kwh'),
    expected: SERVED,
  },
  {
    path: '/v1/intensity/level?zone=DE&horizon_hours=1',
    value: (body) => dig(json(body), 'data', 0, 'forecast', 0, 'gco2eq_kwh'),
    expected: SERVED,
  },
  {
    path: '/v1/intensity/forecast?zone=DE',
    value: (body) => dig(json(body), 'data', 0, 'gco2eq_kwh'),
    expected: SERVED,
  },
  {
    path: `${EM}/carbon-intensity/latest?zone=DE`,
    value: (body) => dig(json(body), 'carbonIntensity'),
    expected: WHOLE,
  },
  {
    path: `${EM}/carbon-intensity/history?zone=DE`,
    value: (body) =>
      dig(entry(dig(json(body), 'history'), 'datetime', emTime(T_TIE)), 'carbonIntensity'),
    expected: WHOLE,
  },
  {
    path: `${EM}/carbon-intensity/past-range?zone=DE&start=${q(T_TIE)}&end=${q(HOUR_NOW)}`,
    value: (body) => dig(json(body), 'data', 0, 'carbonIntensity'),
    expected: WHOLE,
  },
  {
    path: `${EM}/carbon-intensity/forecast?zone=DE`,
    value: (body) => dig(json(body), 'forecast', 0, 'carbonIntensity'),
    expected: WHOLE,
  },
  {
    path: `${EM}/home-assistant?zone=DE`,
    value: (body) => dig(json(body), 'data', 'carbonIntensity'),
    expected: WHOLE,
  },
  {
    path: `${CA}/emissions/bylocation?location=DE&time=${q(T_TIE)}&toTime=${q(T_TIE + H)}`,
    value: (body) => dig(entry(json(body), 'time', dotnetTime(T_TIE)), 'rating'),
    expected: SERVED,
  },
  {
    path: `${CA}/emissions/bylocations?location=DE&time=${q(T_TIE)}&toTime=${q(T_TIE + H)}`,
    value: (body) => dig(entry(json(body), 'time', dotnetTime(T_TIE)), 'rating'),
    expected: SERVED,
  },
  {
    path: `${CA}/emissions/bylocations/best?location=DE&time=${q(T_TIE - 24 * H)}&toTime=${q(T_TIE + H)}`,
    value: (body) => dig(entry(json(body), 'time', dotnetTime(T_TIE)), 'rating'),
    expected: SERVED,
  },
  {
    path: `${CA}/emissions/average-carbon-intensity?location=DE&startTime=${q(T_TIE)}&endTime=${q(T_TIE + H)}`,
    value: (body) => dig(json(body), 'carbonIntensity'),
    expected: SERVED,
  },
  {
    path: `${CA}/emissions/forecasts/current?location=DE`,
    value: (body) => dig(json(body), 0, 'forecastData', 0, 'value'),
    expected: SERVED,
  },
];

let store: Store;
let cache: ReadingCache;
let app: FastifyInstance;
let baseUrl: string;
const config = loadConfig({
  RATE_LIMIT_PER_MINUTE: '1000000',
  METRICS: 'off',
  WEBHOOKS: 'on',
  WEBHOOK_ALLOW: '127.0.0.1',
});

beforeAll(async () => {
  store = await createStore('sqlite::memory:');
  await store.upsertReadings(DE);
  cache = new ReadingCache(store, undefined, { pollMs: 60_000 });
  await cache.refresh();
  app = await buildApp({
    config,
    store,
    clock: () => NOW,
    cache,
    forecasts: BOOK,
    streams: { pollMs: 50 },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
});

afterAll(async () => {
  await app?.close();
  await cache?.stop();
  await store?.close();
});

describe('an exact decimal tie, 2491/20 = 124.55', () => {
  it('is one that toFixed rounds down, as are the derived figures checked', () => {
    expect(Number(TIE.toFixed(1))).toBe(124.5);
    expect(Number((0.5 * 249.1).toFixed(1))).toBe(124.5);
    expect(round1(TIE)).toBe(SERVED);
    expect(round1(0.5 * 249.1)).toBe(SERVED);
  });

  it.each(SERVED_TIES.map((tie) => [tie.path, tie] as const))(
    'is served rounded up by %s',
    async (path, { value, expected }) => {
      const response = await app.inject({ url: path });
      expect(response.statusCode, response.body).toBe(200);
      expect(value(response.body), response.body).toBe(expected);
    },
  );

  it('is sent rounded up on /v1/stream', async () => {
    const client = await EventStreamClient.open(`${baseUrl}/v1/stream?zones=FR`);
    try {
      await client.until('opened', () => client.retries.length > 0);
      const ts = HOUR_NOW - H;
      await store.upsertReadings([computed('FR', ts, TIE)]);
      await cache.refresh();
      await client.until('the FR reading', () =>
        client.readings().some((reading) => reading.ts === iso(ts)),
      );
      expect(client.readings().find((reading) => reading.ts === iso(ts))).toEqual({
        zone: 'FR',
        ts: iso(ts),
        gco2eq_kwh: SERVED,
        method: 'computed:v1',
      });
    } finally {
      client.close();
    }
  });

  describe('in webhook deliveries', () => {
    let receiver: WebhookReceiver;
    let deliverer: Deliverer;

    beforeAll(async () => {
      receiver = await startWebhookReceiver();
      deliverer = startDeliverer({
        store,
        // From the store, as server.ts wires it.
        ...signalReads(new Reads(store, undefined, API_ERRORS.storeUnavailable)),
        forecasts: () => BOOK,
        allow: config.webhooks.allow,
        turnMs: 50,
      });
    });

    afterAll(async () => {
      await deliverer?.stop();
      await receiver?.close();
    });

    const subscribe = async (zone: string, condition: Record<string, unknown>) => {
      const response = await app.inject({
        method: 'POST',
        url: '/v1/subscriptions',
        payload: { url: receiver.url, zones: [zone], condition },
      });
      expect(response.statusCode, response.body).toBe(201);
      return (response.json() as { id: string }).id;
    };
    /** The first event delivered for `subscription`, parsed. */
    const delivered = (subscription: string) =>
      until(
        `an event of ${subscription}`,
        () =>
          receiver.receipts
            .map((receipt) => JSON.parse(receipt.body) as Record<string, unknown>)
            .find((event) => event.subscription === subscription),
        30_000,
      );

    it('publishes it rounded up', async () => {
      const subscription = await subscribe('FR', { type: 'published' });
      // Once evaluated, the subscription is told of every reading written after.
      await deliverer.turn();
      const ts = HOUR_NOW - 2 * H;
      await store.upsertReadings([computed('FR', ts, TIE)]);
      expect(await delivered(subscription)).toMatchObject({
        type: 'published',
        zone: 'FR',
        ts: iso(ts),
        gco2eq_kwh: SERVED,
      });
    });

    it('compares it rounded up: 124.55 is above 124.5', async () => {
      const subscription = await subscribe('DE', { type: 'above', gco2eq_kwh: 124.5 });
      expect(await delivered(subscription)).toMatchObject({
        type: 'crossed',
        zone: 'DE',
        ts: iso(T_TIE),
        gco2eq_kwh: SERVED,
      });
    });
  });
});
