import type { StoredReading } from '../../src/core/reading.js';

/**
 * The expected intensity, worked out the way a spreadsheet would: the energy of each upstream
 * type written out from the fixture (negatives already counted as 0), each times its factor
 * (docs/method.md) written out in the test, divided by the total. Independent of src/core.
 */
export function spreadsheet(
  rows: ReadonlyArray<readonly [type: string, energy: number, factor: number]>,
): number {
  const emissions = rows.reduce((sum, [, energy, factor]) => sum + energy * factor, 0);
  const total = rows.reduce((sum, [, energy]) => sum + energy, 0);
  return emissions / total;
}

/** The reading that starts at `iso`; the test fails if there is none. */
export function readingAt(readings: readonly StoredReading[], iso: string): StoredReading {
  const reading = readings.find(({ ts }) => ts === Date.parse(iso) / 1000);
  if (!reading) throw new Error(`no reading at ${iso}`);
  return reading;
}
