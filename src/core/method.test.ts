import { describe, expect, it } from 'vitest';
import { CATEGORIES, EMISSION_FACTORS } from './factors.js';
import type { GenerationByCode } from './generation.js';
import { COMPUTED_METHOD, computeReadings, intensityOfMix } from './method.js';
import { EIA_FUEL_TYPES, PSR_TYPES, eiaFuelTypesOf } from './production-types.js';

const H0 = Date.UTC(2025, 0, 1, 0) / 1000;
const H1 = H0 + 3600;
const H2 = H0 + 7200;

function generation(byCode: Record<string, Record<number, number>>): GenerationByCode {
  return new Map(
    Object.entries(byCode).map(([code, hours]) => [
      code,
      new Map(Object.entries(hours).map(([ts, mwh]) => [Number(ts), mwh])),
    ]),
  );
}

describe('factor and code tables (method.md)', () => {
  it('holds the pinned factors', () => {
    expect(EMISSION_FACTORS).toEqual({
      coal: 820,
      gas: 490,
      oil: 650,
      biomass: 230,
      geothermal: 38,
      hydro: 24,
      nuclear: 12,
      solar: 48,
      'wind-onshore': 11,
      'wind-offshore': 12,
      marine: 17,
      other: 700,
    });
    expect(Object.keys(EMISSION_FACTORS)).toEqual([...CATEGORIES]);
  });

  it('maps every psrType as method.md does', () => {
    expect(Object.fromEntries(PSR_TYPES)).toEqual({
      B01: 'biomass',
      B02: 'coal',
      B03: 'gas',
      B04: 'gas',
      B05: 'coal',
      B06: 'oil',
      B07: 'coal',
      B08: 'coal',
      B09: 'geothermal',
      B10: 'storage',
      B11: 'hydro',
      B12: 'hydro',
      B13: 'marine',
      B14: 'nuclear',
      B15: 'biomass',
      B16: 'solar',
      B17: 'biomass',
      B18: 'wind-offshore',
      B19: 'wind-onshore',
      B20: 'other',
      B25: 'storage',
    });
  });

  it('maps every EIA fueltype as method.md does, with OTH as storage for CISO only', () => {
    const expected = {
      COL: 'coal',
      NG: 'gas',
      OIL: 'oil',
      NUC: 'nuclear',
      WAT: 'hydro',
      SUN: 'solar',
      WND: 'wind-onshore',
      GEO: 'geothermal',
      SNB: 'solar',
      WNB: 'wind-onshore',
      OTH: 'other',
      UNK: 'other',
      BAT: 'storage',
      PS: 'storage',
      OES: 'storage',
      UES: 'storage',
    };
    expect(Object.fromEntries(EIA_FUEL_TYPES)).toEqual(expected);
    expect(Object.fromEntries(eiaFuelTypesOf('PJM'))).toEqual(expected);
    expect(Object.fromEntries(eiaFuelTypesOf('CISO'))).toEqual({ ...expected, OTH: 'storage' });
  });
});

