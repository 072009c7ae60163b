/**
 * The deterministic bench datasets. Every reading is a pure function of (zone, ts), so the small
 * store is a subset of the large one: a window or a latest document inside both is byte-identical,
 * and the two sizes measure only what the size of the store costs.
 *
 * The numbers only have to look like a grid (a daily solar bump, wind that changes every few
 * hours, a mix stored beside every computed value as ingestion stores it); they are not data.
 * This file's source is part of the cache key of the built stores: any edit rebuilds them.
 */
import type { ConsumptionRow } from '../src/core/consumption/series-row.js';
import type { FlowGraphId } from '../src/core/flows.js';
import { intensityOfMix } from '../src/core/method.js';
import type { StoredReading } from '../src/core/reading.js';
import { hasConsumptionSeries, ZONES, type Zone } from '../src/core/zones.js';

/** Exclusive end of every store: the newest point is the interval just before it. */
export const DATASET_END = Date.UTC(2026, 10, 1) / 1000; // 2026-11-01T00:00:00Z

const HOUR = 3600;
/** 2018-11-01 to 2026-11-01: 8 years with 2 leap days. */
const EIGHT_YEARS_HOURS = 70_128;

export interface StoreSpec {
  /** Short name used in the table and the cache key: `50k`, `3.2M`. */
  readonly label: string;
  /** How many points a zone holds, ending at DATASET_END. */
  readonly pointsOf: (zone: Zone) => number;
}

const intervalOf = (zone: Zone): number => zone.resolutionMin * 60;

/**
 * 45 zones x 8 years hourly, GB really half-hourly: 44 x 70,128 + 140,256 = 3,225,888 points.
 */
export const LARGE_STORE: StoreSpec = {
  label: '3.2M',
  pointsOf: (zone) => (EIGHT_YEARS_HOURS * HOUR) / intervalOf(zone),
};

/**
 * 50,000 points: 1,000 per zone (GB: 1,000 half-hours), except DE with 6,000 hours so that the
 * truncated 5000-point window exists in both stores.
 */
export const SMALL_STORE: StoreSpec = {
  label: '50k',
  pointsOf: (zone) => (zone.code === 'DE' ? 6_000 : 1_000),
};

export const pointCount = (spec: StoreSpec): number =>
  ZONES.reduce((sum, zone) => sum + spec.pointsOf(zone), 0);

/** Rows per `upsertReadings` call: one transaction each, large enough to amortize it. */
const BATCH_ROWS = 50_000;

