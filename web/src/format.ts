import type { Levels, ZoneLevel } from './api.js';
import { LEVEL_COLOUR, levelWord, textOn } from './scale.js';

/** Small formatting helpers shared by the views. */

export const fmtValue = (value: number): string =>
  value >= 100 ? String(Math.round(value)) : value.toFixed(1).replace(/\.0$/, '');

/** "35 min", "3.5 h", "2 d": the age of a reading, for people. */
export function fmtAge(hours: number): string {
  if (hours < 1) return `${Math.max(0, Math.round(hours * 60))} min`;
  if (hours < 48) return `${Math.round(hours * 10) / 10} h`;
  return `${Math.round(hours / 24)} d`;
}

export const fmtUtc = (seconds: number): string =>
  new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';

export const fmtHourUtc = (iso: string): string => iso.slice(11, 16);

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Readonly<Record<string, string>> = {},
  ...children: (Node | string | null | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'text') node.textContent = value;
    else node.setAttribute(name, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

/** A sentence saying that something is missing, and why: in place of a chart or a value. */
export const missing = (text: string): HTMLParagraphElement => el('p', { class: 'missing', text });

export const SOURCE_GROUPS = [
  { source: 'europe-tso', title: 'Europe' },
  { source: 'us-agency', title: 'United States' },
  { source: 'uk-operator', title: 'Great Britain' },
] as const;

export const BASIS_LABEL = {
  lifecycle: 'Lifecycle',
  direct: 'Direct',
  default: "Each zone's own",
} as const;

export const ACCOUNTING_LABEL = {
  production: 'Production',
  consumption: 'Consumption',
} as const;

/** What the accounting counts, in one sentence. */
export const ACCOUNTING_EXPLAINED = {
  production: "Production values: what a zone's own power plants emit per kWh they generate.",
  consumption:
    "Consumption values: what a zone's consumers use per kWh, its own generation and its imports traced hour by hour through the cross-border flows.",
} as const;

/** Why GB has no consumption values (the API's 404 says the same). */
export const NO_GB_SERIES =
  'GB has no consumption series (its operator publishes generation shares, not quantities, so its flows cannot be traced)';

/** Said once where consumption values were asked for from a server that serves none. */
export const NO_FLOWS =
  'This server serves no consumption values (it ingests no border flows: FLOWS=off), so production values are shown.';

/** The method and the basis, in two sentences. */
export const BASIS_EXPLAINED = {
  lifecycle:
    'Values are computed by gridco2 from the generation per fuel, weighted by IPCC AR5 lifecycle emission factors (construction, fuel supply and decommissioning included, so wind, solar and nuclear are not zero). Every zone, Great Britain included, is computed the same way, so all 45 compare directly.',
  direct:
    'Values are computed by gridco2 from the generation per fuel, weighted by direct combustion-only emission factors (wind, solar, nuclear, hydro and biomass count as zero). Every zone, Great Britain included, is computed the same way, so all 45 compare directly.',
  default:
    "Europe and the US are computed by gridco2 from the generation per fuel with lifecycle emission factors; Great Britain shows the operator NESO's own figure, which counts combustion only and includes imports. Choose the lifecycle or direct basis to compare Great Britain with the other 44 zones.",
} as const;

/** A zone's newest reading as `/v1/intensity/level` placed it, when it has a level. */
export type Placed = ZoneLevel['now'] & {
  readonly level: NonNullable<ZoneLevel['now']['level']>;
  readonly percentile: number;
};

/** The level of `reading` if `levels` placed that very reading (not an older or newer one). */
export function placedReading(
  levels: Levels | null,
  zone: string,
  readingTs: string,
): Placed | undefined {
  const now = levels?.data.find((entry) => entry.zone === zone)?.now;
  if (!now || now.level === null || now.percentile === null) return undefined;
  return Date.parse(now.ts) === Date.parse(readingTs) ? (now as Placed) : undefined;
}

/**
 * The level word of a reading ("very high"), on its level's colour of the one scale, with the
 * percentile it comes from for those who hover it.
 */
export const levelChip = (placed: Placed, zone: string): HTMLElement =>
  el(
    'span',
    {
      class: 'level',
      'data-level': placed.level,
      style: `--level-bg:${LEVEL_COLOUR[placed.level]};--level-fg:${textOn(LEVEL_COLOUR[placed.level])}`,
      title: `Percentile ${placed.percentile} of ${zone}'s own values of the last 30 days`,
    },
    el('span', { class: 'sr-only', text: 'level ' }),
    levelWord(placed.level),
  );

/** The level bands in words, from the thresholds the API sent (one table, in core/level.ts). */
export const levelBands = (thresholds: Levels['thresholds']): string =>
  `very low below its ${thresholds['very-low']}th percentile, low below the ${thresholds.low}th, moderate below the ` +
  `${thresholds.moderate}th, high below the ${thresholds.high}th, very high from the ${thresholds.high}th`;
