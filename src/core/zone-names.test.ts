import { describe, expect, it } from 'vitest';
import {
  ELECTRICITY_MAPS_KEY,
  electricityMapsKeyOf,
  resolveZone,
  zoneOfElectricityMapsKey,
} from './zone-names.js';
import { findZone, ZONES } from './zones.js';

describe('Electricity Maps zone keys', () => {
  it.each([
    ['DK-DK1', 'DK-1'],
    ['DK-DK2', 'DK-2'],
    ['SE-SE4', 'SE-4'],
    ['NO-NO5', 'NO-5'],
    ['IT-NO', 'IT-NORD'],
    ['IT-CNO', 'IT-CNOR'],
    ['IT-CSO', 'IT-CSUD'],
    ['IT-SO', 'IT-SUD'],
    ['IT-SIC', 'IT-SICI'],
    ['IT-SAR', 'IT-SARD'],
    ['US-CAL-CISO', 'US-CAISO'],
    ['US-MIDA-PJM', 'US-PJM'],
    ['US-MIDW-MISO', 'US-MISO'],
    ['US-TEX-ERCO', 'US-ERCOT'],
    ['US-CENT-SWPP', 'US-SPP'],
    ['US-SE-SOCO', 'US-SOCO'],
    ['US-TEN-TVA', 'US-TVA'],
    ['US-NY-NYIS', 'US-NYISO'],
    ['US-NE-ISNE', 'US-ISONE'],
    ['US-NW-BPAT', 'US-BPA'],
    ['DE', 'DE'],
    ['GB', 'GB'],
    ['US', 'US'],
    ['dk-dk1', 'DK-1'],
  ])('%s is our %s', (key, code) => {
    expect(zoneOfElectricityMapsKey(key)?.code).toBe(code);
    expect(resolveZone(key, 'em')?.code).toBe(code);
    expect(resolveZone(key, 'v1')?.code).toBe(key === code ? code : undefined);
  });

  it('maps every zone but IT-CALA to exactly one key, and back', () => {
    const keys = new Set<string>();
    for (const zone of ZONES) {
      const key = ELECTRICITY_MAPS_KEY.get(zone.code);
      if (zone.code === 'IT-CALA') {
        expect(key).toBeUndefined();
        expect(electricityMapsKeyOf(zone)).toBe('IT-CALA');
        continue;
      }
      expect(key, zone.code).toBeDefined();
      expect(keys.has(key!)).toBe(false);
      keys.add(key!);
      expect(zoneOfElectricityMapsKey(key!)?.code).toBe(zone.code);
    }
    expect(keys.size).toBe(44);
  });

  it('accepts our codes, provider:region, and bare region names only when asked', () => {
    expect(resolveZone('DK-1', 'em')?.code).toBe('DK-1');
    expect(resolveZone('aws:us-west-2', 'em')?.code).toBe('US-BPA');
    expect(resolveZone('aws:us-west-2', 'v1')?.code).toBe('US-BPA');
    expect(resolveZone(' dk-1 ', 'v1')?.code).toBe('DK-1');
    expect(resolveZone('westeurope', 'em')).toBeUndefined();
    expect(resolveZone('westeurope', 'v1')).toBeUndefined();
    expect(resolveZone('westeurope', 'ca')?.code).toBe('NL');
    expect(resolveZone('XX-NOPE', 'ca')).toBeUndefined();
    expect(findZone('IT-CALA')).toBeDefined();
  });
});
