import { backtestZone, issueTimes } from '../../src/core/forecast/backtest.js';
import { CANDIDATE_MODELS } from '../../src/core/forecast/models.js';
import { IssuedSeries, regularSeries, type Grid } from '../../src/core/forecast/series.js';
import { type ZoneInputs, ZoneState } from '../../src/core/forecast/zone-state.js';

/** Synthetic zones for the forecast models' tests (src/core/forecast/*.test.ts). */

export const H = 3600;
export const DAY = 24 * H;
// A Monday 00:00 UTC.
export const START = Date.UTC(2026, 0, 5) / 1000;

/** A deterministic pseudo-random sequence in [0, 1). */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** A slowly varying "weather" series: an AR(1) with a day-long memory. */
function weather(length: number, seed: number): Float64Array {
  const next = random(seed);
  const out = new Float64Array(length);
  let value = 0.5;
  for (let i = 0; i < length; i++) {
    value = 0.5 + 0.96 * (value - 0.5) + 0.08 * (next() - 0.5);
    out[i] = Math.min(1, Math.max(0, value));
  }
  return out;
}

const weeks = 12;
const length = weeks * 7 * 24 + 72;
const grid: Grid = { startTs: START, step: H, length };
/** Twelve weeks of hourly slots from START and three days past them: most test zones' grid. */
export const TWELVE_WEEKS = { weeks, length, grid };

/** The newest issue of the twelve weeks (three days before the grid's end): it sees them all. */
export const LAST_ISSUE = {
  issueTs: START + (length - 72) * H,
  visibleEnd: length - 72,
} as const;

// A daily and weekly cycle, exactly repeating.
export const periodic = (slot: number) =>
  300 + 80 * Math.sin((2 * Math.PI * slot) / 24) + (Math.floor(slot / 24) % 7 >= 5 ? -40 : 0);

/** A zone of `points` on `zoneGrid` (the twelve weeks') without upstream forecasts. */
export function historyZone(
  points: readonly { ts: number; value: number }[],
  publicationLagSeconds: number,
  zoneGrid: Grid = grid,
): ZoneState {
  return new ZoneState({
    actual: regularSeries(points, zoneGrid),
    upstream: {},
    publicationLagSeconds,
  });
}

/**
 * A daily cycle, Sunday afternoons 120 lower, and a level that wanders for days: the daily
 * base (recent hour-of-day profile plus the newest departure fading over a day) misses the
 * Sunday dip and lets the wandering level fade too fast; a year of issues teaches both.
 */
export function sundayDips(days: number): { ts: number; value: number }[] {
  const wander = weather(days * 24, 7);
  const noise = random(11);
  return Array.from({ length: days * 24 }, (_, slot) => {
    const hour = slot % 24;
    const sunday = Math.floor(slot / 24) % 7 === 6 && hour >= 10 && hour <= 16;
    return {
      ts: START + slot * H,
      value:
        400 +
        100 * Math.cos((2 * Math.PI * (hour - 14)) / 24) -
        (sunday ? 120 : 0) +
        600 * (wander[slot]! - 0.5) +
        10 * (noise() - 0.5),
    };
  });
}

/** A zone whose intensity falls with the wind share, the wind forecast issued the day before. */
export function windyZone(
  forecastError: number,
  poison: (ts: number, issuedAt?: number) => boolean = () => false,
): { inputs: ZoneInputs; truth: Float64Array } {
  const wind = weather(length, 7);
  const noise = random(11);
  const errors = weather(length, 13);
  const truth = new Float64Array(length);
  const windForecasts = [];
  const loadForecasts = [];
  const points = [];
  for (let slot = 0; slot < length; slot++) {
    const ts = START + slot * H;
    const load = 1000 + 200 * Math.sin((2 * Math.PI * slot) / 24);
    const windMw = 900 * wind[slot]!;
    truth[slot] = 600 - 500 * (windMw / load) + 4 * (noise() - 0.5);
    if (slot < length - 72) points.push({ ts, value: poison(ts) ? 1e6 : truth[slot]! });
    // Day-ahead: issued at 17:00 the day before the interval's day.
    const issuedAt = Math.floor(ts / DAY) * DAY - 7 * H;
    const bad = poison(ts, issuedAt);
    windForecasts.push({
      ts,
      issuedAt,
      value: bad ? 1e6 : windMw + forecastError * (errors[slot]! - 0.5),
    });
    loadForecasts.push({ ts, issuedAt, value: bad ? 1 : load });
  }
  return {
    truth,
    inputs: {
      actual: regularSeries(points, grid),
      upstream: {
        wind: IssuedSeries.build(windForecasts, grid),
        load: IssuedSeries.build(loadForecasts, grid),
      },
      publicationLagSeconds: 3 * H,
    },
  };
}

/** The windy zone's backtest, every 6 hours from its 15th day to three days before its end. */
export const backtestWindyZone = () => {
  const zone = new ZoneState(windyZone(150).inputs);
  const result = backtestZone('DE', 'lifecycle', zone, {
    issueTimes: issueTimes(START + 14 * DAY, START + (weeks * 7 - 3) * DAY),
    candidates: CANDIDATE_MODELS,
  });
  return { zone, result };
};
