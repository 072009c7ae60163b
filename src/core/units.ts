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
  if (!Number.isFinite(value)) return value;
  const magnitude = Math.abs(value);
  const scaled = magnitude * 10;
  // `scaled` is within a few units in the last place of the printed value times ten (relative
  // 1e-15); a margin of 1e-9 relative, and at least 1e-9, leaves every doubtful case to the
  // exact method below.
  const fromHalf = Math.abs(scaled - Math.floor(scaled) - 0.5);
  const tenths =
    fromHalf > 1e-9 * Math.max(1, scaled) ? Math.round(scaled) : exactTenths(magnitude);
  return value < 0 ? -tenths : tenths;
}

function exactTenths(magnitude: number): number {
  const printed = String(magnitude);
  return Math.round(printed.includes('e') ? magnitude * 10 : Number(`${printed}e1`));
}

/** A value rounded to 1 decimal, by the rule above. */
export const round1 = (value: number): number => toTenths(value) / 10;

/** `round1`, or null for a figure that could not be measured (NaN, stored as null). */
export const round1OrNull = (value: number | null): number | null =>
  value !== null && Number.isFinite(value) ? round1(value) : null;
