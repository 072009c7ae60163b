/**
 * How the exports of an unsolved neighbour enter the graph (extensions §15, "Unsolved
 * neighbours"): with its own shares of the hour, else its newest complete shares of the 24 hours
 * before, else at its annual intensity (fallback.ts), else at the `other` factor.
 */
import { type Basis, BASES, FACTORS } from '../factors.js';
import { intensityOfMix } from '../method.js';
import type { Mix } from '../reading.js';
import { HOUR } from '../time.js';
import type { AnnualIntensity } from './fallback.js';

/** How many hours back a neighbour's newest complete shares are looked for. */
export const SHARES_LOOKBACK_HOURS = 24;

/** Where the intensity of one neighbour's exports comes from, in the order of the rule. */
export type ImportEstimate =
  /** Its mix of hour `ts`: the hour itself, or the newest complete one of h-1 .. h-24. */
  | { readonly kind: 'shares'; readonly ts: number; readonly shares: Mix }
  | { readonly kind: 'annual'; readonly row: AnnualIntensity }
  | { readonly kind: 'other' };

/**
 * The estimate for a neighbour's exports in `hour`. `completeSharesAt(ts)` gives the neighbour's
 * complete mix of hour `ts` (MWh or %: only the shares matter), undefined where it has none; a
 * mix whose total is not above zero counts as none.
 */
export function importEstimate(
  hour: number,
  completeSharesAt: (ts: number) => Mix | undefined,
  annual: AnnualIntensity | undefined,
): ImportEstimate {
  for (let back = 0; back <= SHARES_LOOKBACK_HOURS; back++) {
    const ts = hour - back * HOUR;
    const shares = completeSharesAt(ts);
    if (shares !== undefined && intensityOfMix(shares) !== null)
      return { kind: 'shares', ts, shares };
  }
  return annual === undefined ? { kind: 'other' } : { kind: 'annual', row: annual };
}

/** gCO2eq/kWh of what a neighbour exports, on each basis, by its estimate. */
export function estimateIntensity(estimate: ImportEstimate): Readonly<Record<Basis, number>> {
  const byBasis = (basis: Basis): number => {
    switch (estimate.kind) {
      case 'shares':
        return intensityOfMix(estimate.shares, basis) ?? FACTORS[basis].other.value;
      case 'annual':
        return estimate.row[basis];
      case 'other':
        return FACTORS[basis].other.value;
    }
  };
  return Object.fromEntries(BASES.map((basis) => [basis, byBasis(basis)])) as Record<Basis, number>;
}
