import { publishedMix } from './flow-model.js';
import { forecastError } from './forecast-model.js';
import { NOISE_CHANNEL, unitNoise } from './noise.js';
import { formatMinute, jsonReply, type ReplyContext, type SourceReply } from './reply.js';
import { GB_DATA_START_MS, GB_PROFILE } from './zone-profiles.js';

/**
 * The NESO Carbon Intensity API, national routes (docs/upstreams.md §3, the recordings in
 * test/fixtures/upstreams/uk-operator):
 * - `/intensity...`: half-hourly `{from, to, intensity: {forecast, actual, index}}`, `actual`
 *   null until the half hour is over, both numbers revised after first publication;
 * - `/generation` and `/generation/{from}/{to}`: the generation mix `{from, to, generationmix}`
 *   of past half hours and the one in progress (provisional until it is over), from the same
 *   synthetic GB model, so the operator-style intensity and the mix describe one grid.
 */

const HALF_HOUR_MS = 1_800_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const MAX_RANGE_MS = 14 * DAY_MS;
// Forecasts reach 48 hours past the current half hour (what fw48h returns).
const FORECAST_HORIZON_MS = 48 * HOUR_MS;
// `actual` keeps moving for a day after the half hour ends (docs/upstreams.md §3.3), in two-hour
// steps.
const REVISION_WINDOW_MS = 24 * HOUR_MS;
const REVISION_STEP_MS = 2 * HOUR_MS;
// The operator re-issues every half hour; its weather inputs change every six hours.
const FORECAST_ISSUE_MS = 6 * HOUR_MS;
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?Z?$/;

// Direct gCO2/kWh by NESO fuel (docs/upstreams.md §3.4, `/intensity/factors`); storage is left out.
const FACTORS: Readonly<Record<string, number>> = {
  gas: 394,
  coal: 937,
  nuclear: 0,
  wind: 0,
  solar: 0,
  biomass: 120,
  hydro: 0,
  'imports-fr': 53,
  'imports-nl': 474,
  'imports-ie': 458,
  other: 300,
};

/**
 * The mix fuels in the order of every recorded reply (docs/upstreams.md §3.4), each with the
 * simulated fuels it adds up. Pumped storage is not in NESO's mix.
 */
const MIX_FUELS: readonly { readonly fuel: string; readonly codes: readonly string[] }[] = [
  { fuel: 'biomass', codes: ['biomass'] },
  { fuel: 'coal', codes: ['coal'] },
  { fuel: 'imports', codes: ['imports-fr', 'imports-nl', 'imports-ie'] },
  { fuel: 'gas', codes: ['gas'] },
  { fuel: 'nuclear', codes: ['nuclear'] },
  { fuel: 'other', codes: ['other'] },
  { fuel: 'hydro', codes: ['hydro'] },
  { fuel: 'solar', codes: ['solar'] },
  { fuel: 'wind', codes: ['wind'] },
];
const MIX_FUEL_INDEXES = MIX_FUELS.map(({ codes }) =>
  codes.map((code) => GB_PROFILE.fuels.findIndex((fuel) => fuel.code === code)),
);
// The recorded `/generation` of a half hour in progress had other and hydro at 0 where the
// revised figures three days later did not (docs/upstreams.md §3.4): the current mix lacks them.
const LATE_FUELS: ReadonlySet<string> = new Set(['other', 'hydro']);

interface IntensityEntry {
  from: string;
  to: string;
  intensity: { forecast: number; actual: number | null; index: string };
}

