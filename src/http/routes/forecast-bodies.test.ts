import { describe, expect, it } from 'vitest';
import { findZone } from '../../core/zones.js';
import type { ForecastBook, ZoneForecast } from '../../forecast/book.js';
import { ForecastBodies, NOTE_NO_FORECAST, NOTE_PREPARING } from './forecast-bodies.js';

const H = 3600;
const NOW_S = Date.UTC(2026, 10, 21, 13, 20) / 1000;
const START = Math.floor(NOW_S / H) * H - 2 * H; // 11:00Z

const forecastOf = (values: number[]): ZoneForecast => ({
  zone: 'DE',
  basis: 'lifecycle',
  model: 'climatology@1',
  generatedAt: NOW_S,
  startTs: START,
  stepSeconds: H,
  values: Float64Array.from(values),
  p10: Float64Array.from(values, (value) => value - 10),
  p90: Float64Array.from(values, () => Number.NaN),
});

const DE = { zone: findZone('DE')!, basis: undefined, horizonHours: 48 };
const json = (body: Buffer) =>
  JSON.parse(body.toString()) as {
    count: number;
    note?: string;
    data: { ts: string; gco2eq_kwh: number; p10: number | null; p90: number | null }[];
  };

describe('ForecastBodies', () => {
  it('says forecasts are being prepared while the book is not ready, else why there is none', () => {
    let ready: boolean | undefined = false;
    const book: ForecastBook = {
      forecast: () => null,
      get ready() {
        return ready;
      },
    };
    const bodies = new ForecastBodies(
      () => book,
      () => NOW_S * 1000,
    );
    const preparing = json(bodies.body(DE).body);
    expect(preparing).toMatchObject({ count: 0, data: [], note: NOTE_PREPARING });
    expect(preparing.note).toBe(
      'forecasts are being prepared (the server started recently); try again in a minute.',
    );
    // The body kept while preparing is not served once the book is ready.
    ready = true;
    expect(json(bodies.body(DE).body).note).toBe(NOTE_NO_FORECAST);
    ready = undefined;
    expect(json(bodies.body(DE).body).note).toMatch(/at least 7 days/);
  });

  it('never serves a value that is not a number: the data ends before it', () => {
    const values = [300.04, 310.06, Number.NaN, 320, Number.POSITIVE_INFINITY];
    const book: ForecastBook = { forecast: () => forecastOf(values), ready: true };
    const bodies = new ForecastBodies(
      () => book,
      () => NOW_S * 1000,
    );
    const body = json(bodies.body(DE).body);
    expect(body.count).toBe(2);
    expect(body.data).toEqual([
      { ts: '2026-11-21T11:00:00Z', gco2eq_kwh: 300, p10: 290, p90: null },
      { ts: '2026-11-21T12:00:00Z', gco2eq_kwh: 310.1, p10: 300.1, p90: null },
    ]);
    const first: ForecastBook = { forecast: () => forecastOf([Number.NaN, 300]) };
    const none = json(
      new ForecastBodies(
        () => first,
        () => NOW_S * 1000,
      ).body(DE).body,
    );
    expect(none).toMatchObject({ count: 0, data: [], note: NOTE_NO_FORECAST });
  });

  it('keeps a body until the forecast changes or time covers one more interval', () => {
    let forecast = forecastOf(Array.from({ length: 80 }, (_, i) => 300 + i));
    const book: ForecastBook = { forecast: () => forecast };
    let nowMs = NOW_S * 1000;
    const bodies = new ForecastBodies(
      () => book,
      () => nowMs,
    );
    const short = { ...DE, horizonHours: 1 };
    const first = bodies.body(short);
    // 11:00Z up to the hour starting before 14:20Z.
    expect(json(first.body).count).toBe(4);
    nowMs += 30 * 60 * 1000; // 13:50Z: still the same intervals
    expect(bodies.body(short)).toBe(first);
    nowMs += 20 * 60 * 1000; // 14:10Z: 15:00Z is now within the horizon
    const later = bodies.body(short);
    expect(json(later.body).count).toBe(5);
    expect(later.etag).not.toBe(first.etag);
    forecast = forecastOf(Array.from({ length: 80 }, (_, i) => 400 + i));
    const recomputed = bodies.body(short);
    expect(json(recomputed.body).data[0]!.gco2eq_kwh).toBe(400);
  });
});
