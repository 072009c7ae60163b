import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import {
  type Accounting,
  api,
  type Forecast,
  HOUR_MS,
  levelsOf,
  type MixPoint,
  type Point,
  type TracedMixPoint,
  type Values,
  valuesOf,
} from './api.js';
import {
  ACCOUNTING_EXPLAINED,
  BASIS_EXPLAINED,
  BASIS_LABEL,
  el,
  fmtAge,
  fmtUtc,
  fmtValue,
  levelBands,
  levelChip,
  missing,
  NO_FLOWS,
  NO_GB_SERIES,
  placedReading,
} from './format.js';
import {
  accountingControl,
  basisControl,
  hrefWith,
  kept,
  type Route,
  type Shared,
} from './controls.js';
import { colourFor, levelWord, textOn } from './scale.js';
import { consumedMix, flowsPicture } from './flows-picture.js';

/**
 * A zone's page (`#/zone/DE?range=7d&compare=FR,PL&basis=direct`, a permalink): its newest value
 * with its level word (where it stands in the zone's own last 30 days); intensity over
 * the range, actual and forecast with its P10-P90 band, up to three zones on one chart; the
 * generation mix as a stacked area and as it is now; an hour-of-day by month heatmap of the last
 * year; a CSV of what the chart shows; the method in two sentences; the attribution. Loaded only
 * when a zone is opened, with uPlot (the first screen does not carry it).
 */

const RANGES = {
  '24h': { label: '24 h', hours: 24 },
  '7d': { label: '7 d', hours: 24 * 7 },
  '30d': { label: '30 d', hours: 24 * 30 },
  '1y': { label: '1 year', hours: 24 * 365 },
} as const;
type RangeKey = keyof typeof RANGES;
const MAX_ZONES = 3;
const MIX_MAX_HOURS = 24 * 30;
// Okabe-Ito: distinguishable with the common colour-vision deficiencies.
const LINE_COLOURS = ['#0072B2', '#D55E00', '#009E73'];
const CATEGORY_COLOURS: Readonly<Record<string, string>> = {
  coal: '#3b3b3b',
  gas: '#b07aa1',
  oil: '#8c564b',
  biomass: '#7f9c3a',
  geothermal: '#c44e52',
  hydro: '#4c72b0',
  nuclear: '#e69f00',
  solar: '#f0e442',
  wind_onshore: '#56b4e9',
  wind_offshore: '#1f5f8b',
  marine: '#17becf',
  other: '#999999',
  // Imports from neighbours that publish no hourly mix, at an annual intensity.
  imported_estimated: '#d4b9a0',
};
const CATEGORIES = Object.keys(CATEGORY_COLOURS);
const label = (category: string) =>
  category === 'imported_estimated' ? 'imported, estimated' : category.replace('_', ' ');
// A mix in % (GB) whose categories sum below 100: the rest (imports, ...) drawn in grey.
const REST = 'imports / not itemised';
const REST_COLOUR = '#c7c7c7';

/** The generation of a point with categories this page does not know counted as "other". */
function generationOf(point: MixPoint): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [category, value] of Object.entries(point.generation)) {
    if (typeof value !== 'number' || !Number.isFinite(value)) continue;
    const key = category in CATEGORY_COLOURS ? category : 'other';
    out[key] = (out[key] ?? 0) + value;
  }
  return out;
}

const restOf = (generation: Readonly<Record<string, number>>) =>
  Math.max(0, 100 - Object.values(generation).reduce((a, b) => a + b, 0));

// The charts in UTC like the rest of the page, not in the browser's time zone.
const utc = (ts: number) => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC');

const cssVar = (name: string) =>
  getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#444';

// Time ticks in 24-hour UTC with ISO dates (uPlot's default is 12am/pm and M/D).
// Columns: tick step, label, then what to add when the year, month, day, hour, minute change.
const TIME_TICKS: (string | number | null)[][] = [
  [3600 * 24 * 365, '{YYYY}', null, null, null, null, null, null, 1],
  [3600 * 24 * 28, '{YYYY}-{MM}', null, null, null, null, null, null, 1],
  [3600 * 24, '{MM}-{DD}', '\n{YYYY}', null, null, null, null, null, 1],
  [3600, '{HH}:{mm}', '\n{YYYY}-{MM}-{DD}', null, '\n{MM}-{DD}', null, null, null, 1],
  [60, '{HH}:{mm}', '\n{YYYY}-{MM}-{DD}', null, '\n{MM}-{DD}', null, null, null, 1],
];
// The legend's time while the cursor is on the chart.
const TIME_SERIES: uPlot.Series = { value: '{YYYY}-{MM}-{DD} {HH}:{mm} UTC' };