describe('computeReadings', () => {
  it('computes sum(E*EF)/sum(E) per hour, at full precision, with the mix in MWh per category', () => {
    const { readings, quality } = computeReadings(
      'XX',
      generation({ B05: { [H0]: 100 }, B02: { [H0]: 50 }, B19: { [H0]: 300.5 } }),
      PSR_TYPES,
    );
    expect(readings).toEqual([
      {
        zone: 'XX',
        ts: H0,
        value: (150 * 820 + 300.5 * 11) / 450.5,
        method: COMPUTED_METHOD,
        complete: true,
        mix: { coal: 150, 'wind-onshore': 300.5 },
        lifecycle: (150 * 820 + 300.5 * 11) / 450.5,
        // Direct: coal 760, wind 0.
        direct: (150 * 760 + 300.5 * 0) / 450.5,
      },
    ]);
    expect(quality).toEqual({
      zone: 'XX',
      pointsStored: 1,
      incompleteHours: 0,
      clampedNegatives: 0,
      unknownCodes: [],
    });
  });

  it('publishes an incomplete hour on no basis', () => {
    const { readings } = computeReadings(
      'XX',
      generation({ B04: { [H0]: 100, [H1]: 100 }, B05: { [H0]: 50 } }),
      PSR_TYPES,
    );
    expect(
      readings.map(({ complete, lifecycle, direct }) => [complete, lifecycle, direct]),
    ).toEqual([
      [true, (100 * 490 + 50 * 820) / 150, (100 * 370 + 50 * 760) / 150],
      [false, null, null],
    ]);
  });

  it('leaves storage out of both sums and out of the completeness check', () => {
    const { readings } = computeReadings(
      'XX',
      generation({ B04: { [H0]: 100, [H1]: 100 }, B10: { [H0]: 900 }, B25: { [H1]: 50 } }),
      PSR_TYPES,
    );
    expect(readings.map(({ value, complete, mix }) => ({ value, complete, mix }))).toEqual([
      { value: 490, complete: true, mix: { gas: 100 } },
      { value: 490, complete: true, mix: { gas: 100 } },
    ]);
  });

  it('books an unknown code as other and reports it', () => {
    const { readings, quality } = computeReadings(
      'XX',
      generation({ B04: { [H0]: 100 }, B99: { [H0]: 100 } }),
      PSR_TYPES,
    );
    expect(readings[0]?.value).toBe((100 * 490 + 100 * 700) / 200);
    expect(readings[0]?.mix).toEqual({ gas: 100, other: 100 });
    expect(quality.unknownCodes).toEqual(['B99']);
  });

  it('counts a negative generation value as 0 and counts it; negative storage is not counted', () => {
    const { readings, quality } = computeReadings(
      'XX',
      generation({
        NG: { [H0]: 100, [H1]: 100 },
        SUN: { [H0]: -2, [H1]: 40 },
        BAT: { [H0]: -300 },
      }),
      EIA_FUEL_TYPES,
    );
    expect(readings[0]).toMatchObject({ value: 490, complete: true, mix: { gas: 100, solar: 0 } });
    expect(readings[1]?.value).toBe((100 * 490 + 40 * 48) / 140);
    expect(quality.clampedNegatives).toBe(1);
  });

  it('marks an hour incomplete when a type that reports elsewhere in the window is missing', () => {
    const { readings, quality } = computeReadings(
      'XX',
      generation({ B05: { [H0]: 500, [H1]: 500, [H2]: 500 }, B19: { [H0]: 500, [H2]: 500 } }),
      PSR_TYPES,
    );
    // H1 has only the coal rows: it computes to exactly 820 and must not be published.
    expect(readings.map(({ ts, value, complete }) => [ts, value, complete])).toEqual([
      [H0, (500 * 820 + 500 * 11) / 1000, true],
      [H1, 820, false],
      [H2, (500 * 820 + 500 * 11) / 1000, true],
    ]);
    expect(readings[1]?.mix).toEqual({ coal: 500 });
    expect(quality).toMatchObject({ pointsStored: 3, incompleteHours: 1 });
  });

  it('marks an hour with no generation incomplete, with a null value', () => {
    const { readings, quality } = computeReadings(
      'XX',
      generation({ B16: { [H0]: 0 }, B14: { [H0]: -1 } }),
      PSR_TYPES,
    );
    expect(readings).toEqual([
      expect.objectContaining({ value: null, complete: false, mix: { nuclear: 0, solar: 0 } }),
    ]);
    expect(quality).toMatchObject({ incompleteHours: 1, clampedNegatives: 1 });
  });

  it('produces no reading for an hour in which nothing arrived, and none from storage alone', () => {
    const { readings } = computeReadings(
      'XX',
      generation({ B04: { [H0]: 10, [H2]: 10 }, B10: { [H1]: 10 } }),
      PSR_TYPES,
    );
    expect(readings.map(({ ts }) => ts)).toEqual([H0, H2]);
  });

  it('gives readings in time order whatever the order of the input', () => {
    const { readings } = computeReadings(
      'XX',
      generation({ B04: { [H2]: 1 }, B14: { [H1]: 1, [H0]: 1, [H2]: 1 } }),
      PSR_TYPES,
    );
    expect(readings.map(({ ts }) => ts)).toEqual([H0, H1, H2]);
  });
});

describe('intensityOfMix (recompute from a stored mix)', () => {
  it('gives back exactly the value computeReadings stored', () => {
    const { readings } = computeReadings(
      'XX',
      generation({
        B01: { [H0]: 123.45 },
        B04: { [H0]: 678.9 },
        B14: { [H0]: 4175.35 },
        B16: { [H0]: 203.6175 },
        B19: { [H0]: 4062.45 },
      }),
      PSR_TYPES,
    );
    const [reading] = readings;
    if (!reading?.mix) throw new Error('expected a computed reading');
    // A JSON round trip stands for the store.
    expect(intensityOfMix(JSON.parse(JSON.stringify(reading.mix)))).toBe(reading.value);
  });

  it('does not depend on the key order of the stored mix', () => {
    expect(intensityOfMix({ solar: 0.1, coal: 0.7, gas: 0.2 })).toBe(
      intensityOfMix({ gas: 0.2, coal: 0.7, solar: 0.1 }),
    );
  });

  it('is null when total generation is zero', () => {
    expect(intensityOfMix({})).toBeNull();
    expect(intensityOfMix({ solar: 0 })).toBeNull();
  });

  it('refuses a key that is not a category', () => {
    expect(() => intensityOfMix({ coal: 1, lignite: 1 })).toThrow(/lignite/);
  });
});
