import type { Basis } from '../../../core/factors.js';
import { isCategory, RENEWABLE } from '../../../core/factors.js';
import type { Mix, Reading } from '../../../core/reading.js';
import type { ConsumptionMixPoint } from '../../../read/read-model.js';
import { electricityMapsCodeOf } from '../../../core/zone-names.js';
import { isProvisional } from '../../../core/served-forecast.js';
import { wholeAsServed } from '../../../core/units.js';

/**
 * Bodies of the Electricity Maps v3 compatibility API (docs/compat.md), in that API's field
 * names and formats, from our readings. Pure: the route reads, this shapes.
 *
 * Formats follow recorded Electricity Maps answers (docs/compat.md cites them): times as
 * `2023-07-13T00:00:00.000Z`, `carbonIntensity` a whole number (the Carbon Aware SDK reads it
 * into an `int` and fails on a fraction), `estimationMethod` null when not estimated.
 */

/** `2023-07-13T00:00:00.000Z`, as Electricity Maps writes times. */
const emTime = (epochSeconds: number): string => new Date(epochSeconds * 1000).toISOString();

/** What a value is when it is not a settled figure (the GB operator's forecast served as one). */
const OPERATOR_FORECAST_ESTIMATION = 'GRID_OPERATOR_FORECAST';

export interface EmIntensity {
  readonly zone: string;
  readonly carbonIntensity: number;
  readonly datetime: string;
  readonly updatedAt: string;
  readonly createdAt: string;
  readonly emissionFactorType: Basis;
  readonly isEstimated: boolean;
  readonly estimationMethod: string | null;
}

/**
 * One interval. We keep no write time per value, so `createdAt` and `updatedAt` are the end of
 * the interval: the earliest instant the value can have existed (docs/compat.md says so).
 */
export function emIntensity(
  zoneKey: string,
  reading: Reading,
  stepSeconds: number,
  basis: Basis,
): EmIntensity {
  const estimated = isProvisional(reading);
  const written = emTime(reading.ts + stepSeconds);
  return {
    zone: zoneKey,
    carbonIntensity: wholeAsServed(reading.value),
    datetime: emTime(reading.ts),
    updatedAt: written,
    createdAt: written,
    emissionFactorType: basis,
    isEstimated: estimated,
    estimationMethod: estimated ? OPERATOR_FORECAST_ESTIMATION : null,
  };
}

export interface EmForecast {
  readonly zone: string;
  readonly forecast: { carbonIntensity: number; datetime: string }[];
  readonly updatedAt: string;
}

/** A forecast series as `{zone, forecast: [{carbonIntensity, datetime}], updatedAt}`. */
export function emForecast(
  zoneKey: string,
  points: readonly { ts: number; value: number }[],
  generatedAt: number,
): EmForecast {
  return {
    zone: zoneKey,
    forecast: points.map((point) => ({
      carbonIntensity: wholeAsServed(point.value),
      datetime: emTime(point.ts),
    })),
    updatedAt: emTime(generatedAt),
  };
}

/** Electricity Maps' production categories, in the order its answers list them. */
const EM_SOURCES = [
  'nuclear',
  'geothermal',
  'biomass',
  'coal',
  'wind',
  'solar',
  'hydro',
  'gas',
  'oil',
  'unknown',
  'hydro discharge',
  'battery discharge',
] as const;

/** Our categories as Electricity Maps names them; marine and other have no key of their own. */
const EM_SOURCE_OF: Readonly<Record<string, (typeof EM_SOURCES)[number]>> = {
  nuclear: 'nuclear',
  geothermal: 'geothermal',
  biomass: 'biomass',
  coal: 'coal',
  'wind-onshore': 'wind',
  'wind-offshore': 'wind',
  solar: 'solar',
  hydro: 'hydro',
  gas: 'gas',
  oil: 'oil',
  marine: 'unknown',
  other: 'unknown',
  'imported-estimated': 'unknown',
};

export interface EmPowerBreakdown {
  readonly zone: string;
  readonly datetime: string;
  readonly updatedAt: string;
  readonly createdAt: string;
  readonly powerConsumptionBreakdown: Record<string, number | null>;
  readonly powerProductionBreakdown: Record<string, number | null>;
  readonly powerImportBreakdown: Record<string, number>;
  readonly powerExportBreakdown: Record<string, number>;
  readonly fossilFreePercentage: number | null;
  readonly renewablePercentage: number | null;
  readonly powerConsumptionTotal: number | null;
  readonly powerProductionTotal: number | null;
  readonly powerImportTotal: number | null;
  readonly powerExportTotal: number | null;
  readonly isEstimated: boolean;
  readonly estimationMethod: null;
}