function axes(): uPlot.Axis[] {
  const stroke = cssVar('--fg');
  const grid = { stroke: cssVar('--grid'), width: 1 };
  return [
    { stroke, grid, ticks: grid, values: TIME_TICKS },
    // Wide enough for the longest tick label (a mix in MWh reaches 100,000).
    { stroke, grid, ticks: grid, size: (_self, values) => yAxisWidth(values) },
  ];
}

const yAxisWidth = (values: readonly string[] | null): number =>
  Math.max(40, 16 + 7 * Math.max(0, ...(values ?? []).map((value) => value.length)));

/** A uPlot chart that follows its container's width. */
function chart(
  title: string,
  options: Omit<uPlot.Options, 'width' | 'height'>,
  data: uPlot.AlignedData,
  summary: string,
): HTMLElement {
  const holder = el('div', { class: 'chart', role: 'img', 'aria-label': `${title}. ${summary}` });
  const width = Math.max(280, (document.getElementById('main')?.clientWidth ?? 800) - 40);
  const height = width < 500 ? 220 : 300;
  const plot = new uPlot({ ...options, width, height }, data, holder);
  new ResizeObserver(() => {
    const w = holder.clientWidth;
    if (w > 0 && Math.abs(w - plot.width) > 2)
      plot.setSize({ width: w, height: w < 500 ? 220 : 300 });
  }).observe(holder);
  let points = 0;
  for (const column of data.slice(1)) {
    for (let i = 0; i < column.length; i++)
      if (column[i] !== null && column[i] !== undefined) points++;
  }
  holder.dataset['points'] = String(points);
  return el(
    'figure',
    { class: 'figure' },
    el(
      'figcaption',
      {},
      el('strong', { text: title }),
      ' ',
      el('span', { class: 'summary', text: summary }),
    ),
    holder,
  );
}

const stats = (values: number[]) =>
  values.length === 0
    ? null
    : {
        min: Math.min(...values),
        max: Math.max(...values),
        mean: values.reduce((a, b) => a + b, 0) / values.length,
      };

