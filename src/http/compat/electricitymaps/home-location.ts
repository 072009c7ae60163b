import type * as CountryCoder from '@rapideditor/country-coder';
import { CONTRACT_REGISTRY, type ZoneRegistry } from '../../../core/zone-registry.js';
import { findZone, ZONES, type Zone } from '../../../core/zones.js';

/**
 * The zone of a home, from the latitude and longitude Home Assistant sends (its configured home
 * location): a geocoder, unlike the data-centre lookup of the other Electricity Maps routes. The
 * country comes from country-coder's borders (OpenStreetMap iD's offline country lookup); a
 * country that is one of our zones is that zone; a country split into bidding zones (DK, SE,
 * NO, IT) gives the zone of its nearest reference town below, an approximation near the internal
 * borders that docs/compat.md states. No I/O.
 */

/**
 * The borders cost some 0.3-0.6 s and 20 MB when loaded (measured on a busy 2-core machine), so
 * they are loaded by the first request that needs them, not at every start.
 */
let countryCoder: Promise<typeof CountryCoder> | undefined;

/**
 * Countries (ISO 3166-1 alpha-2) that lie in one of our zones as a whole: those whose code is a
 * zone's (US is answered before: our US is the Lower 48), and two small neighbours.
 */
const ZONE_OF_COUNTRY: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    ZONES.filter(({ code }) => /^[A-Z]{2}$/.test(code)).map(({ code }) => [code, code]),
  ),
  // Luxembourg is in the DE-LU bidding zone; Monaco in France's grid.
  LU: 'DE',
  MC: 'FR',
};

/** Northern Ireland (Wikidata Q26): in the all-island market, our IE, not in GB's grid. */
const NORTHERN_IRELAND = 'Q26';
/** The contiguous United States (Wikidata Q578170): our US is the Lower 48. */
const CONTIGUOUS_US = 'Q578170';

type Town = readonly [lat: number, lon: number];

/**
 * Towns spread over each bidding zone of the split countries (their own zone by the grid
 * operators' zone maps: Energinet, Svenska kraftnät, Statnett, Terna). A home takes the zone of
 * the nearest one.
 */
