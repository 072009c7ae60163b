import { describe, expect, it } from 'vitest';
import { codeMappings, ZONES } from './zones.js';
import { SOURCES } from './sources.js';

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
