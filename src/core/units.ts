/**
 * Units and rounding of every served value: one spelling each (decisions.md, "Numbers").
 *
 * The rounding rule: a value is rounded to 1 decimal as the decimal number it prints as
 * (JavaScript's shortest round-trip form, `String(value)`), halves away from zero. So the exact
 * tie 2491/20 = 124.55 serves as 124.6, although the binary double nearest to it lies just
 * below (124.549999...), where `toFixed(1)` gives 124.5. Values that are no tie round as before.
 */

import type { Method } from './reading.js';

/** The unit of every intensity served. */
export const UNIT = 'gCO2eq/kWh';

/** The same unit as grid-intensity-go exporters label it, for the metrics that keep their names. */
export const GRID_INTENSITY_GO_UNIT = 'gCO2e per kWh';

/** The method of the GB operator's provisional figure, served after its settled ones. */
export const PROVISIONAL_METHOD = 'upstream:uk-operator:forecast' satisfies Method;

/**
 * A value in whole tenths, by the rule above. Most values are far from a tie: ten times the
 * double, rounded, is the answer, and the check that it is far is a few arithmetic operations
 * (a mix body of 5,000 intervals rounds some 70,000 values). Near a tie, shifting the decimal
 * point in the printed form (`124.55` -> `1245.5`) is exact; a value printed with an exponent
 * (below 1e-6 or from 1e21) has no tie to break at one decimal and is scaled directly.
 */
export function toTenths(value: number): number {
  return toUnitsOf(value, 1);
}

/** `value` in whole units of its `digits`-th decimal (1 to 3), by the rule above. */
function toUnitsOf(value: number, digits: 1 | 2 | 3): number {
  if (!Number.isFinite(value)) return value;
  const magnitude = Math.abs(value);
  const scaled = magnitude * SCALE[digits];
  // `scaled` is within a few units in the last place of the printed value times ten (relative
  // 1e-15); a margin of 1e-9 relative, and at least 1e-9, leaves every doubtful case to the
  // exact method below.
  const fromHalf = Math.abs(scaled - Math.floor(scaled) - 0.5);
  const units =
    fromHalf > 1e-9 * Math.max(1, scaled) ? Math.round(scaled) : exactUnits(magnitude, digits);
  return value < 0 ? -units : units;
}

const SCALE = [1, 10, 100, 1000] as const;

function exactUnits(magnitude: number, digits: 1 | 2 | 3): number {
  const printed = String(magnitude);
  return Math.round(
    printed.includes('e') ? magnitude * SCALE[digits] : Number(`${printed}e${digits}`),
  );
}

/** A value rounded to 1 decimal, by the rule above. */
export const round1 = (value: number): number => toTenths(value) / 10;

/** A value rounded to 3 decimals (the ratios of the skill table, a window's coverage), by the rule above. */
export const round3 = (value: number): number => toUnitsOf(value, 3) / 1000;

/**
 * A whole number of a value as served: its tenths first, then halves up, so a peer's integer
 * agrees with the tenth /v1 serves (100.46 serves as 100.5, so 101, never 100).
 */
export const wholeAsServed = (value: number): number => Math.round(toTenths(value) / 10);

/** `round1`, or null for a figure that could not be measured (NaN, stored as null). */
export const round1OrNull = (value: number | null): number | null =>
  value !== null && Number.isFinite(value) ? round1(value) : null;
