/**
 * Fuel categories and their emission factors on the two bases (docs/method.md). Changing a
 * number here changes every computed value: run `gridco2 recompute` afterwards (values are
 * recomputed from the stored mix).
 */

export const CATEGORIES = [
  'coal',
  'gas',
  'oil',
  'biomass',
  'geothermal',
  'hydro',
  'nuclear',
  'solar',
  'wind-onshore',
  'wind-offshore',
  'marine',
  'other',
] as const;
export type Category = (typeof CATEGORIES)[number];

/** The bases a value can be computed on from a mix. */
export const BASES = ['lifecycle', 'direct'] as const;
export type Basis = (typeof BASES)[number];

export interface Factor {
  /** gCO2eq/kWh. */
  readonly value: number;
  /** Where the number comes from. */
  readonly source: string;
}

const AR5 = 'IPCC AR5 WG III Annex III, Table A.III.2';

/**
 * Lifecycle: construction, fuel supply and decommissioning included, so wind, solar and nuclear
 * are not zero. Medians of the harmonised literature in AR5 (Schlömer et al. 2014).
 */
const LIFECYCLE: Readonly<Record<Category, Factor>> = {
  coal: { value: 820, source: `${AR5}, coal PC, lifecycle median; also lignite, oil shale, peat` },
  gas: { value: 490, source: `${AR5}, gas combined cycle, lifecycle median` },
  oil: { value: 650, source: 'not in AR5; Electricity Maps default (UK POST 2006)' },
  biomass: { value: 230, source: `${AR5}, biomass dedicated, lifecycle median` },
  geothermal: { value: 38, source: `${AR5}, geothermal, lifecycle median` },
  hydro: { value: 24, source: `${AR5}, hydropower, lifecycle median` },
  nuclear: { value: 12, source: `${AR5}, nuclear, lifecycle median` },
  solar: { value: 48, source: `${AR5}, solar PV utility, lifecycle median` },
  'wind-onshore': { value: 11, source: `${AR5}, wind onshore, lifecycle median` },
  'wind-offshore': { value: 12, source: `${AR5}, wind offshore, lifecycle median` },
  marine: { value: 17, source: `${AR5}, ocean energy, lifecycle median` },
  other: { value: 700, source: 'not in AR5; Electricity Maps default for unknown thermal' },
};

/**
 * Direct: combustion at the plant only. Biogenic CO2 is not counted in direct accounting, so
 * biomass is zero, as are the sources that burn nothing.
 */
const DIRECT: Readonly<Record<Category, Factor>> = {
  coal: { value: 760, source: `${AR5}, coal PC, direct emissions median` },
  gas: { value: 370, source: `${AR5}, gas combined cycle, direct emissions median` },
  oil: { value: 406, source: 'not in AR5; Electricity Maps default (direct)' },
  biomass: { value: 0, source: 'biogenic CO2 is not counted in direct accounting' },
  geothermal: { value: 0, source: 'no combustion' },
  hydro: { value: 0, source: 'no combustion' },
  nuclear: { value: 0, source: 'no combustion' },
  solar: { value: 0, source: 'no combustion' },
  'wind-onshore': { value: 0, source: 'no combustion' },
  'wind-offshore': { value: 0, source: 'no combustion' },
  marine: { value: 0, source: 'no combustion' },
  other: { value: 575, source: 'not in AR5; Electricity Maps default for unknown (direct)' },
};

export const FACTORS: Readonly<Record<Basis, Readonly<Record<Category, Factor>>>> = {
  lifecycle: LIFECYCLE,
  direct: DIRECT,
};

/** The lifecycle factors as plain numbers (the `computed:v1` table). */
export const EMISSION_FACTORS: Readonly<Record<Category, number>> = Object.freeze(
  Object.fromEntries(CATEGORIES.map((category) => [category, LIFECYCLE[category].value])) as Record<
    Category,
    number
  >,
);

export function isCategory(name: string): name is Category {
  return (CATEGORIES as readonly string[]).includes(name);
}

/** Categories that count as renewable in `renewable_pct` (nuclear is low-carbon, not renewable). */
export const RENEWABLE: ReadonlySet<Category> = new Set([
  'biomass',
  'geothermal',
  'hydro',
  'solar',
  'wind-onshore',
  'wind-offshore',
  'marine',
]);

/** `renewable_pct` and `low_carbon_pct` of a mix, unrounded. */
export interface CleanShares {
  readonly renewablePct: number;
  readonly lowCarbonPct: number;
}

/**
 * The renewable share (RENEWABLE) and the low-carbon share (renewable plus nuclear) of a mix, in %
 * of the sum of its amounts of `parts`, summed in that order (docs/method.md, `/v1/mix`). A part
 * that is neither (`other`, or a consumption mix's imports of unknown origin) counts in the total
 * only.
 */
export function cleanShares(
  mix: Readonly<Record<string, number>>,
  parts: readonly string[] = CATEGORIES,
): CleanShares {
  let total = 0;
  let renewable = 0;
  for (const part of parts) {
    const amount = mix[part];
    if (amount === undefined) continue;
    total += amount;
    if (RENEWABLE.has(part as Category)) renewable += amount;
  }
  const lowCarbon = renewable + (mix.nuclear ?? 0);
  return { renewablePct: (100 * renewable) / total, lowCarbonPct: (100 * lowCarbon) / total };
}
