/**
 * Annual intensities of the neighbours that never publish an hourly mix (docs/method.md,
 * "Consumption accounting"): what their exports into the graph are counted at when nothing
 * better is known (extensions §15, "Unsolved neighbours").
 *
 * Each row is a published annual mix, put through gridco2's own factors on both bases, so a row
 * is computed exactly like every other value and follows a factor change. Most mixes are
 * Electricity Maps' annual averages of the zone's flow-traced mix (`fallbackZoneMixes` in its
 * open zone configuration), which is what the zone exports under proportional sharing; a few are
 * the production mix that configuration cites. Where the source books a share as unknown and
 * gives that share its own factors, they are used; otherwise the unknown share is `other`.
 * Storage discharge is left out, as storage is everywhere (method.md).
 */
import { type Basis, CATEGORIES, type Category, FACTORS } from '../factors.js';

/** One neighbour's annual intensity, gCO2eq/kWh on each basis. */
export interface AnnualIntensity {
  /** The neighbour's codes as nodes of the flow graph (Europe: area code; US: EIA BA code). */
  readonly codes: readonly string[];
  readonly area: string;
  /** The year the mix describes. */
  readonly year: number;
  readonly source: string;
  readonly lifecycle: number;
  readonly direct: number;
}

interface AnnualMix {
  readonly codes: readonly string[];
  readonly area: string;
  readonly year: number;
  readonly source: string;
  /** % of the mix per category, as the source gives it (unknown without own factors: `other`). */
  readonly mix: Readonly<Partial<Record<Category, number>>>;
  /** The share the source books as unknown, with the factors the source gives it. */
  readonly unknown?: { readonly share: number; readonly factors: Readonly<Record<Basis, number>> };
}

/** Electricity Maps' open zone configuration, as read for this table. */
const EM_CONFIG = 'electricitymaps-contrib @ b354f28a, config/zones';

const annualAverage = (zone: string, year: number) =>
  `Electricity Maps, ${year} annual average mix (${EM_CONFIG}/${zone}.yaml, fallbackZoneMixes)`;

const ownUnknownFactors = (zone: string, what: string) =>
  `; its unknown share at Electricity Maps' ${zone} factors for unknown (${what})`;

