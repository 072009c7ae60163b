import type { StoredForecast, StoredReading } from '../../src/core/reading.js';
import type { Store } from '../../src/storage/store.js';

/**
 * A fixed store for black-box suites: every zone kind and edge the /v1 contract names (a long
 * hourly zone, one over the 5000-point cap, a lagging US zone, GB half-hours ending in a forecast,
 * a zone with only a bad hour), around a pinned clock.
 */

export const H = 3600;
export const NOW = Date.UTC(2026, 10, 21, 13, 20, 0); // 2026-11-21T13:20:00Z, the pinned clock
export const NOW_S = NOW / 1000;
export const HOUR_NOW = Math.floor(NOW_S / H) * H; // 13:00Z
export const iso = (s: number) => new Date(s * 1000).toISOString().slice(0, 19) + 'Z';

export const computed = (
  zone: string,
  ts: number,
  value: number,
  complete = true,
): StoredReading => ({
  zone,
  ts,
  value,
  method: 'computed:v1',
  complete,
  mix: { gas: 1, coal: 1 },
  // Values on each basis as a store keeps them (not recomputed from this stand-in mix).
  lifecycle: complete ? value : null,
  direct: complete ? value * 0.75 : null,
});
export const gb = (ts: number, value: number): StoredReading => ({
  zone: 'GB',
  ts,
  value,
  method: 'upstream:uk-operator:actual',
  complete: true,
  mix: null,
  lifecycle: null,
  direct: null,
});
export const gbForecast = (ts: number, value: number): StoredForecast => ({
  zone: 'GB',
  ts,
  kind: 'uk-operator:intensity',
  issuedAt: ts + 600,
  value,
});

// DE: 30 days hourly up to 2 h ago, with a value of many decimals and one incomplete hour.
export const DE_LAST = HOUR_NOW - 2 * H;
export const DE_INCOMPLETE = HOUR_NOW - 5 * H;
export const deValue = (ts: number) => 300 + ((ts / H) % 24) + 0.04567;
export const DE: StoredReading[] = [];
for (let ts = DE_LAST - 30 * 24 * H; ts <= DE_LAST; ts += H) {
  DE.push(ts === DE_INCOMPLETE ? computed('DE', ts, 820, false) : computed('DE', ts, deValue(ts)));
}
// FR: 6000 hourly points ending 10 h ago, for truncation.
export const FR_COUNT = 6000;
export const FR_FIRST = HOUR_NOW - 10 * H - (FR_COUNT - 1) * H;
const FR = Array.from({ length: FR_COUNT }, (_, i) =>
  computed('FR', FR_FIRST + i * H, 50 + (i % 7)),
);
// US: lagging 20 h; GB: half-hourly actuals, newest half-hour a forecast; IE: only a bad hour.
export const US_LAST = HOUR_NOW - 20 * H;
const US = [computed('US', US_LAST - H, 400.25), computed('US', US_LAST, 401.75)];
export const GB_LAST_ACTUAL = HOUR_NOW - 1800; // 12:30Z
export const GB: StoredReading[] = [];
for (let ts = GB_LAST_ACTUAL - 47 * 1800; ts <= GB_LAST_ACTUAL; ts += 1800)
  GB.push(gb(ts, 100 + (ts % 7)));
export const GB_FORECAST = gbForecast(GB_LAST_ACTUAL + 1800, 142);
const IE = [computed('IE', HOUR_NOW - 3 * H, 820, false)];

export const FIXED_READINGS: readonly StoredReading[] = [...DE, ...FR, ...US, ...GB, ...IE];

/** Writes the fixed readings and the GB forecast into `store`. */
export async function fillFixedStore(store: Store): Promise<void> {
  await store.upsertReadings(FIXED_READINGS);
  await store.upsertForecasts([GB_FORECAST]);
}