export function answerNeso(pathname: string, context: ReplyContext): SourceReply {
  const parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'generation') return answerGeneration(parts, context);
  if (parts[0] !== 'intensity' || parts.length > 3) {
    return nesoError(404, '404 Not Found', `No route for ${pathname}.`);
  }
  if (parts.length === 1) {
    // Observed: `/intensity` gives the latest COMPLETE half hour, not the current one
    // (carbon-intensity/api-definitions issue #6), so it always carries an actual.
    const lastEnd = Math.floor(context.nowMs / HALF_HOUR_MS) * HALF_HOUR_MS;
    return entries(lastEnd, lastEnd, context);
  }
  const from = parseDatetime(parts[1] as string);
  if (from === undefined) return invalidDate();
  const range = parts[2];
  // Every route returns the half hours whose END lies in [a, b]: a `from` on a boundary thus
  // brings the half hour before it (fixtures requested at hh:01 to avoid that).
  switch (range) {
    case undefined:
      return entries(from, Math.ceil(from / HALF_HOUR_MS) * HALF_HOUR_MS, context);
    case 'fw24h':
      return entries(from, from + 24 * HOUR_MS, context);
    case 'fw48h':
      return entries(from, from + 48 * HOUR_MS, context);
    case 'pt24h':
      return entries(from - 24 * HOUR_MS, from, context);
    default: {
      const to = parseDatetime(range);
      if (to === undefined) return invalidDate();
      const refused = refusedRange(from, to);
      return refused ?? entries(from, to, context);
    }
  }
}

/**
 * `/generation`: the half hour in progress, `data` an object (unlike every other route);
 * `/generation/{from}/{to}`: the half hours ending in [from, to] up to the one in progress, a
 * list. The 14-day limit of the intensity range is assumed here too (none is documented).
 */
function answerGeneration(parts: readonly string[], context: ReplyContext): SourceReply {
  const currentStart = Math.floor(context.nowMs / HALF_HOUR_MS) * HALF_HOUR_MS;
  if (parts.length === 1) {
    const [entry] = mixEntries(currentStart, currentStart, context);
    return jsonReply(200, { data: entry });
  }
  // The two routes recorded; `/generation/{from}/pt24h` (unverified) is not simulated.
  if (parts.length !== 3) {
    return nesoError(404, '404 Not Found', `No route for /${parts.join('/')}.`);
  }
  const from = parseDatetime(parts[1] as string);
  const to = parseDatetime(parts[2] as string);
  if (from === undefined || to === undefined) return invalidDate();
  const refused = refusedRange(from, to);
  if (refused) return refused;
  const firstStart = Math.max(
    Math.ceil(from / HALF_HOUR_MS) * HALF_HOUR_MS - HALF_HOUR_MS,
    GB_DATA_START_MS,
  );
  const lastStart = Math.min(
    Math.floor(to / HALF_HOUR_MS) * HALF_HOUR_MS - HALF_HOUR_MS,
    currentStart,
  );
  return jsonReply(200, { data: mixEntries(firstStart, lastStart, context) });
}

function refusedRange(from: number, to: number): SourceReply | undefined {
  if (to < from)
    return nesoError(400, '400 Bad Request', 'The to date must be after the from date.');
  if (to - from > MAX_RANGE_MS) {
    return nesoError(400, '400 Bad Request', 'Date range must be 14 days or less.');
  }
  return undefined;
}

interface MixEntry {
  from: string;
  to: string;
  generationmix: { fuel: string; perc: number }[];
}

/**
 * The mix of the half hours starting in [firstStart, lastStart]: each fuel's share of GB
 * generation and imports, one decimal, so the nine need not sum to exactly 100.
 */
function mixEntries(firstStart: number, lastStart: number, context: ReplyContext): MixEntry[] {
  const count = Math.max(0, (lastStart - firstStart) / HALF_HOUR_MS + 1);
  const mix = publishedMix(GB_PROFILE, context.seed, firstStart, HALF_HOUR_MS, count);
  const data: MixEntry[] = [];
  for (let i = 0; i < count; i++) {
    const start = firstStart + i * HALF_HOUR_MS;
    const provisional = start + HALF_HOUR_MS > context.nowMs;
    const mw = MIX_FUELS.map(({ fuel }, f) =>
      provisional && LATE_FUELS.has(fuel)
        ? 0
        : (MIX_FUEL_INDEXES[f] ?? []).reduce(
            (sum, index) => sum + Math.max(mix[index]?.[i] ?? 0, 0),
            0,
          ),
    );
    const total = mw.reduce((sum, value) => sum + value, 0);
    data.push({
      from: formatMinute(start),
      to: formatMinute(start + HALF_HOUR_MS),
      generationmix: MIX_FUELS.map(({ fuel }, f) => ({
        fuel,
        perc: total > 0 ? Math.round((1000 * (mw[f] ?? 0)) / total) / 10 : 0,
      })),
    });
  }
  return data;
}

