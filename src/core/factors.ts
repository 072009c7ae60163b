/**
 * Fuel categories of the `computed:v1` method and their lifecycle emission factors, exactly as
 * pinned in docs/method.md (the factor table). Changing a number here changes every computed
 * value: run `gridco2 recompute` afterwards (values are recomputed from the stored mix).
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

/**
 * gCO2eq/kWh, lifecycle. "AR5" = IPCC AR5 WG III Annex III (Schlömer et al. 2014), Table A.III.2,
 * median of the harmonised literature.
 */
export const EMISSION_FACTORS: Readonly<Record<Category, number>> = Object.freeze({
  coal: 820, // AR5, coal PC; also lignite, oil shale and peat (docs/method.md, known biases)
  gas: 490, // AR5, gas combined cycle
  oil: 650, // not in AR5; Electricity Maps default, citing UK POST (2006)
  biomass: 230, // AR5, biomass dedicated; also waste and other renewable
  geothermal: 38, // AR5
  hydro: 24, // AR5
  nuclear: 12, // AR5
  solar: 48, // AR5, solar PV utility
  'wind-onshore': 11, // AR5
  'wind-offshore': 12, // AR5
  marine: 17, // AR5, ocean (pinned by docs/method.md; not checked against the AR5 table itself)
  other: 700, // not in AR5; Electricity Maps default for unknown thermal
});

export function isCategory(name: string): name is Category {
  return (CATEGORIES as readonly string[]).includes(name);
}
