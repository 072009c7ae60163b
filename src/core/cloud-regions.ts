import { findZone, type Zone } from './zones.js';

/**
 * The cloud regions located in our 45 zones: which grid each AWS, Google Cloud and Azure region
 * draws from, so that `zone=aws:eu-central-1` works wherever a zone does and the compatibility
 * API can answer the location names and data-centre coordinates its clients send
 * (docs/compat.md, "Cloud regions"). Pure data and lookups; no I/O.
 *
 * Where a region lies in a US balancing authority we do not serve (Los Angeles' LADWP, Grant
 * County PUD, Santee Cooper, PacifiCorp East, Nevada Power, Arizona's utilities), its zone is `US`
 * (the Lower 48): the most specific of our zones that contains it. Each row says so in its note.
 */

export const CLOUD_PROVIDERS = ['aws', 'gcp', 'azure'] as const;
type CloudProvider = (typeof CLOUD_PROVIDERS)[number];

/** Prefixes accepted for each provider in `provider:region` (case-insensitive). */
const PROVIDER_ALIASES: Readonly<Record<string, CloudProvider>> = {
  aws: 'aws',
  gcp: 'gcp',
  google: 'gcp',
  azure: 'azure',
};

export interface CloudRegion {
  readonly provider: CloudProvider;
  /** The provider's own region name, e.g. `eu-central-1`, `europe-west4`, `westeurope`. */
  readonly region: string;
  /** The provider's own name of the region's location (city, or state where it names one). */
  readonly location: string;
  /** ISO 3166-1 alpha-2. */
  readonly country: string;
  /** The point the region is looked up by: see `source`. Decimal degrees, WGS 84. */
  readonly lat: number;
  readonly lon: number;
  /** Our zone code. */
  readonly zone: string;
  /** Where the location and the zone assignment come from. */
  readonly source: string;
  /** Where public mappings disagree, which was chosen and why; or anything else to know. */
  readonly note?: string;
}

// Sources, named once. The URLs are the providers' published region lists; the Azure points are
// Microsoft's region metadata (`az account list-locations`) as the Carbon Aware SDK ships it.
const AWS_LIST =
  'location: AWS Regions and Availability Zones (docs.aws.amazon.com/global-infrastructure, region names and cities)';
const GCP_LIST =
  'location: Google Cloud locations (cloud.google.com/about/locations, region names and cities)';
const AZURE_LIST =
  'location and point: Azure region metadata as copied in Green-Software-Foundation/carbon-aware-sdk ' +
  'src/data/location-sources/azure-regions.json (commit 0510fc2), the coordinates its Electricity ' +
  'Maps data source sends';
const ENTSOE = (zone: string) =>
  `zone: the location lies in the ENTSO-E bidding zone served as ${zone} (docs/upstreams.md)`;
const BA = (operator: string) =>
  `zone: the location is in the ${operator} balancing authority area`;
const US48 = (authority: string) =>
  `zone: the location is in the ${authority} balancing authority, which gridco2 does not serve ` +
  'on its own; US (Lower 48) is the most specific zone that contains it';
const POINT = 'point: the city centre, to about 0.01 degree';

const row = (
  provider: CloudProvider,
  region: string,
  location: string,
  country: string,
  [lat, lon]: readonly [number, number],
  zone: string,
  source: string,
  note?: string,
): CloudRegion => ({
  provider,
  region,
  location,
  country,
  lat,
  lon,
  zone,
  source,
  ...(note !== undefined && { note }),
});