/** MW per Electricity Maps source of amounts per category (null: the unit has no MW). */
function bySource(
  amounts: Readonly<Partial<Record<string, number>>>,
  toMw: number | undefined,
): {
  breakdown: Record<string, number | null>;
  total: number;
  renewable: number;
  lowCarbon: number;
} {
  const breakdown: Record<string, number | null> = {};
  for (const source of EM_SOURCES) breakdown[source] = toMw === undefined ? null : 0;
  let total = 0;
  let renewable = 0;
  let lowCarbon = 0;
  for (const [category, amount] of Object.entries(amounts)) {
    const source = EM_SOURCE_OF[category];
    if (source === undefined || amount === undefined) continue;
    total += amount;
    const isRenewable = isCategory(category) && RENEWABLE.has(category);
    if (isRenewable) renewable += amount;
    if (isRenewable || category === 'nuclear') lowCarbon += amount;
    if (toMw !== undefined) breakdown[source] = (breakdown[source] ?? 0) + amount * toMw;
  }
  for (const source of EM_SOURCES) {
    const value = breakdown[source];
    if (value !== null && value !== undefined) breakdown[source] = Math.round(value);
  }
  return { breakdown, total, renewable, lowCarbon };
}

/** MW per neighbour, by the keys Electricity Maps clients know the neighbours by. */
const byNeighbour = (flows: Readonly<Record<string, number>>, toMw: number) =>
  Object.fromEntries(
    Object.entries(flows).map(([code, mwh]) => [
      electricityMapsCodeOf(code),
      Math.round(mwh * toMw),
    ]),
  );

const sum = (flows: Readonly<Record<string, number>>) =>
  Object.values(flows).reduce((total, mwh) => total + mwh, 0);

/**
 * One interval's generation as an Electricity Maps power breakdown, in MW. A mix in MWh over an
 * hour is its mean MW; over a half hour, twice that. With the zone's traced mix (extensions §15),
 * consumption, imports and exports are the traced ones and the percentages are of the
 * consumption, as Electricity Maps gives them; without it (GB, or a server without flows),
 * consumption is given as production, imports and exports as empty. GB's mix is a share of
 * generation (`%`), which has no MW: every MW field is null there and only the percentages are
 * given.
 */
export function emPowerBreakdown(
  zoneKey: string,
  ts: number,
  mix: Mix,
  unit: 'MWh' | '%',
  stepSeconds: number,
  traced?: ConsumptionMixPoint,
): EmPowerBreakdown {
  const toMw = unit === 'MWh' ? 3600 / stepSeconds : undefined;
  const production = bySource(mix, toMw);
  const productionTotal = toMw === undefined ? null : Math.round(production.total * toMw);
  const consumed = traced && toMw !== undefined ? bySource(traced.consumption, toMw) : production;
  const share = (part: number) =>
    consumed.total > 0 ? Math.round((100 * part) / consumed.total) : null;
  const written = emTime(ts + stepSeconds);
  return {
    zone: zoneKey,
    datetime: emTime(ts),
    updatedAt: written,
    createdAt: written,
    powerConsumptionBreakdown: { ...consumed.breakdown },
    powerProductionBreakdown: production.breakdown,
    powerImportBreakdown: traced && toMw !== undefined ? byNeighbour(traced.imports, toMw) : {},
    powerExportBreakdown: traced && toMw !== undefined ? byNeighbour(traced.exports, toMw) : {},
    fossilFreePercentage: share(consumed.lowCarbon),
    renewablePercentage: share(consumed.renewable),
    powerConsumptionTotal: toMw === undefined ? null : Math.round(consumed.total * toMw),
    powerProductionTotal: productionTotal,
    powerImportTotal:
      toMw === undefined ? null : traced ? Math.round(sum(traced.imports) * toMw) : 0,
    powerExportTotal:
      toMw === undefined ? null : traced ? Math.round(sum(traced.exports) * toMw) : 0,
    isEstimated: false,
    estimationMethod: null,
  };
}
