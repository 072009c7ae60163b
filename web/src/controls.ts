import type { Basis, Features, Index, Status, Zone } from './api.js';
import { BASES } from './api.js';
import { BASIS_LABEL, el } from './format.js';

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
}

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

/** Radio buttons for the basis: native inputs, so arrows and Tab work and readers announce them. */
export function basisControl(current: Basis, onChange: (basis: Basis) => void): HTMLElement {
  const group = el('fieldset', { class: 'segmented' }, el('legend', { text: 'Basis' }));
  for (const basis of BASES) {
    const input = el('input', { type: 'radio', name: 'basis', value: basis, id: `basis-${basis}` });
    input.checked = basis === current;
    input.addEventListener('change', () => input.checked && onChange(basis));
    group.append(el('label', { for: `basis-${basis}` }, input, BASIS_LABEL[basis]));
  }
  return group;
}