interface Series {
  readonly zone: string;
  readonly points: Point[];
  /** Production where consumption values were asked for and the zone has none. */
  readonly productionInstead: boolean;
}
function intensityChart(
  series: Series[],
  forecast: Forecast | null,
  accounting: Accounting,
): HTMLElement {
  const times = new Set<number>();
  for (const s of series) for (const p of s.points) times.add(p.t);
  const fc = forecast?.data ?? [];
  for (const f of fc) times.add(Date.parse(f.ts) / 1000);
  const xs = [...times].sort((a, b) => a - b);
  const at = new Map(xs.map((t, i) => [t, i]));
  const column = () => new Array<number | null>(xs.length).fill(null);
  const columns = series.map((s) => {
    const col = column();
    for (const p of s.points) col[at.get(p.t)!] = p.v;
    return col;
  });
  const opts: Omit<uPlot.Options, 'width' | 'height'> = {
    series: [
      TIME_SERIES,
      ...series.map((s, i) => ({
        label: s.productionInstead ? `${s.zone} (production)` : s.zone,
        stroke: LINE_COLOURS[i]!,
        width: 2,
        spanGaps: true,
        points: { show: false },
        value: (_u: uPlot, v: number | null) => (v === null ? '–' : fmtValue(v)),
      })),
    ],
    axes: axes(),
    scales: { x: { time: true } },
    tzDate: utc,
    legend: { live: true },
    cursor: { drag: { x: true, y: false } },
  };
  const data: (number | null)[][] = [...columns];
  const parts = series.map((s) => {
    const st = stats(s.points.map((p) => p.v));
    return st
      ? `${s.zone}: ${s.points.length} readings, from ${fmtValue(st.min)} to ${fmtValue(st.max)}, mean ${fmtValue(st.mean)}`
      : `${s.zone}: no readings in this window`;
  });
  if (fc.length > 0) {
    const mean = column();
    const p10 = column();
    const p90 = column();
    for (const f of fc) {
      const i = at.get(Date.parse(f.ts) / 1000)!;
      mean[i] = f.gco2eq_kwh;
      p10[i] = f.p10;
      p90[i] = f.p90;
    }
    const base = series.length + 1;
    opts.series.push({
      label: `${series[0]!.zone} forecast${accounting === 'consumption' ? ' (production)' : ''}`,
      stroke: LINE_COLOURS[0]!,
      width: 2,
      dash: [6, 4],
      spanGaps: true,
      points: { show: false },
    });
    data.push(mean);
    const banded = fc.filter((f) => f.p10 !== null && f.p90 !== null).length;
    if (banded === 0) {
      parts.push(`forecast: ${fc.length} intervals, no P10-P90 band yet`);
    } else {
      opts.series.push(
        {
          label: 'P10',
          stroke: 'rgba(0,114,178,0.35)',
          width: 1,
          spanGaps: true,
          points: { show: false },
        },
        {
          label: 'P90',
          stroke: 'rgba(0,114,178,0.35)',
          width: 1,
          spanGaps: true,
          points: { show: false },
        },
      );
      opts.bands = [{ series: [base + 2, base + 1], fill: 'rgba(0,114,178,0.15)' }];
      data.push(p10, p90);
      parts.push(`forecast: ${fc.length} intervals, ${banded} with a P10-P90 band`);
    }
  }
  return chart(
    'Carbon intensity, gCO2eq/kWh (times in UTC)',
    opts,
    [xs, ...data] as uPlot.AlignedData,
    parts.join('; ') + '.',
  );
}

function mixChart(
  zone: string,
  unit: string,
  points: readonly MixPoint[],
  what = 'Generation mix',
): HTMLElement {
  const gens = points.map(generationOf);
  const present = CATEGORIES.filter((c) => gens.some((g) => (g[c] ?? 0) > 0));
  const xs = points.map((p) => Date.parse(p.ts) / 1000);
  const raw = present.map((c) => gens.map((g) => g[c] ?? 0));
  if (unit === '%' && gens.some((g) => restOf(g) > 0.05)) {
    present.push(REST);
    raw.push(gens.map(restOf));
  }
  const colour = (category: string) => CATEGORY_COLOURS[category] ?? REST_COLOUR;
  // Stacked by hand: series k is the sum of the first k+1 categories; drawn from the top down so
  // each filled area covers the one above it only where it belongs.
  const cumulative = raw.map((_, k) =>
    points.map((_p, i) => raw.slice(0, k + 1).reduce((sum, r) => sum + r[i]!, 0)),
  );
  const order = present.map((_, k) => present.length - 1 - k);
  const opts: Omit<uPlot.Options, 'width' | 'height'> = {
    series: [
      TIME_SERIES,
      ...order.map((k) => ({
        label: label(present[k]!),
        stroke: colour(present[k]!),
        fill: colour(present[k]!),
        width: 0,
        points: { show: false },
        value: (_u: uPlot, _v: number | null, _s: number, i: number | null) =>
          i === null ? '–' : fmtValue(raw[k]![i]!),
      })),
    ],
    axes: axes(),
    scales: { x: { time: true } },
    tzDate: utc,
  };
  const last = points[points.length - 1];
  return chart(
    `${what} of ${zone}, ${unit === '%' ? '% of generation' : 'MWh per interval'}, stacked`,
    opts,
    [xs, ...order.map((k) => cumulative[k]!)] as uPlot.AlignedData,
    last
      ? `${points.length} intervals; renewable share from ${fmtValue(Math.min(...points.map((p) => p.renewable_pct)))} to ${fmtValue(Math.max(...points.map((p) => p.renewable_pct)))} %.`
      : '',
  );
}

