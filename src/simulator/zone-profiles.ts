import { ZONES, type Zone } from '../core/zones.js';
import { type Fuel, parseFuels, type MixProfile } from './mix-model.js';
import { hashString } from './noise.js';

/**
 * The simulated zones: rough location, size and installed capacity (MW) per upstream fuel code.
 * Plausible orders of magnitude, not statistics; the EIA code subsets follow what each respondent
 * reports in the 2025 recording (e.g. PJM has no BAT row, CISO books batteries under OTH, which
 * therefore goes negative at night).
 */

export interface EuropeProfile extends MixProfile {
  readonly eic: string;
  readonly resolution: 'PT15M' | 'PT60M';
  readonly curveType: 'A01' | 'A03';
  /**
   * Whether pumping is published as `outBiddingZone` consumption series (IT-CSUD recording) or
   * pumped storage only as generation (NO-5 recording).
   */
  readonly pumpingAsConsumption: boolean;
  readonly publicationLagMs: number;
}

export interface UsProfile extends MixProfile {
  readonly respondent: string;
  readonly respondentName: string;
  readonly publicationLagMs: number;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

// Real history reaches further back than our API promises (zones.ts SOURCE_INFO), so a backfill
// from the stated history start always finds data.
export const EUROPE_DATA_START_MS = Date.UTC(2015, 0, 1);
export const US_DATA_START_MS = Date.UTC(2018, 6, 1);
export const GB_DATA_START_MS = Date.UTC(2017, 8, 1);

function upstreamIdOf(code: string): string {
  const zone = ZONES.find((candidate: Zone) => candidate.code === code);
  if (!zone) throw new Error(`unknown zone ${code}`);
  return zone.upstreamId;
}

/** What every simulated zone has, keyed for noise by its code. */
function mixProfile(
  zone: string,
  latitude: number,
  longitude: number,
  meanOutputMw: number,
  peakSeason: MixProfile['peakSeason'],
  fuels: readonly Fuel[],
): MixProfile {
  return { zone, zoneKey: hashString(zone), latitude, longitude, meanOutputMw, peakSeason, fuels };
}

/**
 * The format flags read `PT15M A03`; an `in-only` flag keeps pumping out of the document. `eic`:
 * a zone's own by default (a node of the flow graph that is no zone passes its own).
 */
export function europe(
  zone: string,
  latitude: number,
  longitude: number,
  meanOutputMw: number,
  format: string,
  fuels: string,
  eic = upstreamIdOf(zone),
): EuropeProfile {
  const base = mixProfile(zone, latitude, longitude, meanOutputMw, 'winter', parseFuels(fuels));
  return {
    ...base,
    eic,
    resolution: format.includes('PT15M') ? 'PT15M' : 'PT60M',
    curveType: format.includes('A03') ? 'A03' : 'A01',
    pumpingAsConsumption: !format.includes('in-only'),
    // 2 to 4 hours in quarter-hour steps, fixed per zone (not per seed) so tests can rely on it.
    publicationLagMs: (120 + 15 * (base.zoneKey % 9)) * MINUTE_MS,
  };
}

/** `respondent`: a zone's own EIA code by default (a node that is no zone passes its own). */
export function us(
  zone: string,
  respondentName: string,
  latitude: number,
  longitude: number,
  meanOutputMw: number,
  fuels: string,
  respondent = upstreamIdOf(zone),
): UsProfile {
  // EIA lists a respondent's rows in fueltype order.
  const sorted = parseFuels(fuels).sort((a, b) => (a.code < b.code ? -1 : 1));
  const base = mixProfile(zone, latitude, longitude, meanOutputMw, 'summer', sorted);
  return {
    ...base,
    respondent,
    respondentName,
    // 11 to 30 hours, fixed per zone.
    publicationLagMs: (11 + (base.zoneKey % 20)) * HOUR_MS,
  };
}

// A table reads better one zone per line.
// prettier-ignore
export const EUROPE_PROFILES: readonly EuropeProfile[] = [
  europe('DE', 51, 10, 55000, 'PT15M A03', 'B01:4500 B02:15000 B04:20000 B05:12000 B06:300 B09:40 B10:6000 B11:1500 B12:1000 B15:300 B16:80000 B17:1000 B18:9000 B19:60000 B20:1500'),
  europe('FR', 46.5, 2.5, 55000, 'PT60M A01', 'B01:1800 B04:12000 B05:1800 B06:2500 B10:4500 B11:10000 B12:8000 B14:61000 B16:18000 B17:900 B18:1500 B19:22000'),
  europe('ES', 40, -4, 28000, 'PT60M A01', 'B01:700 B04:26000 B05:2000 B10:3300 B11:3500 B12:13000 B14:7100 B15:500 B16:30000 B17:500 B19:31000 B20:500'),
  europe('PT', 39.5, -8, 5500, 'PT60M A01', 'B01:700 B04:4500 B10:2800 B11:2500 B12:4500 B16:5000 B19:5600 B20:300'),
  europe('IT-NORD', 45.5, 10, 20000, 'PT60M A01', 'B01:2000 B04:20000 B06:200 B10:6000 B11:6000 B12:5000 B16:12000 B17:700 B19:200 B20:1500'),
  europe('IT-CNOR', 43.5, 11, 3500, 'PT60M A01', 'B01:300 B04:1500 B09:800 B11:300 B12:400 B16:2500 B19:200 B20:100'),
  europe('IT-CSUD', 41.5, 13, 6500, 'PT60M A01', 'B01:500 B04:6000 B05:600 B06:100 B10:1500 B11:800 B12:700 B16:3500 B19:1500 B20:300'),
  europe('IT-SUD', 41, 16, 6000, 'PT60M A01', 'B01:300 B04:5000 B05:2000 B12:200 B16:5000 B19:6500 B20:200'),
  europe('IT-CALA', 39, 16.5, 2000, 'PT60M A01', 'B01:200 B04:3000 B11:200 B12:700 B16:800 B19:1200'),
  europe('IT-SICI', 37.5, 14, 2500, 'PT60M A01', 'B01:50 B04:3500 B06:300 B10:500 B16:2500 B19:2000 B20:300'),
  europe('IT-SARD', 40, 9, 1600, 'PT60M A01', 'B01:100 B04:300 B05:1000 B06:200 B10:240 B12:400 B16:1500 B19:1100 B20:400'),
  europe('NL', 52.3, 5.3, 13000, 'PT15M A01', 'B01:600 B04:18000 B05:4000 B14:490 B16:25000 B17:700 B18:4700 B19:7000 B20:1000'),
  europe('BE', 50.8, 4.5, 9500, 'PT15M A01', 'B01:700 B04:7000 B10:1300 B11:100 B14:5900 B16:9000 B17:300 B18:2300 B19:3200 B20:500'),
  europe('AT', 47.5, 14, 7500, 'PT15M A03', 'B01:500 B04:4000 B06:150 B10:3500 B11:6000 B12:2500 B15:50 B16:6000 B17:150 B19:4000 B20:300'),
  europe('CH', 46.8, 8.2, 7500, 'PT60M A01', 'B10:3000 B11:4000 B12:8000 B14:3000 B16:6000 B19:90 B20:300'),
  europe('PL', 52, 19.5, 19000, 'PT15M A03', 'B01:1000 B02:8000 B03:500 B04:4000 B05:20000 B06:300 B10:1500 B11:500 B15:100 B16:20000 B19:10000 B20:200'),
  europe('CZ', 49.8, 15.5, 8000, 'PT60M A01', 'B01:400 B02:7500 B03:300 B04:1500 B05:800 B10:1200 B11:400 B12:700 B14:4200 B16:3000 B19:350 B20:400'),
  europe('DK-1', 56, 9.3, 3500, 'PT60M A01', 'B01:1200 B04:300 B05:400 B06:100 B15:50 B16:3500 B17:200 B18:2000 B19:4500'),
  europe('DK-2', 55.5, 12, 1800, 'PT60M A01', 'B01:1000 B04:100 B05:400 B06:50 B16:1500 B17:100 B18:1000 B19:700'),
  europe('SE-1', 66, 20, 2500, 'PT60M A01', 'B12:5000 B19:3000 B20:50'),
  europe('SE-2', 63, 16, 5500, 'PT60M A01', 'B01:200 B12:8000 B19:5000 B20:100'),
  europe('SE-3', 59.5, 16, 12000, 'PT60M A03', 'B01:1500 B04:200 B12:2500 B14:7000 B16:1500 B19:4000 B20:800'),
  europe('SE-4', 56, 13.5, 2000, 'PT60M A03', 'B01:500 B04:400 B12:300 B16:800 B19:2800 B20:300'),
  europe('NO-1', 60, 10.5, 3500, 'PT60M A01', 'B11:1000 B12:3000 B17:100 B19:200'),
  europe('NO-2', 58.5, 7.5, 7000, 'PT60M A01 in-only', 'B10:300 B11:1500 B12:10000 B19:800'),
  europe('NO-3', 63.4, 10.4, 3500, 'PT60M A01', 'B11:800 B12:3500 B19:1500'),
  europe('NO-4', 68.5, 17, 2500, 'PT60M A01', 'B11:600 B12:3500 B19:700'),
  europe('NO-5', 60.4, 6, 4500, 'PT60M A01 in-only', 'B04:400 B10:300 B11:1000 B12:6000 B17:20'),
  europe('FI', 62, 25, 9000, 'PT15M A03', 'B01:1500 B04:800 B05:600 B06:100 B08:300 B11:3000 B14:4400 B15:30 B16:1500 B17:250 B19:8000 B20:300'),
  europe('IE', 53.3, -7.5, 4500, 'PT60M A01', 'B04:5000 B05:900 B06:500 B08:300 B10:300 B11:200 B16:1000 B19:5000 B20:300'),
  europe('GR', 39, 22, 6000, 'PT60M A01', 'B02:2500 B04:8000 B10:700 B12:3000 B16:7000 B19:5000'),
  europe('RO', 45.9, 25, 6500, 'PT60M A01', 'B01:100 B02:3000 B04:2500 B05:500 B11:2000 B12:4000 B14:1400 B16:2000 B19:3000'),
  europe('HU', 47.2, 19.5, 4500, 'PT15M A03', 'B01:400 B02:300 B04:3500 B06:400 B14:2000 B16:6000 B17:100 B19:300 B20:150'),
];

// prettier-ignore
export const US_PROFILES: readonly UsProfile[] = [
  us('US', 'United States Lower 48', 39, -96, 460000, 'BAT:20000 COL:110000 GEO:1800 NG:300000 NUC:95000 OES:50 OIL:3000 OTH:8000 PS:8000 SNB:2000 SUN:120000 UES:3000 UNK:10 WAT:50000 WNB:200 WND:110000'),
  us('US-PJM', 'PJM Interconnection, LLC', 40, -77, 90000, 'COL:20000 NG:45000 NUC:32000 OIL:1500 OTH:1500 SUN:14000 WAT:4500 WND:11000'),
  us('US-MISO', 'Midcontinent Independent System Operator, Inc.', 41, -90, 75000, 'BAT:100 COL:30000 NG:35000 NUC:12000 OTH:300 SUN:12000 WAT:1500 WND:30000'),
  us('US-ERCOT', 'Electric Reliability Council of Texas, Inc.', 31, -98, 50000, 'BAT:8000 COL:10000 NG:50000 NUC:5000 OTH:10 SUN:28000 UES:1500 WAT:300 WND:38000'),
  us('US-SPP', 'Southwest Power Pool', 37, -98, 30000, 'COL:9000 NG:15000 NUC:2100 OIL:2 OTH:100 SUN:800 WAT:2000 WND:33000'),
  us('US-SOCO', 'Southern Company Services, Inc. - Trans', 33, -85, 35000, 'BAT:100 COL:9000 NG:40000 NUC:8000 OES:1 OIL:2 OTH:60 PS:1600 SNB:2 SUN:3000 WAT:2500 WND:1'),
  us('US-CAISO', 'California Independent System Operator', 37, -120, 22000, 'COL:0 NG:15000 NUC:2250 OIL:50 OTH:8000:storage SUN:18000 WAT:5000 WND:6000'),
  us('US-TVA', 'Tennessee Valley Authority', 35.5, -86.5, 20000, 'BAT:1 COL:6000 GEO:0 NG:12000 NUC:7800 OES:0 OIL:0 OTH:40 PS:1600 SNB:600 SUN:1200 UNK:0 WAT:4000 WNB:0 WND:1'),
  us('US-NYISO', 'New York Independent System Operator', 42.5, -75, 16000, 'COL:0 NG:10000 NUC:3300 OIL:100 OTH:800 SUN:0 WAT:3600 WND:1500'),
  us('US-ISONE', 'ISO New England', 42.5, -71.5, 12000, 'BAT:200 COL:3 NG:9000 NUC:3300 OTH:450 PS:1500 SNB:15 SUN:1500 WAT:1500 WND:1200'),
  us('US-BPA', 'Bonneville Power Administration', 45.6, -121, 9000, 'NG:20 NUC:1150 OTH:140 SNB:60 SUN:200 WAT:11000 WND:2800'),
];

/** Great Britain's mix under NESO's fuel names; only the intensity derived from it is served. */
export const GB_PROFILE: MixProfile = mixProfile(
  'GB',
  53,
  -1.5,
  30000,
  'winter',
  parseFuels(
    'gas:32000 coal:2000 nuclear:6000 wind:28000 solar:15000 biomass:3000 hydro:1200 ' +
      'imports-fr:3000:steady imports-nl:1000:steady imports-ie:500:steady other:500 pumped:2800',
  ),
);