/** Every row, by provider then region name as each provider lists them. */
export const CLOUD_REGIONS: readonly CloudRegion[] = Object.freeze([
  // AWS commercial regions (GovCloud and the sovereign partitions are left out: their sites are
  // not published by city).
  row(
    'aws',
    'us-east-1',
    'N. Virginia (Ashburn)',
    'US',
    [39.04, -77.49],
    'US-PJM',
    `${AWS_LIST}; ${POINT}; ${BA('PJM')} (Dominion Energy Virginia is a PJM member)`,
  ),
  row(
    'aws',
    'us-east-2',
    'Ohio (Columbus)',
    'US',
    [39.96, -83.0],
    'US-PJM',
    `${AWS_LIST}; ${POINT}; ${BA('PJM')} (AEP Ohio is a PJM member)`,
    'Public community mappings disagree (US-MIDW-MISO and US-MIDA-PJM are both used for us-east-2); PJM chosen because central Ohio is served by AEP Ohio, a PJM member; MISO does not reach Ohio.',
  ),
  row(
    'aws',
    'us-west-1',
    'N. California (San Francisco Bay Area)',
    'US',
    [37.35, -121.96],
    'US-CAISO',
    `${AWS_LIST}; ${POINT}; ${BA('California ISO')}`,
  ),
  row(
    'aws',
    'us-west-2',
    'Oregon (Boardman)',
    'US',
    [45.84, -119.7],
    'US-BPA',
    `${AWS_LIST}; ${POINT}; ${BA('Bonneville Power Administration')}`,
    "Public community mappings disagree (US-NW-PACW and US-NW-BPAT are both used for us-west-2); BPA chosen because the region's sites in Morrow and Umatilla counties are served by Umatilla Electric Cooperative inside BPA's balancing authority area, not by PacifiCorp.",
  ),
  row(
    'aws',
    'eu-central-1',
    'Frankfurt',
    'DE',
    [50.11, 8.68],
    'DE',
    `${AWS_LIST}; ${POINT}; ${ENTSOE('DE')}`,
  ),
  row(
    'aws',
    'eu-central-2',
    'Zurich',
    'CH',
    [47.37, 8.54],
    'CH',
    `${AWS_LIST}; ${POINT}; ${ENTSOE('CH')}`,
  ),
  row(
    'aws',
    'eu-west-1',
    'Ireland (Dublin)',
    'IE',
    [53.35, -6.26],
    'IE',
    `${AWS_LIST}; ${POINT}; ${ENTSOE('IE')}`,
  ),
  row(
    'aws',
    'eu-west-2',
    'London',
    'GB',
    [51.51, -0.13],
    'GB',
    `${AWS_LIST}; ${POINT}; zone: Great Britain`,
  ),
  row(
    'aws',
    'eu-west-3',
    'Paris',
    'FR',
    [48.86, 2.35],
    'FR',
    `${AWS_LIST}; ${POINT}; ${ENTSOE('FR')}`,
  ),
  row(
    'aws',
    'eu-north-1',
    'Stockholm',
    'SE',
    [59.33, 18.07],
    'SE-3',
    `${AWS_LIST}; ${POINT}; ${ENTSOE('SE-3')}`,
    'Country-level mappings give SE (all of Sweden); the bidding zone is SE3, which gridco2 serves on its own.',
  ),
  row(
    'aws',
    'eu-south-1',
    'Milan',
    'IT',
    [45.46, 9.19],
    'IT-NORD',
    `${AWS_LIST}; ${POINT}; ${ENTSOE('IT-NORD')}`,
  ),
  row(
    'aws',
    'eu-south-2',
    'Spain (Aragón)',
    'ES',
    [41.65, -0.88],
    'ES',
    `${AWS_LIST}; point: Zaragoza, to about 0.01 degree; ${ENTSOE('ES')}`,
  ),

  // Google Cloud.
  row(
    'gcp',
    'europe-central2',
    'Warsaw',
    'PL',
    [52.23, 21.01],
    'PL',
    `${GCP_LIST}; ${POINT}; ${ENTSOE('PL')}`,
  ),
  row(
    'gcp',
    'europe-north1',
    'Hamina',
    'FI',
    [60.57, 27.2],
    'FI',
    `${GCP_LIST}; ${POINT}; ${ENTSOE('FI')}`,
  ),
  row(
    'gcp',
    'europe-north2',
    'Stockholm',
    'SE',
    [59.33, 18.07],
    'SE-3',
    `${GCP_LIST}; ${POINT}; ${ENTSOE('SE-3')}`,
  ),
  row(
    'gcp',
    'europe-southwest1',
    'Madrid',
    'ES',
    [40.42, -3.7],
    'ES',
    `${GCP_LIST}; ${POINT}; ${ENTSOE('ES')}`,
  ),
  row(
    'gcp',
    'europe-west1',
    'St. Ghislain',
    'BE',
    [50.47, 3.82],
    'BE',
    `${GCP_LIST}; ${POINT}; ${ENTSOE('BE')}`,
  ),
  row(
    'gcp',
    'europe-west10',
    'Berlin',
    'DE',
    [52.52, 13.4],
    'DE',
    `${GCP_LIST}; ${POINT}; ${ENTSOE('DE')}`,
  ),
  row(
    'gcp',
    'europe-west12',
    'Turin',
    'IT',
    [45.07, 7.69],
    'IT-NORD',
    `${GCP_LIST}; ${POINT}; ${ENTSOE('IT-NORD')}`,
  ),
  row(
    'gcp',
    'europe-west2',
    'London',
    'GB',
    [51.51, -0.13],
    'GB',
    `${GCP_LIST}; ${POINT}; zone: Great Britain`,
  ),
  row(
    'gcp',
    'europe-west3',
    'Frankfurt',
    'DE',
    [50.11, 8.68],
    'DE',
    `${GCP_LIST}; ${POINT}; ${ENTSOE('DE')}`,
  ),
  row(
    'gcp',
    'europe-west4',
    'Eemshaven',
    'NL',
    [53.44, 6.83],
    'NL',
    `${GCP_LIST}; ${POINT}; ${ENTSOE('NL')}`,
  ),
  row(
    'gcp',
    'europe-west6',
    'Zurich',
    'CH',
    [47.37, 8.54],
    'CH',
    `${GCP_LIST}; ${POINT}; ${ENTSOE('CH')}`,
  ),
  row(
    'gcp',
    'europe-west8',
    'Milan',
    'IT',
    [45.46, 9.19],
    'IT-NORD',
    `${GCP_LIST}; ${POINT}; ${ENTSOE('IT-NORD')}`,
  ),
  row(
    'gcp',
    'europe-west9',
    'Paris',
    'FR',
    [48.86, 2.35],
    'FR',
    `${GCP_LIST}; ${POINT}; ${ENTSOE('FR')}`,
  ),
  row(
    'gcp',
    'us-central1',
    'Council Bluffs, Iowa',
    'US',
    [41.26, -95.86],
    'US-MISO',
    `${GCP_LIST}; ${POINT}; ${BA('Midcontinent ISO')} (MidAmerican Energy is a MISO member)`,
  ),
  row(
    'gcp',
    'us-east1',
    'Moncks Corner, South Carolina',
    'US',
    [33.2, -80.01],
    'US',
    `${GCP_LIST}; ${POINT}; ${US48('Santee Cooper (Electricity Maps US-CAR-SC)')}`,
    'Public community mappings disagree (US-CAR-SCEG and US-CAR-SC); either way it is a South Carolina authority gridco2 does not serve, so the row gives US.',
  ),
  row(
    'gcp',
    'us-east4',
    'Ashburn, Virginia',
    'US',
    [39.04, -77.49],
    'US-PJM',
    `${GCP_LIST}; ${POINT}; ${BA('PJM')}`,
  ),
  row(
    'gcp',
    'us-east5',
    'Columbus, Ohio',
    'US',
    [39.96, -83.0],
    'US-PJM',
    `${GCP_LIST}; ${POINT}; ${BA('PJM')} (AEP Ohio is a PJM member)`,
    'Public community mappings disagree (US-MIDW-MISO and US-MIDA-PJM); PJM chosen as for aws:us-east-2.',
  ),
  row(
    'gcp',
    'us-south1',
    'Dallas',
    'US',
    [32.78, -96.8],
    'US-ERCOT',
    `${GCP_LIST}; ${POINT}; ${BA('ERCOT')}`,
  ),
  row(
    'gcp',
    'us-west1',
    'The Dalles, Oregon',
    'US',
    [45.6, -121.18],
    'US-BPA',
    `${GCP_LIST}; ${POINT}; ${BA('Bonneville Power Administration')}`,
  ),
  row(
    'gcp',
    'us-west2',
    'Los Angeles',
    'US',
    [34.05, -118.24],
    'US',
    `${GCP_LIST}; ${POINT}; ${US48('Los Angeles Department of Water and Power (Electricity Maps US-CAL-LDWP)')}`,
    "Mappings by state give California ISO; Los Angeles is LADWP's own balancing authority, so the row gives US rather than US-CAISO.",
  ),
  row(
    'gcp',
    'us-west3',
    'Salt Lake City',
    'US',
    [40.76, -111.89],
    'US',
    `${GCP_LIST}; ${POINT}; ${US48('PacifiCorp East (Electricity Maps US-NW-PACE)')}`,
  ),
  row(
    'gcp',
    'us-west4',
    'Las Vegas',
    'US',
    [36.17, -115.14],
    'US',
    `${GCP_LIST}; ${POINT}; ${US48('Nevada Power (Electricity Maps US-NW-NEVP)')}`,
  ),

  // Azure (public regions; the canary and staging regions of the SDK's file are left out).
  row(
    'azure',
    'centralus',
    'Iowa',
    'US',
    [41.5908, -93.6208],
    'US-MISO',
    `${AZURE_LIST}; ${BA('Midcontinent ISO')}`,
  ),
  row(
    'azure',
    'eastus',
    'Virginia',
    'US',
    [37.3719, -79.8164],
    'US-PJM',
    `${AZURE_LIST}; ${BA('PJM')}`,
  ),
  row(
    'azure',
    'eastus2',
    'Virginia',
    'US',
    [36.6681, -78.3889],
    'US-PJM',
    `${AZURE_LIST}; ${BA('PJM')}`,
  ),
  row(
    'azure',
    'francecentral',
    'Paris',
    'FR',
    [46.3772, 2.373],
    'FR',
    `${AZURE_LIST}; ${ENTSOE('FR')}`,
    'The metadata point is the centre of France, not Paris; it is kept because it is what clients send.',
  ),
  row(
    'azure',
    'francesouth',
    'Marseille',
    'FR',
    [43.8345, 2.1972],
    'FR',
    `${AZURE_LIST}; ${ENTSOE('FR')}`,
  ),
  row(
    'azure',
    'germanynorth',
    'Berlin',
    'DE',
    [53.073635, 8.806422],
    'DE',
    `${AZURE_LIST}; ${ENTSOE('DE')}`,
  ),
  row(
    'azure',
    'germanywestcentral',
    'Frankfurt',
    'DE',
    [50.110924, 8.682127],
    'DE',
    `${AZURE_LIST}; ${ENTSOE('DE')}`,
  ),
  row(
    'azure',
    'italynorth',
    'Milan',
    'IT',
    [45.46888, 9.18109],
    'IT-NORD',
    `${AZURE_LIST}; ${ENTSOE('IT-NORD')}`,
  ),
  row(
    'azure',
    'northcentralus',
    'Illinois',
    'US',
    [41.8819, -87.6278],
    'US-PJM',
    `${AZURE_LIST}; ${BA('PJM')} (Chicago: ComEd is a PJM member)`,
  ),
  row(
    'azure',
    'northeurope',
    'Ireland',
    'IE',
    [53.3478, -6.2597],
    'IE',
    `${AZURE_LIST}; ${ENTSOE('IE')}`,
  ),
  row(
    'azure',
    'norwayeast',
    'Oslo',
    'NO',
    [59.913868, 10.752245],
    'NO-1',
    `${AZURE_LIST}; ${ENTSOE('NO-1')}`,
  ),
  row(
    'azure',
    'norwaywest',
    'Stavanger',
    'NO',
    [58.969975, 5.733107],
    'NO-2',
    `${AZURE_LIST}; ${ENTSOE('NO-2')}`,
  ),
  row(
    'azure',
    'polandcentral',
    'Warsaw',
    'PL',
    [52.23334, 21.01666],
    'PL',
    `${AZURE_LIST}; ${ENTSOE('PL')}`,
  ),
  row(
    'azure',
    'southcentralus',
    'Texas',
    'US',
    [29.4167, -98.5],
    'US-ERCOT',
    `${AZURE_LIST}; ${BA('ERCOT')} (San Antonio)`,
  ),
  row(
    'azure',
    'spaincentral',
    'Madrid',
    'ES',
    [40.4259, 3.4209],
    'ES',
    `${AZURE_LIST}; ${ENTSOE('ES')}`,
    'The metadata point has a positive longitude (3.42 E, in the sea east of Spain); Madrid is 3.70 W. Both points are accepted; the row keeps the one clients send.',
  ),
  row(
    'azure',
    'swedencentral',
    'Gävle',
    'SE',
    [60.67488, 17.14127],
    'SE-3',
    `${AZURE_LIST}; ${ENTSOE('SE-3')}`,
    'Country-level mappings give SE (all of Sweden); Gävle is in bidding zone SE3.',
  ),
  row(
    'azure',
    'switzerlandnorth',
    'Zurich',
    'CH',
    [47.451542, 8.564572],
    'CH',
    `${AZURE_LIST}; ${ENTSOE('CH')}`,
  ),
  row(
    'azure',
    'switzerlandwest',
    'Geneva',
    'CH',
    [46.204391, 6.143158],
    'CH',
    `${AZURE_LIST}; ${ENTSOE('CH')}`,
  ),
  row(
    'azure',
    'uksouth',
    'London',
    'GB',
    [50.941, -0.799],
    'GB',
    `${AZURE_LIST}; zone: Great Britain`,
  ),
  row(
    'azure',
    'ukwest',
    'Cardiff',
    'GB',
    [53.427, -3.084],
    'GB',
    `${AZURE_LIST}; zone: Great Britain`,
  ),
  row(
    'azure',
    'westcentralus',
    'Wyoming',
    'US',
    [40.89, -110.234],
    'US',
    `${AZURE_LIST}; ${US48('PacifiCorp East (Electricity Maps US-NW-PACE)')}`,
  ),
  row(
    'azure',
    'westeurope',
    'Netherlands',
    'NL',
    [52.3667, 4.9],
    'NL',
    `${AZURE_LIST}; ${ENTSOE('NL')}`,
  ),
  row(
    'azure',
    'westus',
    'California',
    'US',
    [37.783, -122.417],
    'US-CAISO',
    `${AZURE_LIST}; ${BA('California ISO')}`,
  ),
  row(
    'azure',
    'westus2',
    'Washington',
    'US',
    [47.233, -119.852],
    'US',
    `${AZURE_LIST}; ${US48('Grant County PUD (Electricity Maps US-NW-GCPD)')}`,
    "Public community mappings give US-NW-BPAT; Quincy is in Grant County PUD's own balancing authority, so the row gives US rather than US-BPA.",
  ),
  row(
    'azure',
    'westus3',
    'Phoenix',
    'US',
    [33.448376, -112.074036],
    'US',
    `${AZURE_LIST}; ${US48('Salt River Project / Arizona Public Service (Electricity Maps US-SW-SRP, US-SW-AZPS)')}`,
  ),
]);

