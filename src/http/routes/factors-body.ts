import { ANNUAL_INTENSITIES } from '../../core/consumption/fallback.js';
import { BASES, CATEGORIES, FACTORS } from '../../core/factors.js';
import { round1 } from '../../core/units.js';
import { BASIS_METHOD } from '../../core/reading.js';
import { UNIT } from '../../core/units.js';
import { codeMappings } from '../../core/zones.js';
import { apiCategory } from '../transport/encode.js';
import type { FactorsResponse } from '../contract/schemas.js';

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
  const mappings = Object.fromEntries(
    Object.entries(codeMappings()).map(([source, codes]) => [
      source,
      Object.fromEntries(
        Object.entries(codes).map(([code, category]) => [code, apiCategory(category)]),
      ),
    ]),
  ) as FactorsResponse['mappings'];
  const neighbours = ANNUAL_INTENSITIES.map((row) => ({
    codes: [...row.codes],
    area: row.area,
    year: row.year,
    lifecycle: round1(row.lifecycle),
    direct: round1(row.direct),
    source: row.source,
  }));
  return { unit: UNIT, bases, mappings, unsolved_neighbours: neighbours };
}