export function emptyNesoReply(): SourceReply {
  return jsonReply(200, { data: [] });
}

/** The half hours whose end lies in [a, b], as far as they are published or forecast. */
function entries(a: number, b: number, context: ReplyContext): SourceReply {
  const currentStart = Math.floor(context.nowMs / HALF_HOUR_MS) * HALF_HOUR_MS;
  const firstStart = Math.max(
    Math.ceil(a / HALF_HOUR_MS) * HALF_HOUR_MS - HALF_HOUR_MS,
    GB_DATA_START_MS,
  );
  const lastStart = Math.min(
    Math.floor(b / HALF_HOUR_MS) * HALF_HOUR_MS - HALF_HOUR_MS,
    currentStart + FORECAST_HORIZON_MS - HALF_HOUR_MS,
  );
  const count = Math.max(0, (lastStart - firstStart) / HALF_HOUR_MS + 1);
  const mix = publishedMix(GB_PROFILE, context.seed, firstStart, HALF_HOUR_MS, count);
  const data: IntensityEntry[] = [];
  for (let i = 0; i < count; i++) {
    const start = firstStart + i * HALF_HOUR_MS;
    const end = start + HALF_HOUR_MS;
    const truth = intensityOf(mix, i);
    const actual = end <= context.nowMs ? revisedActual(truth, end, context) : null;
    const forecast = forecastOf(truth, start, Math.min(currentStart, start), context.seed);
    data.push({
      from: formatMinute(start),
      to: formatMinute(end),
      intensity: { forecast, actual, index: indexOf(actual ?? forecast) },
    });
  }
  return jsonReply(200, { data });
}

function intensityOf(mix: Float64Array[], i: number): number {
  let emissions = 0;
  let generation = 0;
  GB_PROFILE.fuels.forEach((fuel, f) => {
    const factor = FACTORS[fuel.code];
    const mw = Math.max(mix[f]?.[i] ?? 0, 0);
    if (factor === undefined) return;
    emissions += mw * factor;
    generation += mw;
  });
  return generation > 0 ? emissions / generation : 0;
}

/**
 * The latest forecast issued at `issuedAt`: the synthetic truth with the persistent error of
 * forecast-model.ts (issues blend every six hours), larger the further ahead.
 */
function forecastOf(truth: number, start: number, issuedAt: number, seed: number): number {
  const error = forecastError(
    seed,
    GB_PROFILE.zoneKey,
    NOISE_CHANNEL.nesoForecast,
    start + HALF_HOUR_MS / 2,
    issuedAt,
    issuedAt / FORECAST_ISSUE_MS,
  );
  return Math.round(truth * (1 + 0.12 * error));
}

/** Settles within a day: before that a value is off by -1..+5, redrawn every two hours. */
function revisedActual(truth: number, end: number, context: ReplyContext): number {
  const age = context.nowMs - end;
  if (age >= REVISION_WINDOW_MS) return Math.round(truth);
  const stage = Math.floor(age / REVISION_STEP_MS);
  const draw = unitNoise(context.seed, NOISE_CHANNEL.nesoActual, end / HALF_HOUR_MS, stage);
  return Math.round(truth) + Math.round(draw * 6 - 1);
}

/** Bands as the March 2023 recordings show them (test/fixtures/upstreams/uk-operator). */
function indexOf(value: number): string {
  if (value < 40) return 'very low';
  if (value < 120) return 'low';
  if (value < 200) return 'moderate';
  if (value < 290) return 'high';
  return 'very high';
}

function parseDatetime(text: string): number | undefined {
  const match = DATETIME.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second = '0'] = match;
  const ms = Date.UTC(
    Number(year),
    Number(month) - 1,
    Number(day),
    Number(hour),
    Number(minute),
    Number(second),
  );
  return new Date(ms).toISOString().slice(0, 16) === text.slice(0, 16) ? ms : undefined;
}

function invalidDate(): SourceReply {
  return nesoError(
    400,
    '400 Bad Request',
    'Please enter a valid ISO 8601 datetime, e.g. 2017-08-25T12:35Z.',
  );
}

function nesoError(status: number, code: string, message: string): SourceReply {
  return jsonReply(status, { error: { code, message } });
}
