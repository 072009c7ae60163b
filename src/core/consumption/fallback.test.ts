import { describe, expect, it } from 'vitest';
import { round1 } from '../units.js';
import { ANNUAL_INTENSITIES, ANNUAL_INTENSITY_OF } from './fallback.js';

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
    const table = ANNUAL_INTENSITIES.map((row) => [
      row.codes.join(' '),
      row.year,
      round1(row.lifecycle),
      round1(row.direct),
    ]);
    expect(table).toEqual([
      ['TR', 2024, 425.3, 363.3],
      ['UA', 2022, 228, 195.1],
      ['RU', 2024, 358.6, 275.1],
      ['RU-KGD', 2014, 480.5, 362.6],
      ['MA', 2024, 620.6, 548.6],
      ['AM', 2020, 236, 171.6],
      ['AESO', 2024, 403.6, 302.9],
      ['BCHA', 2024, 73.5, 42.9],
      ['HQT', 2024, 34.8, 5.1],
      ['IESO', 2024, 93.9, 60.8],
      ['MHEB', 2020, 25.1, 1.1],
      ['NBSO', 2024, 152.2, 108.9],
      ['SPC', 2024, 520.6, 436.2],
      ['CEN CFE', 2020, 408, 300.3],
    ]);
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
