import { describe, expect, it } from 'vitest';
import {
  CLOUD_REGIONS,
  cloudRegionNear,
  distanceKm,
  findCloudRegion,
  findCloudRegionByName,
  zoneOfCloudRegion,
} from './cloud-regions.js';
import { findZone } from './zones.js';

/**
 * Azure region points as the Carbon Aware SDK ships them (Green-Software-Foundation/
 * carbon-aware-sdk, src/data/location-sources/azure-regions.json, commit 0510fc2), copied for the
 * regions in our zones: its Electricity Maps data source sends exactly these as lat/lon.
 */
const SDK_AZURE_POINTS: Readonly<Record<string, readonly [string, string]>> = {
  eastus: ['37.3719', '-79.8164'],
  eastus2: ['36.6681', '-78.3889'],
  southcentralus: ['29.4167', '-98.5'],
  westus2: ['47.233', '-119.852'],
  westus3: ['33.448376', '-112.074036'],
  northeurope: ['53.3478', '-6.2597'],
  swedencentral: ['60.67488', '17.14127'],
  uksouth: ['50.941', '-0.799'],
  westeurope: ['52.3667', '4.9'],
  centralus: ['41.5908', '-93.6208'],
  francecentral: ['46.3772', '2.373'],
  germanywestcentral: ['50.110924', '8.682127'],
  italynorth: ['45.46888', '9.18109'],
  norwayeast: ['59.913868', '10.752245'],
  polandcentral: ['52.23334', '21.01666'],
  spaincentral: ['40.4259', '3.4209'],
  northcentralus: ['41.8819', '-87.6278'],
  westus: ['37.783', '-122.417'],
  switzerlandnorth: ['47.451542', '8.564572'],
  westcentralus: ['40.89', '-110.234'],
  francesouth: ['43.8345', '2.1972'],
  germanynorth: ['53.073635', '8.806422'],
  norwaywest: ['58.969975', '5.733107'],
  switzerlandwest: ['46.204391', '6.143158'],
  ukwest: ['53.427', '-3.084'],
};

describe('the cloud-region table', () => {
  it('gives every row a zone that exists, a source, a location and a unique id', () => {
    // 12 AWS, 22 Google Cloud and 25 Azure regions.
    expect(CLOUD_REGIONS.length).toBe(59);
    const ids = new Set<string>();
    for (const row of CLOUD_REGIONS) {
      const id = `${row.provider}:${row.region}`;
      expect(findZone(row.zone), `${id} -> ${row.zone}`).toBeDefined();
      expect(findZone(row.zone)!.code).toBe(row.zone);
      expect(row.source.length, `${id} source`).toBeGreaterThan(20);
      expect(row.source, `${id} names where its zone comes from`).toContain('zone:');
      expect(row.location.trim(), `${id} location`).not.toBe('');
      expect(row.country).toMatch(/^[A-Z]{2}$/);
      expect(Math.abs(row.lat)).toBeLessThanOrEqual(90);
      expect(Math.abs(row.lon)).toBeLessThanOrEqual(180);
      expect(ids.has(id), `${id} once`).toBe(false);
      ids.add(id);
    }
  });

  it('names the chosen mapping wherever public mappings disagree', () => {
    for (const id of ['aws:us-east-2', 'aws:us-west-2', 'gcp:us-west2', 'azure:westus2']) {
      expect(findCloudRegion(id)?.note, id).toMatch(/chosen|gives US|rather than/);
    }
  });

  it('resolves provider:region case-insensitively, with google as an alias of gcp', () => {
    expect(zoneOfCloudRegion('aws:eu-central-1')?.code).toBe('DE');
    expect(zoneOfCloudRegion(' AWS:EU-NORTH-1 ')?.code).toBe('SE-3');
    expect(zoneOfCloudRegion('google:europe-west4')?.code).toBe('NL');
    expect(zoneOfCloudRegion('gcp:us-west2')?.code).toBe('US');
    expect(zoneOfCloudRegion('azure:italynorth')?.code).toBe('IT-NORD');
    expect(zoneOfCloudRegion('aws:ap-southeast-1')).toBeUndefined();
    expect(zoneOfCloudRegion('eu-central-1')).toBeUndefined();
    expect(findCloudRegionByName('westeurope')?.zone).toBe('NL');
  });

  it('resolves each point the Carbon Aware SDK sends for an Azure region to that region', () => {
    for (const [region, [lat, lon]] of Object.entries(SDK_AZURE_POINTS)) {
      const found = cloudRegionNear(Number(lat), Number(lon));
      expect(found && `${found.provider}:${found.region}`, region).toBe(`azure:${region}`);
    }
    // Every Azure row is one of those regions.
    for (const row of CLOUD_REGIONS.filter((entry) => entry.provider === 'azure')) {
      expect(Object.keys(SDK_AZURE_POINTS)).toContain(row.region);
    }
  });

  it('takes a point within 50 km of a listed region, and nothing farther (not a geocoder)', () => {
    // Madrid, where azure:spaincentral really is, although its published point is off the coast.
    expect(cloudRegionNear(40.4168, -3.7038)?.zone).toBe('ES');
    // 30 km north of Frankfurt's regions; 80 km north of them: nothing.
    expect(cloudRegionNear(50.11 + 0.27, 8.68)?.zone).toBe('DE');
    expect(cloudRegionNear(50.11 + 0.72, 8.68)).toBeUndefined();
    // The middle of France, 100+ km from any listed point but Azure's francecentral point.
    expect(cloudRegionNear(45.0, 1.0)).toBeUndefined();
    expect(distanceKm(50.11, 8.68, 50.38, 8.68)).toBeCloseTo(30.0, 0);
  });
});
