import type { Accounting, Basis, Features, Index, Status, Zone } from './api.js';
import { ACCOUNTINGS, BASES } from './api.js';
import { ACCOUNTING_LABEL, BASIS_LABEL, el } from './format.js';

/**
 * What the shell (main.ts) hands each view: the data every view shares, the route it draws, and
 * the controls views share. Apart from main.ts, so that views never import the shell.
 */

export interface Shared {
  zones: Promise<Zone[]>;
  index: Promise<Index | null>;
  status: Promise<Status>;
  features: Promise<Features>;
}

export interface Route {
  readonly view: 'overview' | 'zone' | 'status';
  readonly zone: string;
  readonly params: URLSearchParams;
  readonly basis: Basis;
  readonly accounting: Accounting;
}

/** The options a link to another view keeps (its defaults left out of the URL). */
export const kept = (route: Pick<Route, 'basis' | 'accounting'>) => ({
  basis: route.basis === 'lifecycle' ? null : route.basis,
  accounting: route.accounting === 'production' ? null : route.accounting,
});

/** The hash of `route` with some parameters changed (null removes one). */
export function hrefWith(
  path: string,
  params: URLSearchParams,
  changes: Readonly<Record<string, string | null>>,
): string {
  const next = new URLSearchParams(params);
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) next.delete(name);
    else next.set(name, value);
  }
  const query = next.toString();
  return `#${path}${query ? `?${query}` : ''}`;
}

/** Radio buttons: native inputs, so arrows and Tab work and readers announce them. */
function radios<T extends string>(
  name: string,
  legend: string,
  options: readonly T[],
  labels: Readonly<Record<T, string>>,
  current: T,
  onChange: (value: T) => void,
): HTMLElement {
  const group = el('fieldset', { class: 'segmented' }, el('legend', { text: legend }));
  for (const value of options) {
    const input = el('input', { type: 'radio', name, value, id: `${name}-${value}` });
    input.checked = value === current;
    input.addEventListener('change', () => input.checked && onChange(value));
    group.append(el('label', { for: `${name}-${value}` }, input, labels[value]));
  }
  return group;
}

export const basisControl = (current: Basis, onChange: (basis: Basis) => void): HTMLElement =>
  radios('basis', 'Basis', BASES, BASIS_LABEL, current, onChange);

export const accountingControl = (
  current: Accounting,
  onChange: (accounting: Accounting) => void,
): HTMLElement =>
  radios('accounting', 'Accounting', ACCOUNTINGS, ACCOUNTING_LABEL, current, onChange);
