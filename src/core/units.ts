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
 * A value in whole tenths, by the rule above. Shifting the decimal point in the printed form
 * (`124.55` -> `1245.5`) is exact; a value printed with an exponent (below 1e-6 or from 1e21)
 * has no tie to break at one decimal and is scaled directly.
 */
export function toTenths(value: number): number {
  if (!Number.isFinite(value)) return value;
  const magnitude = Math.abs(value);
  const printed = String(magnitude);
  const shifted = printed.includes('e') ? magnitude * 10 : Number(`${printed}e1`);
  const tenths = Math.round(shifted);
  return value < 0 ? -tenths : tenths;
}

/** A value rounded to 1 decimal, by the rule above. */
export const round1 = (value: number): number => toTenths(value) / 10;

/** `round1`, or null for a figure that could not be measured (NaN, stored as null). */
export const round1OrNull = (value: number | null): number | null =>
  value !== null && Number.isFinite(value) ? round1(value) : null;
