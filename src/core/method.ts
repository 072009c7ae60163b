/**
 * The `computed:v1` method (docs/method.md): hourly generation per production code in,
 * one StoredReading per hour and the zone's quality counters out.
 *
 *     gco2eq_kwh = sum_f( E_f * EF_f ) / sum_f( E_f )      (storage in neither sum)
 */
import { type Basis, CATEGORIES, FACTORS, isCategory, type Category } from './factors.js';
import type { GenerationByCode, HourlySeries } from './generation.js';
import { type CodeTable, isExcluded } from './production-types.js';
import type { Method, Mix, StoredForecast, StoredReading, ZoneQuality } from './reading.js';

export const COMPUTED_METHOD = 'computed:v1' satisfies Method;

export interface ZoneReadings {
  readonly readings: readonly StoredReading[];
  /** Upstream forecasts fetched with the readings (GB's operator forecast), never readings. */
  readonly forecasts?: readonly StoredForecast[];
  readonly quality: ZoneQuality;
}

interface IncludedCode {
  readonly category: Category;
  readonly series: HourlySeries;
}

/**
 * Applies the method to one zone's generation over the fetched window.
 *
 * - Codes classed as storage are left out; a code missing from `codes` counts as `other` and is
 *   listed in `quality.unknownCodes`.
 * - A negative hourly value of a generation code counts as 0 and is counted in
 *   `quality.clampedNegatives`.
 * - One reading per hour in which at least one included code has a value. It is complete when
 *   every included code that has a value anywhere in `generation` has one in that hour and total
 *   generation is above zero; otherwise it is kept with its partial mix, `complete: false`.
 */
export function computeReadings(
  zone: string,
  generation: GenerationByCode,
  codes: CodeTable,
): ZoneReadings {
  const unknownCodes: string[] = [];
  const included: IncludedCode[] = [];
  for (const [code, series] of generation) {
    const codeClass = codes.get(code);
    if (codeClass === undefined) unknownCodes.push(code);
    if ((codeClass !== undefined && isExcluded(codeClass)) || series.size === 0) continue;
    included.push({ category: (codeClass as Category | undefined) ?? 'other', series });
  }

  const hours = [...new Set(included.flatMap(({ series }) => [...series.keys()]))].sort(
    (a, b) => a - b,
  );
  let clampedNegatives = 0;
  let incompleteHours = 0;
  const readings = hours.map((ts): StoredReading => {
    const energy = new Map<Category, number>();
    let everyCodeReported = true;
    for (const { category, series } of included) {
      const reported = series.get(ts);
      if (reported === undefined) {
        everyCodeReported = false;
        continue;
      }
      if (reported < 0) clampedNegatives += 1;
      energy.set(category, (energy.get(category) ?? 0) + Math.max(reported, 0));
    }
    // Keys in CATEGORIES order, so a mix reads (and serializes) the same whatever the input order.
    const mix: Record<string, number> = {};
    for (const category of CATEGORIES) {
      const mwh = energy.get(category);
      if (mwh !== undefined) mix[category] = mwh;
    }
    const value = intensityOfMix(mix);
    const complete = everyCodeReported && value !== null;
    if (!complete) incompleteHours += 1;
    return {
      zone,
      ts,
      value,
      method: COMPUTED_METHOD,
      complete,
      mix,
      lifecycle: complete ? value : null,
      direct: complete ? intensityOfMix(mix, 'direct') : null,
    };
  });

  return {
    readings,
    quality: {
      zone,
      pointsStored: readings.length,
      incompleteHours,
      clampedNegatives,
      unknownCodes: unknownCodes.sort(),
    },
  };
}

/**
 * gCO2eq/kWh of a stored mix (amounts per category: MWh, or GB's shares) on `basis` with the
 * current factors; null when the total is not above zero. `computeReadings` uses it too, so
 * recomputing an unchanged mix gives back exactly the stored value. Throws on a key that is not a
 * category: the store only holds mixes written by this module, so such a key means the row is
 * corrupt.
 */
export function intensityOfMix(mix: Mix, basis: Basis = 'lifecycle'): number | null {
  for (const key of Object.keys(mix)) {
    if (!isCategory(key)) throw new RangeError(`mix has an unknown fuel category: ${key}`);
  }
  const factors = FACTORS[basis];
  let emissions = 0;
  let total = 0;
  // Fixed summation order: the same mix always gives the same floating-point result.
  for (const category of CATEGORIES) {
    const amount = mix[category];
    if (amount === undefined) continue;
    emissions += amount * factors[category].value;
    total += amount;
  }
  return total > 0 ? emissions / total : null;
}