function currentMix(point: MixPoint, unit: string): HTMLElement {
  const generation = generationOf(point);
  const entries = CATEGORIES.filter((c) => (generation[c] ?? 0) > 0).map(
    (c) => [c, generation[c]!] as const,
  );
  // A mix in % is shown as published (not re-scaled to 100); one in MWh as shares of its sum.
  const percent = unit === '%';
  const rest = percent ? restOf(generation) : 0;
  if (rest > 0.05) entries.push([REST, rest]);
  const total = percent ? 100 : entries.reduce((sum, [, v]) => sum + v, 0) || 1;
  entries.sort((a, b) => b[1] - a[1]);
  return el(
    'div',
    { class: 'current-mix' },
    el('p', {
      text: `At ${fmtUtc(Date.parse(point.ts) / 1000)}: ${fmtValue(point.renewable_pct)} % renewable, ${fmtValue(point.low_carbon_pct)} % low-carbon.`,
    }),
    el(
      'ul',
      { class: 'mix-bars' },
      ...entries.map(([category, value]) => {
        const pct = (value / total) * 100;
        return el(
          'li',
          {},
          el('span', { class: 'mix-name', text: label(category) }),
          el(
            'span',
            { class: 'bar-track', 'aria-hidden': 'true' },
            el('span', {
              class: 'bar',
              style: `width:${Math.min(100, pct).toFixed(1)}%;background:${CATEGORY_COLOURS[category] ?? REST_COLOUR}`,
            }),
          ),
          el('span', { class: 'mix-pct', text: `${fmtValue(pct)} %` }),
        );
      }),
    ),
  );
}

function heatmap(points: Point[]): HTMLElement {
  const cells = new Map<string, { sum: number; n: number }>();
  const months = new Set<string>();
  for (const p of points) {
    const d = new Date(p.t * 1000);
    const month = d.toISOString().slice(0, 7);
    months.add(month);
    const key = `${month}|${d.getUTCHours()}`;
    const cell = cells.get(key) ?? { sum: 0, n: 0 };
    cell.sum += p.v;
    cell.n += 1;
    cells.set(key, cell);
  }
  const hours = Array.from({ length: 24 }, (_, h) => h);
  const table = el(
    'table',
    { class: 'heatmap', 'aria-labelledby': 'heatmap-caption' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col', text: 'Month' }),
        ...hours.map((h) => el('th', { scope: 'col', text: String(h).padStart(2, '0') })),
      ),
    ),
    el(
      'tbody',
      {},
      ...[...months].sort().map((month) =>
        el(
          'tr',
          {},
          el('th', { scope: 'row', text: month }),
          ...hours.map((h) => {
            const cell = cells.get(`${month}|${h}`);
            if (!cell) return el('td', { class: 'empty', text: '–' });
            const mean = cell.sum / cell.n;
            const bg = colourFor(mean);
            return el('td', {
              style: `background:${bg};color:${textOn(bg)}`,
              text: String(Math.round(mean)),
            });
          }),
        ),
      ),
    ),
  );
  // The caption stays outside the scrolling box: it does not scroll away with the columns.
  return el(
    'div',
    {},
    el('p', {
      class: 'heatmap-caption',
      id: 'heatmap-caption',
      text: 'Mean intensity by month (rows) and hour of day, UTC (columns), gCO2eq/kWh',
    }),
    el(
      'div',
      {
        class: 'table-wrap',
        tabindex: '0',
        role: 'region',
        'aria-label': 'Heatmap of the last year',
      },
      table,
    ),
  );
}

function csvOf(series: Series[], forecast: Forecast | null): string {
  const rows = ['zone,ts,gco2eq_kwh,method,kind,p10,p90'];
  for (const s of series) {
    for (const p of s.points) {
      rows.push(
        `${s.zone},${new Date(p.t * 1000).toISOString().replace('.000Z', 'Z')},${p.v},${p.method},actual,,`,
      );
    }
  }
  for (const f of forecast?.data ?? []) {
    rows.push(
      `${forecast!.zone},${f.ts},${f.gco2eq_kwh},${forecast!.model},forecast,${f.p10 ?? ''},${f.p90 ?? ''}`,
    );
  }
  return rows.join('\n') + '\n';
}

/** Why production values stand where consumption values were asked for, in one calm line. */
function accountingNotes(
  zone: string,
  accounting: Accounting,
  refused: boolean,
  newestInstead: boolean,
): HTMLElement[] {
  if (accounting === 'production') return [];
  if (refused) return [missing(NO_FLOWS)];
  if (newestInstead) {
    const why = zone === 'GB' ? NO_GB_SERIES : `${zone} has no consumption value yet`;
    return [missing(`Production values: ${why}.`)];
  }
  return [];
}

