import { CHANNELS_PER_FUEL, NOISE_CHANNEL, SmoothNoiseTrack, unitNoise } from './noise.js';

/**
 * The synthetic generation model: per zone a fuel mix with a daily and seasonal shape (solar by
 * day, wind moving with multi-day weather, nuclear flat with outages, storage charging at night
 * and midday and discharging at the peaks, dispatchable plants filling the rest in merit order).
 * Every value is a pure function of (seed, zone, time): nothing is cached between requests.
 */

type FuelKind =
  'baseload' | 'solar' | 'wind' | 'run-of-river' | 'steady' | 'dispatchable' | 'storage';

export interface Fuel {
  /** The upstream's own code: ENTSO-E psrType, EIA fueltype, or a NESO fuel name. */
  readonly code: string;
  readonly kind: FuelKind;
  readonly capacityMw: number;
}

export interface MixProfile {
  readonly zone: string;
  /** `hashString(zone)`, the zone's key in every noise call. */
  readonly zoneKey: number;
  readonly latitude: number;
  readonly longitude: number;
  /** Average total generation, which the dispatchable fuels follow through the day. */
  readonly meanOutputMw: number;
  readonly peakSeason: 'winter' | 'summer';
  /** In the order the upstream reports them. */
  readonly fuels: readonly Fuel[];
}

/** Which fuels an upstream leaves out of one hour: real feeds drop a type, or send only one. */
export type HourGap = { readonly only: number } | { readonly missing: number } | null;

const DISPATCH: Readonly<
  Record<string, { readonly meritRank: number; readonly minShare: number }>
> = {
  // Reservoir hydro first (cheap water), then lignite/peat/coal (inflexible), gas, oil last.
  B12: { meritRank: 0, minShare: 0.1 },
  WAT: { meritRank: 0, minShare: 0.15 },
  B02: { meritRank: 1, minShare: 0.5 },
  B08: { meritRank: 2, minShare: 0.3 },
  B05: { meritRank: 3, minShare: 0.2 },
  COL: { meritRank: 3, minShare: 0.25 },
  B03: { meritRank: 4, minShare: 0.3 },
  B04: { meritRank: 5, minShare: 0.08 },
  NG: { meritRank: 5, minShare: 0.1 },
  gas: { meritRank: 5, minShare: 0.1 },
  coal: { meritRank: 6, minShare: 0 },
  B06: { meritRank: 7, minShare: 0 },
  OIL: { meritRank: 7, minShare: 0 },
};

const DEFAULT_KIND: Readonly<Record<string, FuelKind>> = {
  B01: 'steady',
  B09: 'steady',
  B10: 'storage',
  B11: 'run-of-river',
  B14: 'baseload',
  B15: 'steady',
  B16: 'solar',
  B17: 'steady',
  B18: 'wind',
  B19: 'wind',
  B20: 'steady',
  B25: 'storage',
  NUC: 'baseload',
  SUN: 'solar',
  SNB: 'solar',
  WND: 'wind',
  WNB: 'wind',
  GEO: 'steady',
  OTH: 'steady',
  UNK: 'steady',
  BAT: 'storage',
  PS: 'storage',
  OES: 'storage',
  UES: 'storage',
  nuclear: 'baseload',
  wind: 'wind',
  solar: 'solar',
  biomass: 'steady',
  hydro: 'run-of-river',
  imports: 'steady',
  other: 'steady',
  pumped: 'storage',
};

/**
 * Parses a compact fuel list, `"B04:800 B14:4400 OTH:3000:storage"` (code:capacity[:kind]).
 * Dispatchable codes take their kind from the merit table.
 */
