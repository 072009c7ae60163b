import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { ForecastBook, ZoneForecast } from '../src/forecast/book.js';
import { API_ERRORS } from '../src/http/contract/errors.js';
import { buildApp } from '../src/http/app.js';
import { signalReads } from '../src/queries/signal-reads.js';
import { ReadingCache } from '../src/read/reading-cache.js';
import { Reads } from '../src/read/reads.js';
import { createStore } from '../src/storage/create-store.js';
import type { Store } from '../src/storage/store.js';
import { startDeliverer, type Deliverer } from '../src/webhooks/deliverer.js';
import { EventStreamClient } from './support/event-stream.js';
import { computed, H, HOUR_NOW, iso, NOW } from './support/fixed-store.js';
import { startWebhookReceiver, until, type WebhookReceiver } from './support/webhook-receiver.js';

const DUMP = async (app: FastifyInstance, url: string) => {
  const r = await app.inject({ url });
  console.log(url, r.statusCode, r.body.slice(0, 1500));
};

/** 2491/20 = 124.55 exactly as a decimal; its double lies just below, where toFixed(1) gives 124.5. */
const TIE = 2491 / 20;
const T_TIE = HOUR_NOW - 2 * H;
const T_BEFORE = T_TIE - H;
const T_EMISSIONS = T_TIE - 3 * H;
const FIRST = T_TIE - 35 * 24 * H;

const DE = Array.from({ length: (T_TIE - FIRST) / H + 1 }, (_, i) => {
  const ts = FIRST + i * H;
  const value =
    ts === T_TIE ? TIE : ts === T_BEFORE ? 373.7 : ts === T_EMISSIONS ? 249.1 : 150 + (i % 40) * 5;
  return computed('DE', ts, value);
});

const forecast = (basis: ZoneForecast['basis']): ZoneForecast => {
  const values = new Float64Array(48).fill(TIE);
  return {
    zone: 'DE',
    basis,
    model: 'test@1',
    generatedAt: NOW / 1000,
    startTs: T_TIE + H,
    stepSeconds: H,
    values,
    p10: values,
    p90: values,
  };
};
const BOOK: ForecastBook = {
  forecast: (zone, basis) => (zone === 'DE' ? forecast(basis ?? 'lifecycle') : null),
};

let store: Store;
let cache: ReadingCache;
let app: FastifyInstance;

beforeAll(async () => {
  store = await createStore('sqlite::memory:');
  await store.upsertReadings(DE);
  cache = new ReadingCache(store, undefined, { pollMs: 60_000 });
  await cache.refresh();
  app = await buildApp({
    config: loadConfig({
      RATE_LIMIT_PER_MINUTE: '1000000',
      METRICS: 'off',
      WEBHOOKS: 'on',
      WEBHOOK_ALLOW: '127.0.0.1',
    }),
    store,
    clock: () => NOW,
    cache,
    forecasts: BOOK,
    streams: { pollMs: 50 },
  });
});

afterAll(async () => {
  await app?.close();
  await cache?.stop();
  await store?.close();
});

const at = iso;
const q = (ts: number) => encodeURIComponent(iso(ts));
describe('dump', () => {
  it('dumps', async () => {
    for (const url of [
      '/v1/intensity/latest?zone=DE',
      `/v1/intensity?zone=DE&from=${q(T_TIE)}&to=${q(HOUR_NOW)}`,
      `/v1/export?zones=DE&from=${q(T_TIE)}&to=${q(HOUR_NOW)}&format=csv`,
      `/v1/export?zones=DE&from=${q(T_TIE)}&to=${q(HOUR_NOW)}&format=ndjson`,
      `/v1/schedule?zones=DE&duration_minutes=60&earliest=${q(T_BEFORE)}&deadline=${q(T_TIE + H)}&energy_kwh=0.5`,
      `/v1/intensity/stats?zone=DE&from=${q(T_TIE)}&to=${q(T_TIE + H)}`,
      `/v1/intensity/stats?zone=DE&from=${q(T_EMISSIONS)}&to=${q(T_EMISSIONS + H)}&energy_kwh=0.5`,
      `/v1/intensity/level?zone=DE&horizon_hours=2`,
      `/v1/intensity/forecast?zone=DE`,
      `/compat/electricitymaps/v3/carbon-intensity/latest?zone=DE`,
      `/compat/electricitymaps/v3/carbon-intensity/history?zone=DE`,
      `/compat/electricitymaps/v3/carbon-intensity/past-range?zone=DE&start=${q(T_TIE)}&end=${q(HOUR_NOW)}`,
      `/compat/electricitymaps/v3/carbon-intensity/forecast?zone=DE`,
      `/compat/electricitymaps/v3/home-assistant?zone=DE`,
      `/compat/carbon-aware/emissions/bylocation?location=DE&time=${q(T_TIE)}&toTime=${q(T_TIE + H)}`,
      `/compat/carbon-aware/emissions/bylocations?location=DE&time=${q(T_TIE)}&toTime=${q(T_TIE + H)}`,
      `/compat/carbon-aware/emissions/average-carbon-intensity?location=DE&startTime=${q(T_TIE)}&endTime=${q(T_TIE + H)}`,
      `/compat/carbon-aware/emissions/forecasts/current?location=DE`,
    ])
      await DUMP(app, url);
    void at;
  });
});