/** The newest traced hour: its flows per neighbour, what was consumed; then the consumed mix over time. */
function consumedSection(
  zone: string,
  traced: {
    value: { unit: string; data: TracedMixPoint[] } | null;
    problem: string | null;
  },
  hours: number,
): HTMLElement {
  const section = el(
    'section',
    { class: 'panel', 'aria-labelledby': 'consumed-title' },
    el('h2', { id: 'consumed-title', text: 'Consumed mix and cross-border flows' }),
  );
  const points = traced.value?.data ?? [];
  const newest = points[points.length - 1];
  if (traced.problem) section.append(missing(traced.problem));
  else if (!newest) section.append(missing(`No consumed mix of ${zone} in this window.`));
  else {
    section.append(flowsPicture(zone, newest));
    if (newest.estimated_borders.length > 0)
      section.append(
        el('p', {
          class: 'hint',
          text: `Estimated flows (held at their value of the previous hours until published): ${newest.estimated_borders.join(', ')}.`,
        }),
      );
    section.append(el('h3', { text: 'Consumed mix' }), currentMix(consumedMix(newest), 'MWh'));
    if (newest.estimated_pct > 0)
      section.append(
        el('p', {
          class: 'hint',
          text: `${fmtValue(newest.estimated_pct)} % imported from neighbours that publish no hourly mix, counted at their annual intensity.`,
        }),
      );
    if (hours > MIX_MAX_HOURS)
      section.append(el('p', { class: 'hint', text: 'The mix chart shows the last 30 days.' }));
    section.append(mixChart(zone, 'MWh', points.map(consumedMix), 'Consumed mix'));
  }
  return section;
}

// The id of the control to focus once the next zone page is drawn (its old one went away).
let refocus: string | null = null;

/** The forecast's horizon, no longer than the range shown: it would stretch a short chart. */
const horizonFor = (hours: number) => (hours <= 24 ? 24 : hours <= 24 * 7 ? 48 : 72);

/** "Germany (DE-LU bidding zone) · DE", not "Germany (DE-LU bidding zone) (DE)". */
const zoneTitle = (name: string, code: string) =>
  name.includes('(') ? `${name} · ${code}` : `${name} (${code})`;

const settle = <T>(promise: Promise<T>) =>
  promise.then(
    (value) => ({ value, problem: null }),
    (error: Error) => ({ value: null, problem: error.message }),
  );

