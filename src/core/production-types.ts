/**
 * Upstream production codes → fuel category, exactly as docs/method.md maps them.
 * A code missing from a table is unknown: the method books it as `other` and reports it.
 */
import type { Category } from './factors.js';

/**
 * `storage` and `imports` are excluded from both sums of the formula (docs/method.md): values
 * are generation inside the zone.
 */
export type CodeClass = Category | 'storage' | 'imports';

export const isExcluded = (codeClass: CodeClass): codeClass is 'storage' | 'imports' =>
  codeClass === 'storage' || codeClass === 'imports';

export type CodeTable = ReadonlyMap<string, CodeClass>;

/** ENTSO-E A75 psrType (docs/method.md, "Mappings"; docs/upstreams.md §1.2). */
export const PSR_TYPES: CodeTable = new Map<string, CodeClass>([
  ['B01', 'biomass'],
  ['B02', 'coal'], // lignite
  ['B03', 'gas'], // coal-derived gas
  ['B04', 'gas'],
  ['B05', 'coal'],
  ['B06', 'oil'],
  ['B07', 'coal'], // oil shale
  ['B08', 'coal'], // peat
  ['B09', 'geothermal'],
  ['B10', 'storage'], // hydro pumped storage, in both directions
  ['B11', 'hydro'],
  ['B12', 'hydro'],
  ['B13', 'marine'],
  ['B14', 'nuclear'],
  ['B15', 'biomass'], // other renewable
  ['B16', 'solar'],
  ['B17', 'biomass'], // waste
  ['B18', 'wind-offshore'],
  ['B19', 'wind-onshore'],
  ['B20', 'other'],
  ['B25', 'storage'], // energy storage (batteries etc.)
]);

/** EIA fuel-type-data `fueltype` (docs/method.md, "Mappings"; docs/upstreams.md §2.5). */
export const EIA_FUEL_TYPES: CodeTable = new Map<string, CodeClass>([
  ['COL', 'coal'],
  ['NG', 'gas'],
  ['OIL', 'oil'],
  ['NUC', 'nuclear'],
  ['WAT', 'hydro'],
  ['SUN', 'solar'],
  ['WND', 'wind-onshore'],
  ['GEO', 'geothermal'],
  ['SNB', 'solar'], // solar with integrated battery storage
  ['WNB', 'wind-onshore'], // wind with integrated battery storage
  ['OTH', 'other'],
  ['UNK', 'other'],
  ['BAT', 'storage'],
  ['PS', 'storage'],
  ['OES', 'storage'],
  ['UES', 'storage'],
]);

/**
 * CAISO reports no battery rows; its batteries fall into OTH, which is therefore storage
 * (docs/method.md, "Mappings"; docs/upstreams.md §2.5).
 */
const CAISO_FUEL_TYPES: CodeTable = new Map([...EIA_FUEL_TYPES, ['OTH', 'storage']]);

/** The fueltype table that applies to one EIA respondent. */
export function eiaFuelTypesOf(respondent: string): CodeTable {
  return respondent === 'CISO' ? CAISO_FUEL_TYPES : EIA_FUEL_TYPES;
}

/**
 * NESO generation-mix `fuel` (docs/method.md, "Great Britain"). The operator's `wind` is one
 * undivided figure, booked as onshore (as EIA's WND); imports are not GB generation.
 */
export const NESO_FUELS: CodeTable = new Map<string, CodeClass>([
  ['biomass', 'biomass'],
  ['coal', 'coal'],
  ['gas', 'gas'],
  ['nuclear', 'nuclear'],
  ['hydro', 'hydro'],
  ['solar', 'solar'],
  ['wind', 'wind-onshore'],
  ['other', 'other'],
  ['imports', 'imports'],
]);
