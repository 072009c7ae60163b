import type { Reading } from '../core/reading.js';
import type { SeriesWindow } from './read-model.js';

/**
 * How a peer whose source publishes consumption-based values (Electricity Maps) reads a zone
 * (extensions §15, Compat), the same from memory and from the store: the consumption value of
 * each interval that has one, else its production value.
 */

/** The points of `produced`, each replaced by the point of `consumed` at its ts where there is one. */
export function consumptionWhereTraced(produced: SeriesWindow, consumed: SeriesWindow): Reading[] {
  const readings: Reading[] = [];
  let traced = consumed.start;
  for (let i = produced.start; i < produced.end; i++) {
    const ts = produced.series.ts(i);
    // Both ascending: walk the consumption points along.
    while (traced < consumed.end && consumed.series.ts(traced) < ts) traced++;
    const from =
      traced < consumed.end && consumed.series.ts(traced) === ts
        ? { series: consumed.series, index: traced }
        : { series: produced.series, index: i };
    readings.push({
      ts,
      value: from.series.value(from.index),
      method: from.series.method(from.index),
    });
  }
  return readings;
}

/** The newer of a zone's newest production and consumption readings; consumption on a tie. */
export const newerOf = (
  produced: Reading | undefined,
  consumed: Reading | undefined,
): Reading | undefined =>
  consumed && (!produced || consumed.ts >= produced.ts) ? consumed : produced;