export async function renderZone(
  target: HTMLElement,
  route: Route,
  shared: Shared,
  isCurrent: () => boolean,
  show: () => void,
): Promise<void> {
  const zones = await shared.zones;
  const byCode = new Map(zones.map((z) => [z.zone, z]));
  const zone = byCode.get(route.zone.toUpperCase());
  if (!zone) {
    target.replaceChildren(
      el('h1', { text: 'Unknown zone' }),
      missing(`There is no zone "${route.zone}". The 45 zones are on the first page.`),
      el('p', {}, el('a', { href: '#/', text: 'Back to all zones' })),
    );
    return;
  }
  const { params, basis, accounting } = route;
  const asked = params.get('range');
  const range: RangeKey = asked && asked in RANGES ? (asked as RangeKey) : '7d';
  const askedCompare = (params.get('compare') ?? '')
    .split(',')
    .map((code) => code.trim().toUpperCase())
    .filter((code) => code !== '');
  const unknownCompare = askedCompare.filter((code) => !byCode.has(code));
  const compare = askedCompare
    .filter((code, i, all) => byCode.has(code) && code !== zone.zone && all.indexOf(code) === i)
    .slice(0, MAX_ZONES - 1);
  const shown = [zone, ...compare.map((code) => byCode.get(code)!)];
  const path = `/zone/${zone.zone}`;
  const go = (changes: Record<string, string | null>) => {
    location.hash = hrefWith(path, params, changes);
  };

  const noValues: Values = { readings: [], consumed: new Set(), refused: false };
  const [values, features, index, levels] = await Promise.all([
    valuesOf(basis, accounting).catch(() => noValues),
    shared.features,
    shared.index,
    shared.features.then((served) =>
      served.level ? levelsOf(basis, accounting).catch(() => null) : null,
    ),
  ]);
  const newest = values.readings.find((r) => r.zone === zone.zone);
  // Consumption values where asked for and served; a server without them (FLOWS=off) is asked
  // for production values only.
  const counted: Accounting = values.refused ? 'production' : accounting;
  const consumptionShown = counted === 'consumption';
  // The window ends with the zone's newest reading (US data lag a day), not at the clock.
  const toMs =
    (newest ? Date.parse(newest.ts) : Math.floor(Date.now() / HOUR_MS) * HOUR_MS) + HOUR_MS;
  const hours = RANGES[range].hours;
  const fromMs = toMs - hours * HOUR_MS;
  const yearFrom = toMs - RANGES['1y'].hours * HOUR_MS;
  const mixFrom = toMs - Math.min(hours, MIX_MAX_HOURS) * HOUR_MS;

  // The year of the heatmap is the longest read (two pages or more): the page is drawn without
  // waiting for it, and the heatmap, at the bottom, is filled in when it arrives.
  // A zone is asked for consumption values only when it has some (GB never has: no 404 asked for).
  const countedFor = (code: string): Accounting =>
    consumptionShown && values.consumed.has(code) ? 'consumption' : 'production';
  const historyOf = (code: string, from: number) =>
    settle(api.history(code, from, toMs, basis, countedFor(code)));
  const year = range === '1y' ? null : historyOf(zone.zone, yearFrom);
  const loading = Promise.all([
    Promise.all(shown.map((z) => historyOf(z.zone, fromMs))),
    features.forecast
      ? settle(api.forecast(zone.zone, basis, horizonFor(hours)))
      : Promise.resolve(null),
    settle(api.mix(zone.zone, mixFrom, toMs)),
    countedFor(zone.zone) === 'consumption'
      ? settle(api.tracedMix(zone.zone, mixFrom, toMs))
      : Promise.resolve(null),
  ]);

  // Heading and controls.
  const rangeGroup = el('fieldset', { class: 'segmented' }, el('legend', { text: 'Range' }));
  for (const [key, { label: text }] of Object.entries(RANGES)) {
    const input = el('input', { type: 'radio', name: 'range', value: key, id: `range-${key}` });
    input.checked = key === range;
    input.addEventListener(
      'change',
      () => input.checked && go({ range: key === '7d' ? null : key }),
    );
    rangeGroup.append(el('label', { for: `range-${key}` }, input, text));
  }
  const compareBox = el('div', { class: 'compare' });
  if (compare.length > 0) {
    compareBox.append(
      el('span', { text: 'Compared with: ' }),
      ...compare.map((code) => {
        const button = el('button', {
          type: 'button',
          class: 'chip',
          'aria-label': `Stop comparing with ${code}`,
          text: `${code} ✕`,
        });
        button.addEventListener('click', () => {
          const rest = compare.filter((c) => c !== code);
          // The chip goes away with the redraw: the focus goes to the zone picker, not to BODY.
          refocus = 'compare-zone';
          go({ compare: rest.length ? rest.join(',') : null });
        });
        return button;
      }),
    );
  }
  if (shown.length < MAX_ZONES) {
    const select = el(
      'select',
      { id: 'compare-zone' },
      el('option', { value: '', text: 'choose a zone' }),
    );
    for (const z of zones) {
      if (!shown.includes(z))
        select.append(el('option', { value: z.zone, text: `${z.zone}: ${z.name}` }));
    }
    const add = el('button', { type: 'button', id: 'compare-add', text: 'Compare' });
    add.addEventListener('click', () => {
      if (select.value) go({ compare: [...compare, select.value].join(',') });
    });
    compareBox.append(
      el('label', { for: 'compare-zone', text: 'Add a zone to the chart: ' }),
      select,
      add,
    );
  } else {
    compareBox.append(
      el('span', { class: 'hint', text: ` (up to ${MAX_ZONES} zones on one chart)` }),
    );
  }

  const placed = newest && placedReading(levels, zone.zone, newest.ts);
  const newestInstead = consumptionShown && newest !== undefined && !values.consumed.has(zone.zone);
  const value = newest
    ? el(
        'p',
        {
          class: 'zone-now',
          style: `--bg:${colourFor(newest.gco2eq_kwh)};--fg:${textOn(colourFor(newest.gco2eq_kwh))}`,
        },
        el('strong', { text: fmtValue(newest.gco2eq_kwh) }),
        ' gCO2eq/kWh',
        consumptionShown && (newestInstead ? ' (production)' : ' consumed'),
        placed && ' ',
        placed && levelChip(placed, zone.zone),
        `, newest published: ${fmtUtc(Date.parse(newest.ts) / 1000)}, ${fmtAge((Date.now() - Date.parse(newest.ts)) / 3_600_000)} old`,
      )
    : missing(`No reading of ${zone.zone} yet on this basis.`);
  // What the word means, or why there is none (a zone with under 7 days of history).
  const levelNote =
    newest &&
    levels &&
    el('p', {
      class: 'hint level-note',
      text: placed
        ? `Level ${levelWord(placed.level)}: at percentile ${placed.percentile} of ${zone.zone}'s own values of the last ${levels.window_days} days (${levelBands(levels.thresholds)}).`
        : `No level yet: ${levels.data.find((entry) => entry.zone === zone.zone)?.note ?? `the level of ${zone.zone}'s newest reading is not known yet.`}`,
    });

  // The heading, the newest value with its level and the controls while the charts' data travel;
  // the sections below are added under them (nothing drawn moves).
  target.replaceChildren(
    el(
      'p',
      { class: 'crumbs' },
      el('a', { href: hrefWith('/', new URLSearchParams(), kept(route)), text: '← All zones' }),
    ),
    el('h1', { text: zoneTitle(zone.name, zone.zone) }),
    value,
    ...(levelNote ? [levelNote] : []),
    el(
      'div',
      { class: 'controls' },
      basisControl(basis, (next) => go(kept({ basis: next, accounting }))),
      accountingControl(accounting, (next) => go(kept({ basis, accounting: next }))),
      rangeGroup,
    ),
    ...accountingNotes(zone.zone, accounting, values.refused, newestInstead),
    compareBox,
  );
  show();
  if (refocus) {
    const id = refocus;
    refocus = null;
    document.getElementById(id)?.focus();
  }

  const [histories, forecast, mix, traced] = await loading;
  if (!isCurrent()) return;
  // A year that came with the rest is drawn with it: one layout, not a second one at once.
  const yearNow = year && (await Promise.race([year, Promise.resolve(undefined)]));

  const series: Series[] = shown.map((z, i) => ({
    zone: z.zone,
    points: histories[i]!.value ?? [],
    productionInstead: consumptionShown && countedFor(z.zone) === 'production',
  }));
  const problems = histories.flatMap((h) => (h.problem ? [h.problem] : []));

  const download = el('button', {
    type: 'button',
    id: 'download-csv',
    text: 'Download the chart as CSV',
  });
  download.addEventListener('click', () => {
    const blob = new Blob([csvOf(series, forecast?.value ?? null)], { type: 'text/csv' });
    const link = el('a', {
      href: URL.createObjectURL(blob),
      download: `gridco2-${shown.map((z) => z.zone).join('_')}-${range}-${basis}${consumptionShown ? '-consumption' : ''}.csv`,
    });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  });

  // The intensity section, with what is missing in words.
  const intensity = el(
    'section',
    { class: 'panel', 'aria-labelledby': 'intensity-title' },
    el('h2', {
      id: 'intensity-title',
      text: `Intensity${consumptionShown ? ' of consumption' : ''}, last ${RANGES[range].label}`,
    }),
  );
  for (const problem of problems) intensity.append(missing(problem));
  if (unknownCompare.length > 0)
    intensity.append(
      missing(
        `Not compared: there is no zone ${unknownCompare.map((c) => `"${c}"`).join(', ')} (the 45 zones are on the first page).`,
      ),
    );
  const instead = series.filter((s) => s.productionInstead).map((s) => s.zone);
  if (instead.length > 0 && !newestInstead)
    intensity.append(
      missing(
        `Production values for ${instead.join(', ')}, marked so: ${instead.includes('GB') ? NO_GB_SERIES : 'no consumption values yet'}.`,
      ),
    );
  const empty = series.filter((s) => s.points.length === 0).map((s) => s.zone);
  if (empty.length > 0)
    intensity.append(
      missing(
        `No readings in this window for ${empty.join(', ')} on the ${BASIS_LABEL[basis].toLowerCase()} basis.`,
      ),
    );
  if (!features.forecast) {
    intensity.append(
      missing('Forecasts not available yet: this server does not serve /v1/intensity/forecast.'),
    );
  } else if (forecast?.problem) {
    intensity.append(missing(`No forecast: ${forecast.problem}`));
  } else if (forecast?.value && forecast.value.count === 0) {
    intensity.append(
      missing(
        `No forecast for ${zone.zone}: ${forecast.value.note ?? 'the model has too little history for this zone.'}`,
      ),
    );
  } else if (forecast?.value) {
    const computed = `Forecast${consumptionShown ? ' of production values (consumption values are not forecast)' : ''} by ${forecast.value.model}, computed ${fmtUtc(Date.parse(forecast.value.generated_at) / 1000)}`;
    const banded = forecast.value.data.some((f) => f.p10 !== null && f.p90 !== null);
    intensity.append(
      el('p', {
        class: 'hint',
        id: 'forecast-note',
        text: banded
          ? `${computed}; the band spans P10 to P90 of its measured errors.`
          : `${computed}. No P10-P90 band yet: the forecast's errors have not been measured long enough.`,
      }),
    );
  }
  if (series.some((s) => s.points.length > 0) || (forecast?.value?.count ?? 0) > 0) {
    intensity.append(intensityChart(series, forecast?.value ?? null, counted));
  }
  intensity.append(el('div', { class: 'actions' }, download));

  const mixSection = el(
    'section',
    { class: 'panel', 'aria-labelledby': 'mix-title' },
    el('h2', { id: 'mix-title', text: 'Generation mix' }),
  );
  if (mix.problem) mixSection.append(missing(mix.problem));
  else if (!mix.value || mix.value.data.length === 0)
    mixSection.append(missing(`No generation mix of ${zone.zone} published in this window.`));
  else {
    if (hours > MIX_MAX_HOURS)
      mixSection.append(el('p', { class: 'hint', text: 'The mix chart shows the last 30 days.' }));
    mixSection.append(
      mixChart(zone.zone, mix.value.unit, mix.value.data),
      el('h3', { text: 'Current mix' }),
      currentMix(mix.value.data[mix.value.data.length - 1]!, mix.value.unit),
    );
  }

  const heatTitle = el('h2', {
    id: 'heat-title',
    text: 'When is it greenest? Hour of day by month',
  });
  const heat = el('section', { class: 'panel', 'aria-labelledby': 'heat-title' }, heatTitle);
  const yearOf = (read: { value: Point[] | null; problem: string | null }) =>
    fillHeat(read.value ?? [], read.problem);
  const fillHeat = (yearPoints: Point[], problem: string | null) => {
    if (problem) heat.replaceChildren(heatTitle, missing(problem));
    else if (yearPoints.length === 0)
      heat.replaceChildren(heatTitle, missing(`No readings of ${zone.zone} in the last year.`));
    else
      heat.replaceChildren(
        heatTitle,
        heatmap(yearPoints),
        el('p', { class: 'hint', text: `From ${yearPoints.length} readings of the last year.` }),
      );
  };
  if (year === null) fillHeat(series[0]!.points, histories[0]!.problem);
  else if (yearNow) yearOf(yearNow);
  else heat.append(el('p', { class: 'hint', text: `Reading the last year of ${zone.zone}…` }));

  const about = el(
    'section',
    { class: 'panel', 'aria-labelledby': 'about-title' },
    el('h2', { id: 'about-title', text: 'Method and data' }),
    el('p', { text: `${ACCOUNTING_EXPLAINED[counted]} ${BASIS_EXPLAINED[basis]}` }),
    el('p', {
      class: 'attribution',
      text: index?.attribution ?? 'Generation data: ENTSO-E, the US EIA and NESO (CC BY 4.0).',
    }),
  );

  const consumed = traced && consumedSection(zone.zone, traced, hours);
  target.append(intensity, ...(consumed ? [consumed] : []), mixSection, heat, about);
  if (year === null || yearNow) return;
  const read = await year;
  if (isCurrent()) yearOf(read);
}
