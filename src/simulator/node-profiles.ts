import { EUROPE_NODES } from '../core/grid-graph/europe.js';
import type { GraphNode } from '../core/grid-graph/graph.js';
import { US_NODES } from '../core/grid-graph/us.js';
import {
  EUROPE_PROFILES,
  US_PROFILES,
  europe,
  us,
  type EuropeProfile,
  type UsProfile,
} from './zone-profiles.js';

/**
 * The simulated nodes of the flow graphs that are no zone (`extra` in src/core/grid-graph,
 * extensions §16): the European bidding zones around the served ones, whose A75 the platform
 * publishes, and every other EIA-930 balancing authority that reports fuel-type data. Same model
 * and style as zone-profiles.ts: rough location, load and installed capacity, not statistics.
 * Each EIA balancing authority reports the fuel types and carries the name of the 2025
 * all-respondent recording (test/fixtures/upstreams/us-agency).
 */

function upstreamIdOf(nodes: readonly GraphNode[], code: string): string {
  const node = nodes.find((candidate) => candidate.code === code && candidate.role === 'extra');
  if (!node?.upstreamId) throw new Error(`no extra node ${code} in the flow graph`);
  return node.upstreamId;
}

// Code, latitude, longitude, mean load (MW), format flags, fuels (as `europe` in zone-profiles.ts).
// B07 (oil shale) has no merit-order entry: dispatched last.
// prettier-ignore
const EUROPE_EXTRA_ROWS: readonly (readonly [string, number, number, number, string, string])[] = [
  ['EE', 59, 25.5, 950, 'PT60M A01', 'B01:300 B04:250 B07:1400:dispatchable B16:700 B17:50 B19:700 B20:100'],
  ['LV', 57, 24.5, 800, 'PT60M A01', 'B01:150 B04:1000 B11:1550 B16:300 B19:150'],
  ['LT', 55.3, 24, 1400, 'PT60M A01', 'B01:200 B04:1000 B10:900 B11:100 B16:1500 B17:100 B19:1500 B20:100'],
  ['SK', 48.7, 19.5, 3200, 'PT60M A01', 'B01:200 B02:200 B04:1000 B05:100 B10:900 B11:1600 B12:400 B14:3200 B16:700 B20:100'],
  ['SI', 46.1, 14.8, 1500, 'PT15M A01', 'B02:1000 B04:400 B10:180 B11:1100 B14:700 B16:1000 B20:50'],
  ['HR', 45.3, 16, 2000, 'PT15M A03', 'B01:100 B04:900 B05:200 B11:400 B12:1800 B16:500 B19:1100 B20:50'],
  ['BG', 42.7, 25.3, 4200, 'PT60M A01', 'B02:4000 B04:800 B10:1400 B11:500 B12:1800 B14:2000 B16:3000 B19:700'],
  ['RS', 44, 20.8, 4000, 'PT60M A01', 'B02:4400 B04:400 B10:600 B11:1800 B12:600 B16:100 B19:500'],
  ['BA', 44.2, 17.8, 1300, 'PT60M A01', 'B02:1800 B11:500 B12:1600 B16:300 B19:200'],
  ['ME', 42.8, 19.3, 400, 'PT60M A01', 'B02:225 B11:100 B12:650 B16:50 B19:120'],
  ['MK', 41.6, 21.7, 800, 'PT60M A01', 'B02:700 B04:300 B11:100 B12:500 B16:300 B19:40'],
  ['XK', 42.6, 20.9, 700, 'PT60M A01', 'B02:1100 B11:100 B16:50 B19:130'],
  ['MD', 47, 28.8, 500, 'PT60M A01', 'B01:10 B04:300 B11:60 B16:200 B19:150'],
];

/**
 * Balancing authorities that mostly generate (wind farms, federal hydro, merchant gas) keep a
 * small local load here, so that their exports come from the same model as everyone's. Loads of
 * at least 100 MW keep the rounding of whole-MWh interchange well inside the 2 % balance. The
 * five retired since 2019 (AEC, EEI, GLHB, GRIF, NSB) are not simulated: absent in 2025.
 */
