import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { round1 } from '../units.js';
import { ANNUAL_INTENSITIES, ANNUAL_INTENSITY_OF } from './fallback.js';

const METHOD_MD = readFileSync(new URL('../../../docs/method.md', import.meta.url), 'utf8');

/** A value as the table prints it: 1 decimal, by the rounding rule. */
const asPrinted = (value: number) => {
  const rounded = round1(value);
  return Number.isInteger(rounded) ? `${rounded}.0` : String(rounded);
};

describe('the annual intensities of neighbours without an hourly mix', () => {
  it('computes a row from its mix with the factors of method.md', () => {
    // Manitoba 2020: gas 0.3 %, hydro 97.15 %, wind 2.54 % (total 99.99).
    const manitoba = ANNUAL_INTENSITY_OF.get('MHEB')!;
    expect(manitoba.lifecycle).toBeCloseTo((0.3 * 490 + 97.15 * 24 + 2.54 * 11) / 99.99, 10);
    expect(manitoba.direct).toBeCloseTo((0.3 * 370) / 99.99, 10);
    // Ukraine 2022 books 6.41 % as unknown, at the source's own factors 28 and 0.
    const ukraine = ANNUAL_INTENSITY_OF.get('UA')!;
    const known = { lifecycle: 0, direct: 0, total: 0 };
    for (const [share, lifecycle, direct] of [
      [21.974, 820, 760],
      [7.566, 490, 370],
      [0.024, 650, 406],
      [0.059, 230, 0],
      [7.49, 24, 0],
      [56.26, 12, 0],
      [0.037, 48, 0],
      [0.157, 11, 0],
      [6.41, 28, 0],
    ] as const) {
      known.lifecycle += share * lifecycle;
      known.direct += share * direct;
      known.total += share;
    }
    expect(ukraine.lifecycle).toBeCloseTo(known.lifecycle / known.total, 10);
    expect(ukraine.direct).toBeCloseTo(known.direct / known.total, 10);
  });

  it('lists the values docs/method.md lists', () => {
    const heading = METHOD_MD.indexOf('### Annual intensities of neighbours without an hourly mix');
    expect(heading).toBeGreaterThan(-1);
    const rows = METHOD_MD.slice(heading)
      .split('\n')
      .filter((line) => /^\| [^-|]/.test(line))
      .slice(1)
      .map((line) => line.split('|').map((cell) => cell.trim()));
    expect(
      rows.map(([, neighbour, year, lifecycle, direct]) => [neighbour, year, lifecycle, direct]),
    ).toEqual(
      ANNUAL_INTENSITIES.map((row) => [
        `${row.area.replace(/ \(.*\)$/, '')} (${row.codes.join(', ')})`,
        String(row.year),
        asPrinted(row.lifecycle),
        asPrinted(row.direct),
      ]),
    );
  });

  it('names a source for every row, and each code once', () => {
    for (const row of ANNUAL_INTENSITIES) {
      expect(row.source.length, row.area).toBeGreaterThan(20);
      expect(row.direct, row.area).toBeLessThanOrEqual(row.lifecycle);
    }
    const codes = ANNUAL_INTENSITIES.flatMap((row) => row.codes);
    expect(new Set(codes).size).toBe(codes.length);
    expect(ANNUAL_INTENSITY_OF.get('CFE')).toBe(ANNUAL_INTENSITY_OF.get('CEN'));
  });
});
