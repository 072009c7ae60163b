import { BASES, CATEGORIES, FACTORS } from '../core/factors.js';
import {
  type CodeTable,
  EIA_FUEL_TYPES,
  isExcluded,
  NESO_FUELS,
  PSR_TYPES,
} from '../core/production-types.js';
import { BASIS_METHOD } from '../core/reading.js';
import { apiCategory } from './encode.js';
import type { FactorsResponse } from './schemas.js';

const mapping = (table: CodeTable): Record<string, string> =>
  Object.fromEntries(
    [...table].map(([code, codeClass]) => [
      code,
      isExcluded(codeClass) ? 'excluded' : apiCategory(codeClass),
    ]),
  );

/** `/v1/factors`: the factor tables of both bases and the code mappings, from the core's tables. */
export function factorsBody(): FactorsResponse {
  const bases = Object.fromEntries(
    BASES.map((basis) => [
      basis,
      {
        method: BASIS_METHOD[basis],
        factors: Object.fromEntries(
          CATEGORIES.map((category) => [apiCategory(category), { ...FACTORS[basis][category] }]),
        ),
      },
    ]),
  ) as FactorsResponse['bases'];
  return {
    unit: 'gCO2eq/kWh',
    bases,
    mappings: {
      'europe-tso': mapping(PSR_TYPES),
      'us-agency': mapping(EIA_FUEL_TYPES),
      'uk-operator': mapping(NESO_FUELS),
    },
  };
}