const TOWNS_OF_ZONE: Readonly<Record<string, readonly Town[]>> = {
  // Jutland and Funen | Zealand, Lolland-Falster, Bornholm (split at the Great Belt).
  'DK-1': [
    [57.05, 9.92],
    [56.16, 10.2],
    [55.48, 8.45],
    [55.4, 10.39],
    [54.91, 9.79],
    [55.06, 10.61],
  ],
  'DK-2': [
    [55.68, 12.57],
    [55.64, 12.08],
    [55.4, 11.35],
    [54.77, 11.87],
    [55.1, 14.7],
    [56.03, 12.61],
    [55.68, 11.09],
  ],
  'SE-1': [
    [65.58, 22.15],
    [67.86, 20.23],
    [67.13, 20.66],
    [65.32, 21.48],
    [65.59, 19.17],
    [65.84, 24.14],
  ],
  'SE-2': [
    [63.83, 20.26],
    [64.75, 20.95],
    [63.18, 14.64],
    [62.39, 17.31],
    [62.63, 17.94],
    [64.6, 18.67],
    [62.03, 14.36],
    [61.73, 17.1],
    [65.1, 17.11],
  ],
  'SE-3': [
    [59.33, 18.07],
    [57.71, 11.97],
    [59.86, 17.64],
    [59.27, 15.21],
    [60.67, 17.14],
    [60.61, 15.63],
    [59.38, 13.5],
    [58.41, 15.62],
    [57.78, 14.16],
    [57.64, 18.3],
    [61.0, 14.54],
    [57.76, 16.64],
  ],
  'SE-4': [
    [55.6, 13.0],
    [56.05, 12.69],
    [56.03, 14.16],
    [56.16, 15.59],
    [56.88, 14.81],
    [56.66, 16.36],
    [56.67, 12.86],
    [56.83, 13.94],
  ],
  'NO-1': [
    [59.91, 10.75],
    [60.79, 11.07],
    [61.12, 10.47],
    [59.22, 10.93],
    [59.74, 10.2],
    [59.67, 9.65],
    [60.88, 11.56],
    [60.99, 9.23],
    [61.77, 9.54],
    [60.17, 10.26],
  ],
  'NO-2': [
    [58.15, 8.0],
    [58.97, 5.73],
    [58.46, 8.77],
    [59.21, 9.61],
    [59.41, 5.27],
    [58.45, 6.0],
    [59.56, 9.26],
    [59.88, 8.59],
    [59.65, 6.35],
  ],
  'NO-3': [
    [63.43, 10.4],
    [62.47, 6.15],
    [62.74, 7.16],
    [63.11, 7.73],
    [64.01, 11.5],
    [62.57, 11.38],
    [64.47, 11.5],
  ],
  'NO-4': [
    [67.28, 14.4],
    [69.65, 18.96],
    [66.31, 14.14],
    [68.44, 17.43],
    [69.97, 23.27],
    [65.84, 13.19],
    [70.66, 23.68],
    [69.73, 30.05],
  ],
  'NO-5': [
    [60.39, 5.32],
    [60.63, 6.42],
    [61.45, 5.86],
    [61.23, 7.1],
    [60.07, 6.55],
    [61.6, 5.03],
  ],
  // Piedmont to Emilia-Romagna | Tuscany, Umbria, Marche | Lazio, Abruzzo, Campania |
  // Molise, Apulia, Basilicata | Calabria | Sicily | Sardinia (the zones since 2021).
  'IT-NORD': [
    [45.46, 9.19],
    [45.07, 7.69],
    [45.44, 12.33],
    [44.49, 11.34],
    [44.41, 8.93],
    [45.65, 13.78],
    [46.07, 11.12],
    [46.5, 11.35],
    [45.44, 10.99],
    [45.74, 7.32],
    [44.06, 12.57],
    [45.05, 9.69],
    [46.06, 13.24],
  ],
  'IT-CNOR': [
    [43.77, 11.25],
    [43.72, 10.4],
    [43.11, 12.39],
    [43.62, 13.52],
    [43.32, 11.33],
    [43.55, 10.31],
    [43.46, 11.88],
    [42.76, 11.11],
    [43.91, 12.91],
  ],
  'IT-CSUD': [
    [41.9, 12.5],
    [40.85, 14.27],
    [42.46, 14.21],
    [42.35, 13.4],
    [41.47, 12.9],
    [41.07, 14.33],
    [40.68, 14.77],
    [42.42, 12.1],
    [41.64, 13.34],
  ],
  'IT-SUD': [
    [41.12, 16.87],
    [40.64, 15.8],
    [40.35, 18.17],
    [40.46, 17.25],
    [41.46, 15.55],
    [41.56, 14.66],
    [40.67, 16.6],
    [40.63, 17.94],
  ],
  'IT-CALA': [
    [38.91, 16.59],
    [38.11, 15.65],
    [39.3, 16.25],
    [39.08, 17.13],
    [38.68, 16.1],
  ],
  'IT-SICI': [
    [38.12, 13.36],
    [37.5, 15.09],
    [38.19, 15.55],
    [37.08, 15.29],
    [38.02, 12.51],
    [37.31, 13.58],
    [36.93, 14.73],
    [37.49, 14.06],
  ],
  'IT-SARD': [
    [39.22, 9.12],
    [40.73, 8.56],
    [40.92, 9.5],
    [40.32, 9.33],
    [39.9, 8.59],
  ],
};

/** The split countries (San Marino and the Vatican lie inside Italy's zones). */
const SPLIT_COUNTRIES: Readonly<Record<string, string>> = {
  DK: 'DK',
  SE: 'SE',
  NO: 'NO',
  IT: 'IT',
  SM: 'IT',
  VA: 'IT',
};

/**
 * The zone a home at `lat`, `lon` draws from, if it is one served (`served`: with `ZONES=all`, a
 * country that is one of the flow graphs' nodes, `EE`, is that node).
 */
export async function zoneAtHome(
  lat: number,
  lon: number,
  served: ZoneRegistry = CONTRACT_REGISTRY,
): Promise<Zone | undefined> {
  const { iso1A2Code, isIn } = await (countryCoder ??= import('@rapideditor/country-coder'));
  const location: [number, number] = [lon, lat];
  const country = iso1A2Code(location);
  if (country === null) return undefined;
  if (country === 'GB' && isIn(location, NORTHERN_IRELAND)) return findZone('IE');
  if (country === 'US') return isIn(location, CONTIGUOUS_US) ? findZone('US') : undefined;
  const whole = ZONE_OF_COUNTRY[country] ?? (served.has(country) ? country : undefined);
  if (whole !== undefined) return served.find(whole);
  const split = SPLIT_COUNTRIES[country];
  return split === undefined ? undefined : findZone(nearestZone(split, lat, lon));
}

/** The zone of `country` whose nearest town is nearest to the point. */
function nearestZone(country: string, lat: number, lon: number): string {
  // Distances this small compare well on an equirectangular projection at the point's latitude.
  const shrink = Math.cos((lat * Math.PI) / 180);
  let best = '';
  let bestDistance = Infinity;
  for (const [zone, towns] of Object.entries(TOWNS_OF_ZONE)) {
    if (!zone.startsWith(`${country}-`)) continue;
    for (const [townLat, townLon] of towns) {
      const distance = (townLat - lat) ** 2 + ((townLon - lon) * shrink) ** 2;
      if (distance < bestDistance) {
        bestDistance = distance;
        best = zone;
      }
    }
  }
  return best;
}
