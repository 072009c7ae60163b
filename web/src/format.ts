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

/** The method and the basis, in two sentences. */
export const BASIS_EXPLAINED = {
  lifecycle:
    'Values are computed by gridco2 from the generation per fuel, weighted by IPCC AR5 lifecycle emission factors (construction, fuel supply and decommissioning included, so wind, solar and nuclear are not zero). Every zone, Great Britain included, is computed the same way, so all 45 compare directly.',
  direct:
    'Values are computed by gridco2 from the generation per fuel, weighted by direct combustion-only emission factors (wind, solar, nuclear, hydro and biomass count as zero). Every zone, Great Britain included, is computed the same way, so all 45 compare directly.',
  default:
    "Europe and the US are computed by gridco2 from the generation per fuel with lifecycle emission factors; Great Britain shows the operator NESO's own figure, which counts combustion only and includes imports. Choose the lifecycle or direct basis to compare Great Britain with the other 44 zones.",
} as const;