/** More points a region is known by: a published point that is off, and where it really is. */
const EXTRA_POINTS: Readonly<Record<string, readonly (readonly [number, number])[]>> = {
  'azure:spaincentral': [[40.4168, -3.7038]],
};

const key = (provider: CloudProvider, region: string) => `${provider}:${region}`;
const byKey = new Map(CLOUD_REGIONS.map((entry) => [key(entry.provider, entry.region), entry]));
const byBareName = new Map<string, CloudRegion>();
for (const entry of CLOUD_REGIONS) {
  // A name two providers share would be ambiguous without its prefix: neither is taken bare.
  if (byBareName.has(entry.region)) byBareName.delete(entry.region);
  else byBareName.set(entry.region, entry);
}

/** Whether the input has the `provider:region` form (a known provider prefix). */
export function isCloudRegionForm(input: string): boolean {
  const colon = input.indexOf(':');
  return colon > 0 && PROVIDER_ALIASES[input.slice(0, colon).trim().toLowerCase()] !== undefined;
}

/** The row of `provider:region` (case-insensitive, trimmed), e.g. `aws:eu-central-1`. */
export function findCloudRegion(input: string): CloudRegion | undefined {
  const text = input.trim().toLowerCase();
  const colon = text.indexOf(':');
  if (colon <= 0) return undefined;
  const provider = PROVIDER_ALIASES[text.slice(0, colon).trim()];
  return provider && byKey.get(key(provider, text.slice(colon + 1).trim()));
}

