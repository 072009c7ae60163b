import { describe, expect, it } from 'vitest';
import { codeMappings, defaultForecastBasis, ZONES } from './zones.js';
import { ENTSOE_FORECAST_DOCUMENTS, isEntsoeForecastDocument, SOURCES } from './sources.js';

describe('the zone table', () => {
  it('lists every zone of every source, grouped as docs/api.md lists them', () => {
    expect(ZONES).toHaveLength(45);
    expect(ZONES.map((zone) => zone.source)).toEqual([
      ...Array<string>(33).fill('europe-tso'),
      ...Array<string>(11).fill('us-agency'),
      'uk-operator',
    ]);
    expect(ZONES.at(-1)).toEqual({
      code: 'GB',
      name: 'Great Britain',
      source: 'uk-operator',
      resolutionMin: 30,
      upstreamId: 'national',
    });
  });

  it('maps every code of every source to a category or excluded, for /v1/factors', () => {
    const mappings = codeMappings();
    expect(Object.keys(mappings)).toEqual([...SOURCES]);
    expect(mappings['uk-operator']).toEqual({
      biomass: 'biomass',
      coal: 'coal',
      gas: 'gas',
      nuclear: 'nuclear',
      hydro: 'hydro',
      solar: 'solar',
      wind: 'wind-onshore',
      other: 'other',
      imports: 'excluded',
    });
    // Storage is in neither sum (docs/method.md).
    expect(mappings['europe-tso']).toMatchObject({ B10: 'excluded', B04: 'gas' });
    expect(mappings['us-agency']).toMatchObject({ BAT: 'excluded', NG: 'gas' });
  });
});

describe('defaultForecastBasis', () => {
  it("is the operator's figure where that is the zone's own value, else lifecycle", () => {
    expect(defaultForecastBasis('GB')).toBe('operator');
    expect(defaultForecastBasis('DE')).toBe('lifecycle');
    expect(defaultForecastBasis('US-PJM')).toBe('lifecycle');
    expect(defaultForecastBasis('XX')).toBe('lifecycle');
  });
});

describe('isEntsoeForecastDocument', () => {
  it('knows the day-ahead forecast documents and nothing else', () => {
    expect(ENTSOE_FORECAST_DOCUMENTS.filter(isEntsoeForecastDocument)).toEqual([
      'A69',
      'A65',
      'A71',
    ]);
    expect(['A75', 'A18', '', null].some(isEntsoeForecastDocument)).toBe(false);
  });
});
