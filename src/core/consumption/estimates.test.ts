import { describe, expect, it } from 'vitest';
import type { Mix } from '../reading.js';
import { HOUR } from '../time.js';
import { estimateIntensity, importEstimate } from './estimates.js';
import { ANNUAL_INTENSITY_OF } from './fallback.js';

const H = Date.UTC(2026, 2, 10, 12) / 1000;
const MOROCCO = ANNUAL_INTENSITY_OF.get('MA')!;

const sharesAt = (byHoursBack: Record<number, Mix>) => (ts: number) => byHoursBack[(H - ts) / HOUR];

describe('importEstimate: how an unsolved neighbour exports enter', () => {
  it('takes its shares of the hour itself first', () => {
    const estimate = importEstimate(H, sharesAt({ 0: { gas: 10 }, 1: { coal: 10 } }), MOROCCO);
    expect(estimate).toEqual({ kind: 'shares', ts: H, shares: { gas: 10 } });
  });

  it('else its newest complete shares of h-1 .. h-24', () => {
    const shares = { 3: { coal: 5 }, 7: { gas: 5 }, 24: { hydro: 5 } };
    expect(importEstimate(H, sharesAt(shares), MOROCCO)).toEqual({
      kind: 'shares',
      ts: H - 3 * HOUR,
      shares: { coal: 5 },
    });
    expect(importEstimate(H, sharesAt({ 24: { hydro: 5 } }), undefined)).toEqual({
      kind: 'shares',
      ts: H - 24 * HOUR,
      shares: { hydro: 5 },
    });
  });

  it('skips shares that add up to nothing', () => {
    const estimate = importEstimate(H, sharesAt({ 0: { gas: 0 }, 2: { solar: 1 } }), undefined);
    expect(estimate).toEqual({ kind: 'shares', ts: H - 2 * HOUR, shares: { solar: 1 } });
  });

  it('else the annual intensity of the table, else the other factor; never h-25', () => {
    expect(importEstimate(H, sharesAt({ 25: { gas: 1 } }), MOROCCO)).toEqual({
      kind: 'annual',
      row: MOROCCO,
    });
    expect(importEstimate(H, sharesAt({ 25: { gas: 1 } }), undefined)).toEqual({ kind: 'other' });
  });
});

describe('estimateIntensity', () => {
  it('values shares by the method, the annual row as given, and other at 700 and 575', () => {
    // (30 x 490 + 10 x 820) / 40 = 572.5; 30 x 370 + 10 x 760 = 18700, / 40 = 467.5.
    expect(estimateIntensity({ kind: 'shares', ts: H, shares: { gas: 30, coal: 10 } })).toEqual({
      lifecycle: 572.5,
      direct: 467.5,
    });
    expect(estimateIntensity({ kind: 'annual', row: MOROCCO })).toEqual({
      lifecycle: MOROCCO.lifecycle,
      direct: MOROCCO.direct,
    });
    expect(estimateIntensity({ kind: 'other' })).toEqual({ lifecycle: 700, direct: 575 });
    expect(estimateIntensity({ kind: 'shares', ts: H, shares: { gas: 0 } })).toEqual({
      lifecycle: 700,
      direct: 575,
    });
  });
});