// Code, name, latitude, longitude, mean load (MW), fuels (as `us` in zone-profiles.ts).
// prettier-ignore
const US_EXTRA_ROWS: readonly (readonly [string, string, number, number, number, string])[] = [
  ['US-AECI', 'Associated Electric Cooperative, Inc.', 37.5, -92.5, 2500, 'COL:2800 NG:2500 WND:900'],
  ['US-AVA', 'Avista Corporation', 47.6, -117.4, 1100, 'NG:500 OTH:150 SUN:100 WAT:1100 WND:300'],
  ['US-AVRN', 'Avangrid Renewables, LLC', 45.5, -120, 300, 'NG:0 SUN:0 WAT:0 WND:2500'],
  ['US-AZPS', 'Arizona Public Service Company', 33.5, -112, 4000, 'BAT:300 COL:2000 NG:3500 NUC:1900 OIL:50 OTH:50 SUN:2000 UES:800 WAT:10 WND:300'],
  ['US-BANC', 'Balancing Authority of Northern California', 38.6, -121.4, 1800, 'NG:1500 OTH:50 SUN:400 WAT:1200'],
  ['US-CHPD', 'Public Utility District No. 1 of Chelan County', 47.4, -120.3, 400, 'WAT:1900 WND:5'],
  ['US-CPLE', 'Duke Energy Progress East', 35.5, -78.5, 7000, 'BAT:50 COL:2500 NG:6000 NUC:3600 OIL:500 OTH:400 SNB:100 SUN:3000 WAT:200'],
  ['US-CPLW', 'Duke Energy Progress West', 35.6, -82.5, 600, 'COL:0 NG:600 OTH:100 SUN:50 WAT:100'],
  ['US-DEAA', 'Arlington Valley, LLC', 33.3, -112.8, 100, 'NG:600'],
  ['US-DOPD', 'PUD No. 1 of Douglas County', 47.4, -120.3, 250, 'WAT:850'],
  ['US-DUK', 'Duke Energy Carolinas', 35.2, -80.8, 11000, 'COL:6000 NG:6500 NUC:6000 OTH:50 PS:1900 SUN:1200 WAT:2000'],
  ['US-EPE', 'El Paso Electric Company', 31.8, -106.4, 1100, 'NG:1800 SNB:150 SUN:300'],
  ['US-FMPP', 'Florida Municipal Power Pool', 28.5, -81.4, 1500, 'COL:300 NG:2000 NUC:150 OIL:50 OTH:30 SUN:300'],
  ['US-FPC', 'Duke Energy Florida, Inc.', 28.5, -82.5, 5000, 'BAT:100 COL:700 NG:8000 OIL:800 OTH:100 SUN:2500 WAT:40'],
  ['US-FPL', 'Florida Power & Light Co.', 26.5, -80.5, 14000, 'NG:20000 NUC:3800 OIL:100 OTH:700 SUN:9000'],
  ['US-GCPD', 'Public Utility District No. 2 of Grant County, Washington', 47.1, -119.3, 600, 'WAT:2000'],
  ['US-GRID', 'Gridforce Energy Management, LLC', 45, -116, 300, 'COL:0 NG:700 SUN:200 WND:100'],
  ['US-GVL', 'Gainesville Regional Utilities', 29.7, -82.3, 250, 'COL:0 NG:400 OTH:100'],
  ['US-GWA', 'NaturEner Power Watch, LLC', 48.5, -111.9, 100, 'WND:200'],
  ['US-HGMA', 'New Harquahala Generating Company, LLC', 33.4, -113, 100, 'NG:1000'],
  ['US-HST', 'City of Homestead', 25.5, -80.5, 100, 'NG:150'],
  ['US-IID', 'Imperial Irrigation District', 32.8, -115.5, 550, 'BAT:100 GEO:500 NG:500 OIL:10 SNB:10 SUN:400 WAT:80'],
  ['US-IPCO', 'Idaho Power Company', 43.6, -116.2, 2000, 'BAT:50 GEO:40 NG:800 OIL:10 OTH:30 SUN:900 WAT:2000 WND:700'],
  ['US-JEA', 'JEA', 30.3, -81.7, 1500, 'COL:600 NG:2000 OIL:50 OTH:20 SUN:100'],
  ['US-LDWP', 'Los Angeles Department of Water and Power', 34, -118.2, 3000, 'BAT:50 COL:1200 NG:3000 OTH:10 PS:1200 SNB:50 SUN:1500 WAT:300 WND:1000'],
  ['US-LGEE', 'LG&E and KU Services Company as agent for Louisville Gas and Electric Company and Kentucky Utilities Company', 38, -85.7, 4000, 'COL:5000 NG:2500 OIL:10 SUN:150 WAT:100'],
  ['US-NEVP', 'Nevada Power Company', 36.2, -115.1, 4000, 'COL:500 NG:5500 NUC:0 OIL:10 OTH:600 SUN:4000 WAT:20 WND:50'],
  ['US-NWMT', 'NorthWestern Corporation', 46.6, -112, 1300, 'COL:800 NG:300 OIL:100 SUN:150 WAT:800 WND:400'],
  ['US-PACE', 'PacifiCorp East', 41, -111.9, 6000, 'COL:5000 NG:2500 OTH:300 SUN:3000 WAT:300 WND:3500'],
  ['US-PACW', 'PacifiCorp West', 44, -123, 2500, 'NG:800 OTH:100 SUN:700 WAT:900 WND:1000'],
  ['US-PGE', 'Portland General Electric Company', 45.5, -122.7, 2300, 'BAT:50 COL:0 NG:1800 OTH:10 WAT:500 WND:600'],
  ['US-PNM', 'Public Service Company of New Mexico', 35.1, -106.6, 1600, 'BAT:500 COL:500 GEO:10 NG:1000 SUN:1800 WAT:20 WND:1500'],
  ['US-PSCO', 'Public Service Company of Colorado', 39.7, -105, 5500, 'COL:2500 NG:4500 OIL:10 OTH:400 SUN:2200 WAT:100 WND:4000'],
  ['US-PSEI', 'Puget Sound Energy, Inc.', 47.6, -122.3, 2600, 'COL:0 NG:2000 OIL:10 OTH:50 SUN:10 WAT:300 WND:800'],
  ['US-SC', 'South Carolina Public Service Authority', 33.2, -80, 2300, 'COL:2500 NG:1500 OIL:10 OTH:100 SUN:400 WAT:150'],
  ['US-SCEG', 'Dominion Energy South Carolina, Inc.', 34, -81, 2500, 'COL:1500 NG:2500 NUC:1000 OTH:10 SUN:1400 WAT:600'],
  ['US-SCL', 'Seattle City Light', 47.6, -122.3, 1000, 'WAT:1900'],
  ['US-SEC', 'Seminole Electric Cooperative', 28.5, -82, 1500, 'COL:1300 NG:2200 SUN:50'],
  ['US-SEPA', 'Southeastern Power Administration', 34, -83, 300, 'WAT:3400'],
  ['US-SPA', 'Southwestern Power Administration', 36, -95, 300, 'WAT:2200'],
  ['US-SRP', 'Salt River Project Agricultural Improvement and Power District', 33.4, -111.9, 3700, 'BAT:400 COL:1500 NG:5000 NUC:2700 SNB:100 SUN:1500 WAT:250 WND:10'],
  ['US-TAL', 'City of Tallahassee', 30.4, -84.3, 300, 'NG:750 SUN:60'],
  ['US-TEC', 'Tampa Electric Company', 27.9, -82.5, 2300, 'COL:0 NG:4500 OIL:10 OTH:60 SNB:150 SUN:1300'],
  ['US-TEPC', 'Tucson Electric Power', 32.2, -110.9, 2000, 'BAT:100 COL:800 NG:2200 SUN:900 WND:300'],
  ['US-TIDC', 'Turlock Irrigation District', 37.5, -120.8, 300, 'NG:400 WAT:200'],
  ['US-TPWR', 'City of Tacoma, Department of Public Utilities, Light Division', 47.3, -122.4, 500, 'WAT:750'],
  ['US-WACM', 'Western Area Power Administration - Rocky Mountain Region', 40.5, -106, 3000, 'COL:3500 NG:800 SUN:1000 WAT:1000 WND:1000'],
  ['US-WALC', 'Western Area Power Administration - Desert Southwest Region', 33.5, -114, 1000, 'NG:300 SUN:600 WAT:2500 WND:300'],
  ['US-WAUW', 'Western Area Power Administration - Upper Great Plains West', 46.8, -105, 300, 'WAT:500'],
  ['US-WWA', 'NaturEner Wind Watch, LLC', 48, -112, 100, 'WND:250'],
  ['US-YAD', 'Alcoa Power Generating, Inc. - Yadkin Division', 35.5, -80.2, 100, 'WAT:200'],
];

export const EUROPE_EXTRA_PROFILES: readonly EuropeProfile[] = EUROPE_EXTRA_ROWS.map((row) =>
  europe(...row, upstreamIdOf(EUROPE_NODES, row[0])),
);

export const US_EXTRA_PROFILES: readonly UsProfile[] = US_EXTRA_ROWS.map((row) =>
  us(...row, upstreamIdOf(US_NODES, row[0])),
);

/** Every area the simulated ENTSO-E publishes generation (and forecasts) for, by EIC. */
export const EUROPE_BY_EIC: ReadonlyMap<string, EuropeProfile> = new Map(
  [...EUROPE_PROFILES, ...EUROPE_EXTRA_PROFILES].map((profile) => [profile.eic, profile]),
);

/** Every respondent of the simulated EIA routes, in code order (as EIA lists them). */
export const EIA_RESPONDENTS: readonly UsProfile[] = [...US_PROFILES, ...US_EXTRA_PROFILES].sort(
  (a, b) => (a.respondent < b.respondent ? -1 : 1),
);