const ANNUAL_MIXES: readonly AnnualMix[] = [
  {
    codes: ['TR'],
    area: 'Türkiye',
    year: 2024,
    source: annualAverage('TR', 2024),
    mix: {
      coal: 37.898,
      gas: 19.714,
      oil: 0.248,
      biomass: 2.534,
      geothermal: 3.161,
      hydro: 23.246,
      nuclear: 0.067,
      solar: 1.621,
      'wind-onshore': 11.273,
      other: 0.237,
    },
  },
  {
    codes: ['UA'],
    area: 'Ukraine',
    year: 2022,
    source: annualAverage('UA', 2022) + ownUnknownFactors('UA', 'half solar, half wind: 28 and 0'),
    mix: {
      coal: 21.974,
      gas: 7.566,
      oil: 0.024,
      biomass: 0.059,
      hydro: 7.49,
      nuclear: 56.26,
      solar: 0.037,
      'wind-onshore': 0.157,
    },
    unknown: { share: 6.41, factors: { lifecycle: 28, direct: 0 } },
  },
  {
    codes: ['RU'],
    area: 'Russia, European part',
    year: 2024,
    source:
      annualAverage('RU-1', 2024) +
      ownUnknownFactors('RU-1', 'thermal: 89 % gas, 7 % coal, 4 % other: 518 and 401.56'),
    mix: {
      coal: 0.742,
      gas: 0.269,
      oil: 0.012,
      biomass: 0.009,
      hydro: 7.451,
      nuclear: 24.411,
      solar: 0.228,
      'wind-onshore': 0.032,
    },
    unknown: { share: 66.85, factors: { lifecycle: 518, direct: 401.56 } },
  },
  {
    codes: ['RU-KGD'],
    area: 'Kaliningrad',
    year: 2014,
    source: `Energy security in Kaliningrad and geopolitics, BSR Policy Briefing 2/2014, as given in ${EM_CONFIG}/RU-KGD.yaml (fallbackZoneMixes)`,
    mix: { gas: 98, hydro: 0.5, 'wind-onshore': 1.5 },
  },
  {
    codes: ['MA'],
    area: 'Morocco',
    year: 2024,
    source: annualAverage('MA', 2024),
    mix: {
      coal: 63.786,
      gas: 2.454,
      oil: 9.185,
      biomass: 0.129,
      hydro: 2.271,
      nuclear: 1.36,
      solar: 4.603,
      'wind-onshore': 13.164,
      other: 2.874,
    },
  },
  {
    codes: ['AM'],
    area: 'Armenia',
    year: 2020,
    source: annualAverage('AM', 2020),
    mix: { gas: 46.389, oil: 0.002, hydro: 19.046, nuclear: 34.562 },
  },
  {
    codes: ['AESO'],
    area: 'Alberta (CA-AB)',
    year: 2024,
    source:
      annualAverage('CA-AB', 2024) + ownUnknownFactors('CA-AB', 'half coal, half gas: 655 and 565'),
    mix: {
      coal: 2.261,
      gas: 73.405,
      oil: 0.01,
      biomass: 2.345,
      hydro: 1.922,
      nuclear: 0.005,
      solar: 3.184,
      'wind-onshore': 14.375,
    },
    unknown: { share: 2.495, factors: { lifecycle: 655, direct: 565 } },
  },
  {
    codes: ['BCHA'],
    area: 'British Columbia (CA-BC)',
    year: 2024,
    source: annualAverage('CA-BC', 2024) + ownUnknownFactors('CA-BC', 'mostly hydro: 56 and 28.6'),
    mix: {
      coal: 0.649,
      gas: 3.95,
      oil: 0.019,
      biomass: 0.101,
      geothermal: 0.016,
      hydro: 8.965,
      nuclear: 1.472,
      solar: 0.447,
      'wind-onshore': 3.006,
    },
    unknown: { share: 81.371, factors: { lifecycle: 56, direct: 28.6 } },
  },
  {
    codes: ['HQT'],
    area: 'Québec (CA-QC)',
    year: 2024,
    source: annualAverage('CA-QC', 2024),
    mix: {
      coal: 0.019,
      gas: 1.303,
      oil: 0.001,
      biomass: 2.614,
      hydro: 88.149,
      nuclear: 2.253,
      solar: 0.025,
      'wind-onshore': 5.605,
      other: 0.031,
    },
  },
  {
    codes: ['IESO'],
    area: 'Ontario (CA-ON)',
    year: 2024,
    source: annualAverage('CA-ON', 2024),
    mix: {
      coal: 0.017,
      gas: 16.384,
      biomass: 0.198,
      hydro: 24.237,
      nuclear: 50.294,
      solar: 0.447,
      'wind-onshore': 8.422,
      other: 0.002,
    },
  },
  {
    codes: ['MHEB'],
    area: 'Manitoba (CA-MB)',
    year: 2020,
    source: `Statistics Canada, average production in 2020, as given in ${EM_CONFIG}/CA-MB.yaml (fallbackZoneMixes)`,
    mix: { gas: 0.3, hydro: 97.15, 'wind-onshore': 2.54 },
  },
  {
    codes: ['NBSO'],
    area: 'New Brunswick (CA-NB)',
    year: 2024,
    source:
      annualAverage('CA-NB', 2024) +
      ownUnknownFactors('CA-NB', 'Government of Canada 2019 mix: 211.9 and 163.5'),
    mix: {
      coal: 0.038,
      gas: 3.051,
      oil: 0.003,
      biomass: 1.13,
      hydro: 32.363,
      nuclear: 1.679,
      solar: 0.081,
      'wind-onshore': 2.145,
    },
    unknown: { share: 59.506, factors: { lifecycle: 211.9, direct: 163.5 } },
  },
  {
    codes: ['SPC'],
    area: 'Saskatchewan (CA-SK)',
    year: 2024,
    source: annualAverage('CA-SK', 2024),
    mix: {
      coal: 30.271,
      gas: 46.039,
      biomass: 0.006,
      hydro: 9.194,
      solar: 0.222,
      'wind-onshore': 8.044,
      other: 6.224,
    },
  },
  {
    codes: ['CEN', 'CFE'],
    area: 'Mexico',
    year: 2020,
    source: `IEA, Electricity generation mix in Mexico, 1 Jan - 30 Sep 2020, as given in ${EM_CONFIG}/MX.yaml (the mix behind its unknown factor); other renewables as biomass`,
    mix: {
      coal: 4.2,
      gas: 63.4,
      oil: 8.4,
      biomass: 1.5,
      hydro: 8.8,
      nuclear: 3.6,
      solar: 4.3,
      'wind-onshore': 5.9,
    },
  },
];

/** gCO2eq/kWh of an annual mix on `basis`: the formula of every value, over the mix's total. */
function intensityOf({ mix, unknown }: AnnualMix, basis: Basis): number {
  let emissions = (unknown?.share ?? 0) * (unknown?.factors[basis] ?? 0);
  let total = unknown?.share ?? 0;
  for (const category of CATEGORIES) {
    const share = mix[category];
    if (share === undefined) continue;
    emissions += share * FACTORS[basis][category].value;
    total += share;
  }
  return emissions / total;
}

/** The table, in the order above; docs/method.md lists it. */
export const ANNUAL_INTENSITIES: readonly AnnualIntensity[] = ANNUAL_MIXES.map(
  (row): AnnualIntensity => ({
    codes: row.codes,
    area: row.area,
    year: row.year,
    source: row.source,
    lifecycle: intensityOf(row, 'lifecycle'),
    direct: intensityOf(row, 'direct'),
  }),
);

/** The table by node code. */
export const ANNUAL_INTENSITY_OF: ReadonlyMap<string, AnnualIntensity> = new Map(
  ANNUAL_INTENSITIES.flatMap((row) => row.codes.map((code) => [code, row] as const)),
);