/** The readings of a store in (zone, ts) order, the primary key's order, in upsert batches. */
export function* readingBatches(spec: StoreSpec): Generator<StoredReading[]> {
  let batch: StoredReading[] = [];
  for (const [zoneIndex, zone] of ZONES.entries()) {
    const interval = intervalOf(zone);
    const points = spec.pointsOf(zone);
    const first = DATASET_END - points * interval;
    for (let i = 0; i < points; i++) {
      const ts = first + i * interval;
      batch.push(
        zone.source === 'uk-operator' ? ukReading(zone, ts) : computed(zone, zoneIndex, ts),
      );
      if (batch.length === BATCH_ROWS) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length > 0) yield batch;
}

/** Uniform in [0, 1), from two 32-bit integers (a murmur3-style finalizer). */
function unitHash(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ b;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return ((h ^ (h >>> 16)) >>> 0) / 2 ** 32;
}

// Inlined from src/core/factors.ts on purpose: the dataset must not move when the method does.
const FACTORS = { coal: 820, gas: 490, nuclear: 12, hydro: 24, 'wind-onshore': 11, solar: 48 };
type BenchCategory = keyof typeof FACTORS;
const CATEGORY_NAMES = Object.keys(FACTORS) as BenchCategory[];

const round1 = (value: number): number => Math.round(value * 10) / 10;

/** A computed zone's hour: a mix shaped by time of day and season, its intensity, 0.1% bad. */
function computed(zone: Zone, zoneIndex: number, ts: number): StoredReading {
  const hourOfDay = (ts / HOUR) % 24;
  const dayOfYear = (ts / 86_400) % 365.25;
  const daylight = Math.max(0, Math.sin((Math.PI * (hourOfDay - 6)) / 12));
  const summer = 0.6 + 0.4 * Math.cos((2 * Math.PI * (dayOfYear - 172)) / 365.25);
  const wind = 0.2 + 1.6 * unitHash(zoneIndex, Math.floor(ts / (6 * HOUR)));
  const demand = 1 + 0.2 * Math.sin((2 * Math.PI * (hourOfDay - 8)) / 24);
  const jitter = 0.9 + 0.2 * unitHash(zoneIndex + 1000, ts);
  const capacity = (category: BenchCategory): number =>
    1000 * unitHash(zoneIndex, CATEGORY_NAMES.indexOf(category) + 1);
  const mix: Record<string, number> = {
    coal: round1(capacity('coal') * demand * jitter),
    gas: round1(capacity('gas') * demand * (2 - jitter)),
    nuclear: round1(capacity('nuclear')),
    hydro: round1(capacity('hydro') * (0.5 + 0.5 * summer)),
    'wind-onshore': round1(capacity('wind-onshore') * wind),
    solar: round1(capacity('solar') * daylight * summer),
  };
  // An hour that only got its coal rows: kept, marked, never served (docs/method.md, "Complete
  // and incomplete hours").
  if (unitHash(zoneIndex + 2000, ts) < 0.001) {
    return {
      zone: zone.code,
      ts,
      value: FACTORS.coal,
      method: 'computed:v1',
      complete: false,
      mix: { coal: mix.coal! },
      lifecycle: null,
      direct: null,
    };
  }
  let energy = 0;
  let emissions = 0;
  for (const category of CATEGORY_NAMES) {
    energy += mix[category]!;
    emissions += mix[category]! * FACTORS[category];
  }
  return {
    zone: zone.code,
    ts,
    value: emissions / energy,
    method: 'computed:v1',
    complete: true,
    mix,
    lifecycle: emissions / energy,
    direct: intensityOfMix(mix, 'direct'),
  };
}

/** GB: the operator's own figure, with a mix of shares (in %) as the generation feed brings. */
function ukReading(zone: Zone, ts: number): StoredReading {
  const hourOfDay = (ts / HOUR) % 24;
  const value =
    60 + 120 * unitHash(7, Math.floor(ts / (3 * HOUR))) + 40 * Math.sin((Math.PI * hourOfDay) / 12);
  const gas = round1(20 + 30 * unitHash(8, Math.floor(ts / (3 * HOUR))));
  const mix = { gas, nuclear: 15, 'wind-onshore': round1(70 - gas), solar: 10, biomass: 5 };
  return {
    zone: zone.code,
    ts,
    value,
    method: 'upstream:uk-operator:actual',
    complete: true,
    mix,
    lifecycle: intensityOfMix(mix, 'lifecycle'),
    direct: intensityOfMix(mix, 'direct'),
  };
}

/** Days of consumption series each store holds (the serving benches read the newest hours). */
const CONSUMPTION_DAYS = 30;

/**
 * A consumption series for every zone that has one, over the last CONSUMPTION_DAYS of the
 * dataset, as `replaceConsumption` takes it: one write per zone's graph and day. Not traced from
 * flows (the dataset has none): shaped from the zone's production hour, so that serving it costs
 * what serving a traced series costs.
 */
export function* consumptionWrites(): Generator<{
  graph: FlowGraphId;
  hours: number[];
  rows: ConsumptionRow[];
}> {
  for (let day = CONSUMPTION_DAYS; day > 0; day--) {
    const hours = Array.from({ length: 24 }, (_, h) => DATASET_END - day * 86_400 + h * HOUR);
    for (const graph of ['europe', 'us'] as const) {
      const rows: ConsumptionRow[] = [];
      for (const [zoneIndex, zone] of ZONES.entries()) {
        if (
          !hasConsumptionSeries(zone) ||
          (zone.source === 'europe-tso') !== (graph === 'europe')
        ) {
          continue;
        }
        for (const ts of hours) {
          const hour = computed(zone, zoneIndex, ts);
          if (!hour.complete) continue;
          const imported = 0.3 * unitHash(zoneIndex + 3000, ts);
          rows.push({
            zone: zone.code,
            ts,
            lifecycle: hour.lifecycle! * (1 - imported) + 300 * imported,
            direct: hour.direct! * (1 - imported) + 250 * imported,
            consumption: hour.mix!,
            imports: { [ZONES[(zoneIndex + 1) % ZONES.length]!.code]: 100 * imported },
            exports: {},
            estimatedPct: 0,
            estimatedBorders: [],
            renewablePct: 30,
            lowCarbonPct: 50,
          });
        }
      }
      yield { graph, hours, rows };
    }
  }
}