export function parseFuels(list: string): Fuel[] {
  return list
    .split(/\s+/)
    .filter(Boolean)
    .map((entry) => {
      const [code = '', capacity = '', kind] = entry.split(':');
      const resolved =
        (kind as FuelKind | undefined) ?? (code in DISPATCH ? 'dispatchable' : DEFAULT_KIND[code]);
      if (!resolved || !/^\d+$/.test(capacity)) throw new Error(`bad fuel entry "${entry}"`);
      return { code, kind: resolved, capacityMw: Number(capacity) };
    });
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
const YEAR_DAYS = 365.2422;
const TAU = 2 * Math.PI;
const DEGREE = Math.PI / 180;

// Storage duty by local hour: charge overnight and around noon (solar), discharge at the peaks.
const STORAGE_DUTY = [
  -0.5, -0.6, -0.6, -0.6, -0.5, -0.2, 0.3, 0.6, 0.5, 0.1, -0.3, -0.5, -0.5, -0.4, -0.2, 0.1, 0.4,
  0.8, 0.9, 0.9, 0.7, 0.4, 0.1, -0.3,
];

// How often a zone's hour comes with a gap in its mix (per hour, per zone).
const MISSING_TYPE_RATE = 1 / 120;
const PARTIAL_MIX_RATE = 1 / 2000;
// How often a solar plant reports a small negative value (station load) in a night hour.
const NEGATIVE_NIGHT_RATE = 0.04;

/**
 * A zone's own dispatch over `count` consecutive intervals: its plants meeting its own load,
 * before the market moves it (`adjustedMix`). Read-only once made.
 */
export interface OwnDispatch {
  /** Average MW of every fuel, one array per fuel in profile order. */
  readonly values: readonly Float64Array[];
  /** The zone's load in each interval (computeDemand's values). */
  readonly demand: Float64Array;
  /** How far generation could fall and rise in each interval. */
  readonly down: Float64Array;
  readonly up: Float64Array;
  /** The dispatchable fuels (indexes into `values`) in merit order. */
  readonly plants: readonly number[];
  /** Each plant's availability and minimum load, at `interval * plants.length + plant`. */
  readonly available: Float64Array;
  readonly minimum: Float64Array;
  /** The fuels that can be curtailed (solar and wind). */
  readonly curtailable: readonly number[];
}

/**
 * Average MW of every fuel over `count` consecutive intervals of `stepMs` from `startMs`, one
 * array per fuel in profile order. Storage is negative while charging. The zone's plants meet its
 * own load, moved by `adjust` when given (see `adjustedMix`): the published mix is flow-model.ts
 * `publishedMix`.
 */
export function computeMix(
  profile: MixProfile,
  seed: number,
  startMs: number,
  stepMs: number,
  count: number,
  adjust?: (i: number) => number,
): Float64Array[] {
  const own = ownDispatch(profile, seed, startMs, stepMs, count);
  const values = [...own.values];
  if (adjust) adjustInPlace(own, values, adjust);
  return values;
}

/**
 * The zone's own dispatch (see `OwnDispatch`). The slow noises are drawn once per knot
 * (`SmoothNoiseTrack`): a year of a zone asks each of them about a hundred times, not 35,000.
 */
export function ownDispatch(
  profile: MixProfile,
  seed: number,
  startMs: number,
  stepMs: number,
  count: number,
): OwnDispatch {
  const { fuels, zoneKey } = profile;
  const values = fuels.map(() => new Float64Array(count));
  const plants = fuels
    .map((fuel, index) => ({ index, ...meritOf(fuel) }))
    .filter(({ index }) => fuels[index]?.kind === 'dispatchable')
    .sort((a, b) => a.meritRank - b.meritRank);
  const dispatched = plants.map(({ index }) => values[index] as Float64Array);
  const perInterval = plants.length;
  const available = new Float64Array(count * perInterval);
  const minimum = new Float64Array(count * perInterval);
  const demand = new Float64Array(count);
  const down = new Float64Array(count);
  const up = new Float64Array(count);
  const curtailable = fuels.flatMap((fuel, index) =>
    fuel.kind === 'solar' || fuel.kind === 'wind' ? [index] : [],
  );
  const sinLatitude = Math.sin(profile.latitude * DEGREE);
  const cosLatitude = Math.cos(profile.latitude * DEGREE);
  const track = (channel: number) => new SmoothNoiseTrack(seed, zoneKey, channel);
  const slow = fuels.map((_, f) => track(f * CHANNELS_PER_FUEL + 1));
  const slower = fuels.map((_, f) => track(f * CHANNELS_PER_FUEL + 2));
  const weather = demandWeather(seed, zoneKey);

  for (let i = 0; i < count; i++) {
    const t = startMs + (i + 0.5) * stepMs;
    const days = t / DAY_MS;
    const minute = Math.floor(t / MINUTE_MS);
    const hour = Math.floor(t / HOUR_MS);
    const localHour = (((t / HOUR_MS + profile.longitude / 15) % 24) + 24) % 24;
    // +1 in mid-January, -1 in mid-July.
    const winter = Math.cos((TAU * (days - 15)) / YEAR_DAYS);
    const declination = 23.44 * DEGREE * Math.sin((TAU * (days - 80)) / YEAR_DAYS);
    const sinElevation =
      sinLatitude * Math.sin(declination) +
      cosLatitude * Math.cos(declination) * Math.cos((TAU * (localHour - 12)) / 24);

    let supply = 0;
    for (let f = 0; f < fuels.length; f++) {
      const fuel = fuels[f] as Fuel;
      if (fuel.kind === 'dispatchable') continue;
      const channel = f * CHANNELS_PER_FUEL;
      const jitter = unitNoise(seed, zoneKey, channel, minute) - 0.5;
      const noise = slow[f] as SmoothNoiseTrack;
      let capacityFactor: number;
      switch (fuel.kind) {
        case 'baseload':
          // Availability moves with outages that last days, not minutes.
          capacityFactor = (0.7 + 0.28 * noise.at(days / 9)) * (1 + 0.002 * jitter);
          break;
        case 'solar': {
          const clearSky = 0.25 + 0.75 * noise.at(days * 1.5) ** 0.6;
          capacityFactor = Math.max(sinElevation, 0) ** 1.2 * 0.9 * clearSky * (1 + 0.04 * jitter);
          break;
        }
        case 'wind': {
          const wind =
            0.65 * noise.at(days / 1.7) + 0.35 * (slower[f] as SmoothNoiseTrack).at(days * 3);
          capacityFactor =
            Math.min(0.93, 0.03 + 1.1 * wind ** 2.2 * (1 + 0.3 * winter)) * (1 + 0.02 * jitter);
          break;
        }
        case 'run-of-river': {
          const snowmelt = Math.cos((TAU * (days - 160)) / YEAR_DAYS);
          const rain = noise.at(days / 5) - 0.5;
          capacityFactor = (0.45 + 0.2 * snowmelt + 0.2 * rain) * (1 + 0.01 * jitter);
          break;
        }
        case 'steady':
          capacityFactor = (0.55 + 0.35 * noise.at(days / 3)) * (1 + 0.02 * jitter);
          break;
        case 'storage':
          capacityFactor =
            (STORAGE_DUTY[Math.floor(localHour)] as number) * (0.55 + 0.45 * noise.at(days * 2));
          break;
      }
      let mw = capacityFactor * fuel.capacityMw;
      if (fuel.kind === 'solar' && sinElevation <= 0)
        mw = nightSolar(fuel, seed, zoneKey, channel, hour);
      (values[f] as Float64Array)[i] = mw;
      supply += mw;
    }

    const load = demandAt(profile, weather, t, localHour, winter);
    demand[i] = load;
    let residual = load - supply;
    // Plants on minimum load first, then the rest in merit order until the demand is met.
    const at = i * perInterval;
    for (let k = 0; k < perInterval; k++) {
      const { index, minShare } = plants[k] as (typeof plants)[number];
      const fuel = fuels[index] as Fuel;
      const availability = 0.8 + 0.2 * (slow[index] as SmoothNoiseTrack).at(days / 6);
      const plantAvailable = fuel.capacityMw * availability;
      const plantMinimum = plantAvailable * minShare;
      available[at + k] = plantAvailable;
      minimum[at + k] = plantMinimum;
      (values[index] as Float64Array)[i] = plantMinimum;
      residual -= plantMinimum;
    }
    raise(dispatched, available, at, i, residual);
    let canFall = 0;
    let canRise = 0;
    for (let k = 0; k < perInterval; k++) {
      const mw = (dispatched[k] as Float64Array)[i] as number;
      canFall += mw - (minimum[at + k] as number);
      canRise += Math.max(0, (available[at + k] as number) - mw);
    }
    for (const f of curtailable) canFall += Math.max(0, (values[f] as Float64Array)[i] as number);
    down[i] = canFall;
    up[i] = canRise;
  }
  return {
    values,
    demand,
    down,
    up,
    plants: plants.map(({ index }) => index),
    available,
    minimum,
    curtailable,
  };
}

/**
 * The zone's dispatch moved by the market (flow-model.ts): `adjust(i)` MW the zone generates
 * beyond (positive) or below (negative) what its own load asks in interval `i`, its net exports.
 * More comes from its dispatchable plants in merit order, past their availability when it must
 * (peakers); less from them down to their minimum load, then from curtailed solar and wind.
 * New arrays: `own` is left as it was.
 */
export function adjustedMix(own: OwnDispatch, adjust: (i: number) => number): Float64Array[] {
  const values = own.values.map((series) => series.slice());
  adjustInPlace(own, values, adjust);
  return values;
}

function adjustInPlace(
  own: OwnDispatch,
  values: readonly Float64Array[],
  adjust: (i: number) => number,
): void {
  const dispatched = own.plants.map((index) => values[index] as Float64Array);
  const perInterval = own.plants.length;
  for (let i = 0; i < own.demand.length; i++) {
    const adjustment = adjust(i);
    const at = i * perInterval;
    if (adjustment > 0) {
      const short = raise(dispatched, own.available, at, i, adjustment);
      // Past every plant's availability: the last in merit order (peakers) makes it up.
      const peaker = dispatched.at(-1);
      if (peaker && short > 0) peaker[i] = (peaker[i] as number) + short;
    } else if (adjustment < 0) {
      lower(values, dispatched, own.minimum, at, own.curtailable, i, -adjustment);
    }
  }
}

/** Adds up to `mw` to the dispatchable plants in merit order, within availability; the rest. */
function raise(
  dispatched: readonly Float64Array[],
  available: Float64Array,
  at: number,
  i: number,
  mw: number,
): number {
  let rest = mw;
  for (let k = 0; k < dispatched.length && rest > 0; k++) {
    const series = dispatched[k] as Float64Array;
    const added = Math.max(
      0,
      Math.min(rest, (available[at + k] as number) - (series[i] as number)),
    );
    series[i] = (series[i] as number) + added;
    rest -= added;
  }
  return rest;
}

/**
 * Takes up to `mw` off: the dispatchable plants down to their minimum, last in merit order
 * first, then solar and wind curtailed alike.
 */
function lower(
  values: readonly Float64Array[],
  dispatched: readonly Float64Array[],
  minimum: Float64Array,
  at: number,
  curtailable: readonly number[],
  i: number,
  mw: number,
): void {
  let rest = mw;
  for (let k = dispatched.length - 1; k >= 0 && rest > 0; k--) {
    const series = dispatched[k] as Float64Array;
    const cut = Math.max(0, Math.min(rest, (series[i] as number) - (minimum[at + k] as number)));
    series[i] = (series[i] as number) - cut;
    rest -= cut;
  }
  const renewable = curtailable.reduce(
    (sum, f) => sum + Math.max(0, (values[f] as Float64Array)[i] as number),
    0,
  );
  if (rest <= 0 || renewable <= 0) return;
  const kept = 1 - Math.min(1, rest / renewable);
  for (const f of curtailable) {
    const series = values[f] as Float64Array;
    if ((series[i] as number) > 0) series[i] = (series[i] as number) * kept;
  }
}

function meritOf(fuel: Fuel): { readonly meritRank: number; readonly minShare: number } {
  return DISPATCH[fuel.code] ?? { meritRank: 9, minShare: 0 };
}

/** Solar at night is zero, except now and then a small negative (station load), as real feeds show. */
function nightSolar(
  fuel: Fuel,
  seed: number,
  zoneKey: number,
  channel: number,
  hour: number,
): number {
  if (fuel.capacityMw === 0) return 0;
  if (unitNoise(seed, zoneKey, channel + 3, hour) >= NEGATIVE_NIGHT_RATE) return 0;
  return -(0.5 + 2.5 * unitNoise(seed, zoneKey, channel + 4, hour));
}

/**
 * The zone's load (MW) at instant `t`: what its plants and net imports meet. A daily, weekly and
 * seasonal shape, and a weather-driven deviation of a few percent that lasts days (a cold spell, a
 * heat wave) with shorter swings on top, so that load is not a pure function of the calendar.
 */
function demandAt(
  profile: MixProfile,
  weather: DemandWeather,
  t: number,
  localHour: number,
  winter: number,
): number {
  const seasonSign = profile.peakSeason === 'winter' ? 1 : -1;
  const days = t / DAY_MS;
  const deviation =
    0.05 * (2 * weather.days.at(days / 2.5) - 1) + 0.015 * (2 * weather.hours.at(days * 3) - 1);
  return (
    profile.meanOutputMw *
    demandFactor(t, localHour, profile.longitude) *
    (1 + 0.12 * seasonSign * winter) *
    (1 + deviation)
  );
}

/** The weather's deviation of a zone's load: over days, and swings of hours on top. */
interface DemandWeather {
  readonly days: SmoothNoiseTrack;
  readonly hours: SmoothNoiseTrack;
}

function demandWeather(seed: number, zoneKey: number): DemandWeather {
  return {
    days: new SmoothNoiseTrack(seed, zoneKey, NOISE_CHANNEL.demand),
    hours: new SmoothNoiseTrack(seed, zoneKey, NOISE_CHANNEL.demand + 1),
  };
}

/**
 * The zone's load, MW averaged over `count` consecutive intervals of `stepMs` from `startMs` (the
 * same instants computeMix uses): total generation plus the zone's net imports.
 */
export function computeDemand(
  profile: MixProfile,
  seed: number,
  startMs: number,
  stepMs: number,
  count: number,
): Float64Array {
  const values = new Float64Array(count);
  const weather = demandWeather(seed, profile.zoneKey);
  for (let i = 0; i < count; i++) {
    const t = startMs + (i + 0.5) * stepMs;
    const localHour = (((t / HOUR_MS + profile.longitude / 15) % 24) + 24) % 24;
    const winter = Math.cos((TAU * (t / DAY_MS - 15)) / YEAR_DAYS);
    values[i] = demandAt(profile, weather, t, localHour, winter);
  }
  return values;
}

/** Load relative to its mean: low before dawn, high in the afternoon and evening, lower at weekends. */
function demandFactor(t: number, localHour: number, longitude: number): number {
  const daytime = 0.5 - 0.5 * Math.cos((TAU * (localHour - 4)) / 24);
  const eveningPeak = 0.08 * Math.exp(-((localHour - 19) ** 2) / 4);
  // 1970-01-01 was a Thursday (4).
  const weekday = (Math.floor((t + (longitude / 15) * HOUR_MS) / DAY_MS) + 4) % 7;
  const weekend = weekday === 0 ? 0.88 : weekday === 6 ? 0.93 : 1;
  return (0.8 + 0.3 * daytime + eveningPeak) * weekend;
}

/**
 * The gap (if any) in one hour of a zone's mix: about one hour in 120 misses one production type,
 * about one in 2000 carries only the zone's largest dispatchable fuel (a partial-mix hour).
 */
export function hourGap(profile: MixProfile, seed: number, hour: number): HourGap {
  const roll = unitNoise(seed, profile.zoneKey, NOISE_CHANNEL.mixGap, hour);
  if (roll < PARTIAL_MIX_RATE) return { only: largestDispatchable(profile) };
  if (roll < PARTIAL_MIX_RATE + MISSING_TYPE_RATE) {
    const pick = unitNoise(seed, profile.zoneKey, NOISE_CHANNEL.mixGap + 1, hour);
    return { missing: Math.floor(pick * profile.fuels.length) };
  }
  return null;
}

export function isReported(gap: HourGap, fuelIndex: number): boolean {
  if (gap === null) return true;
  return 'only' in gap ? gap.only === fuelIndex : gap.missing !== fuelIndex;
}

function largestDispatchable(profile: MixProfile): number {
  let best = 0;
  profile.fuels.forEach((fuel, index) => {
    const bestFuel = profile.fuels[best] as Fuel;
    const better =
      (fuel.kind === 'dispatchable') !== (bestFuel.kind === 'dispatchable')
        ? fuel.kind === 'dispatchable'
        : fuel.capacityMw > bestFuel.capacityMw;
    if (better) best = index;
  });
  return best;
}