/** A region by its name alone (`westeurope`), as the Carbon Aware SDK names locations. */
export function findCloudRegionByName(input: string): CloudRegion | undefined {
  return byBareName.get(input.trim().toLowerCase());
}

/** The zone of a cloud region in the `provider:region` form. */
export function zoneOfCloudRegion(input: string): Zone | undefined {
  const entry = findCloudRegion(input);
  return entry && findZone(entry.zone);
}

const EARTH_RADIUS_KM = 6371.0088;

/** Great-circle distance in km (haversine). */
export function distanceKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = Math.PI / 180;
  const dLat = (lat2 - lat1) * rad;
  const dLon = (lon2 - lon1) * rad;
  const a =
    Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** How far a point may be from a listed region's point to be taken as that data centre. */
export const DATA_CENTRE_RADIUS_KM = 50;

/**
 * The listed region nearest to a point, if one lies within DATA_CENTRE_RADIUS_KM: a data-centre
 * lookup for clients that send a region's coordinates, not a geocoder (a point in the middle of
 * a zone far from any data centre is not resolved).
 */
export function cloudRegionNear(lat: number, lon: number): CloudRegion | undefined {
  let best: CloudRegion | undefined;
  let bestKm = Infinity;
  for (const entry of CLOUD_REGIONS) {
    const points = [
      [entry.lat, entry.lon] as const,
      ...(EXTRA_POINTS[key(entry.provider, entry.region)] ?? []),
    ];
    for (const [pointLat, pointLon] of points) {
      const km = distanceKm(lat, lon, pointLat, pointLon);
      if (km < bestKm) {
        bestKm = km;
        best = entry;
      }
    }
  }
  return bestKm <= DATA_CENTRE_RADIUS_KM ? best : undefined;
}
