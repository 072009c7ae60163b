/**
 * The zone page's picture of a traced hour (extensions §15): the flows with each neighbour as a
 * diverging bar chart, and the hour's consumed mix as a mix.
 */
import type { MixPoint, TracedMixPoint } from './api.js';
import { el, fmtUtc, fmtValue, missing } from './format.js';

/** A traced hour as a mix: what was consumed, by the category it was generated as. */
export const consumedMix = (point: TracedMixPoint): MixPoint => ({
  ts: point.ts,
  generation: point.consumption,
  renewable_pct: point.renewable_pct,
  low_carbon_pct: point.low_carbon_pct,
});

const SVG = 'http://www.w3.org/2000/svg';
const FLOW_ROW = 26;
const FLOW_HEAD = 24;
// Imports and exports in Okabe-Ito blue and vermillion: told apart with colour-vision deficiencies.
const IMPORT_COLOUR = '#0072B2';
const EXPORT_COLOUR = '#D55E00';
// The longest bar's share of its half: the rest holds its value.
const BAR_SHARE = 0.7;

function svgEl(tag: string, attributes: Readonly<Record<string, string | number>>, text?: string) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

const flowList = (flows: readonly (readonly [string, number])[]) =>
  flows.map(([neighbour, mwh]) => `${neighbour} ${fmtValue(mwh)}`).join(', ');

/**
 * The hour's flows with each neighbour as a diverging bar chart: imports to the left of the
 * axis, exports to the right, the neighbour's code in a column of its own. Drawn in percentages
 * of the width, so the bars follow the page's width and the text keeps its size.
 */
export function flowsPicture(zone: string, point: TracedMixPoint): HTMLElement {
  const neighbours = [...new Set([...Object.keys(point.imports), ...Object.keys(point.exports)])];
  const rows = neighbours
    .map((code) => ({
      code,
      imported: point.imports[code] ?? 0,
      exported: point.exports[code] ?? 0,
    }))
    .filter((row) => row.imported > 0 || row.exported > 0)
    .sort((a, b) => b.imported - b.exported - (a.imported - a.exported));
  if (rows.length === 0)
    return missing(`No flows between ${zone} and its neighbours in this hour.`);
  const largest = Math.max(...rows.flatMap((row) => [row.imported, row.exported]));
  const imports = rows.filter((row) => row.imported > 0).map((r) => [r.code, r.imported] as const);
  const exports = [...rows]
    .reverse()
    .filter((row) => row.exported > 0)
    .map((r) => [r.code, r.exported] as const);
  const sum = (flows: readonly (readonly [string, number])[]) =>
    flows.reduce((total, [, mwh]) => total + mwh, 0);
  const when = fmtUtc(Date.parse(point.ts) / 1000);
  const described =
    `Imports ${fmtValue(sum(imports))} MWh${imports.length ? ` (${flowList(imports)})` : ''}; ` +
    `exports ${fmtValue(sum(exports))} MWh${exports.length ? ` (${flowList(exports)})` : ''}.`;

  const svg = svgEl('svg', {
    class: 'flows',
    width: '100%',
    height: FLOW_HEAD + rows.length * FLOW_ROW,
    role: 'img',
    'aria-labelledby': 'flows-title flows-desc',
  });
  svg.append(
    svgEl('title', { id: 'flows-title' }, `Cross-border flows of ${zone} at ${when}, MWh`),
    svgEl('desc', { id: 'flows-desc' }, described),
  );
  // The bars' area, right of the codes' column; its own percentages are of its width.
  const area = svgEl('svg', { x: '18%', width: '82%', height: '100%', overflow: 'visible' });
  area.append(
    svgEl(
      'text',
      { x: '50%', dx: -6, y: 14, 'text-anchor': 'end', class: 'flows-head' },
      '← imports',
    ),
    svgEl('text', { x: '50%', dx: 6, y: 14, class: 'flows-head' }, 'exports →'),
    svgEl('line', { x1: '50%', x2: '50%', y1: FLOW_HEAD - 4, y2: '100%', class: 'flows-axis' }),
  );
  rows.forEach((row, i) => {
    const y = FLOW_HEAD + i * FLOW_ROW;
    const middle = y + FLOW_ROW / 2 + 4;
    svg.append(svgEl('text', { x: 0, y: middle, class: 'flows-code' }, row.code));
    for (const [mwh, side] of [
      [row.imported, -1],
      [row.exported, 1],
    ] as const) {
      if (mwh <= 0) continue;
      const length = (mwh / largest) * 50 * BAR_SHARE;
      const start = side < 0 ? 50 - length : 50;
      area.append(
        svgEl('rect', {
          x: `${start}%`,
          y: y + 4,
          width: `${length}%`,
          height: FLOW_ROW - 8,
          fill: side < 0 ? IMPORT_COLOUR : EXPORT_COLOUR,
        }),
        svgEl(
          'text',
          {
            x: `${50 + side * length}%`,
            dx: side * 4,
            y: middle,
            'text-anchor': side < 0 ? 'end' : 'start',
          },
          fmtValue(mwh),
        ),
      );
    }
  });
  svg.append(area);
  return el(
    'figure',
    { class: 'figure' },
    el(
      'figcaption',
      {},
      el('strong', { text: `Cross-border flows at ${when}, MWh in the hour` }),
      ' ',
      el('span', { class: 'summary', text: described }),
    ),
    svg,
  );
}
