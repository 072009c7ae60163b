import {
  type Accounting,
  api,
  type Basis,
  levelsOf,
  type Features,
  HOUR_MS,
  type Levels,
  type Point,
  type Reading,
  type Status,
  type Values,
  valuesOf,
  type Window,
  type Zone,
} from './api.js';
import {
  ACCOUNTING_EXPLAINED,
  NO_FLOWS,
  NO_GB_SERIES,
  BASIS_EXPLAINED,
  el,
  fmtAge,
  fmtHourUtc,
  fmtValue,
  levelBands,
  levelChip,
  missing,
  type Placed,
  placedReading,
  SOURCE_GROUPS,
} from './format.js';
import {
  accountingControl,
  basisControl,
  hrefWith,
  kept,
  type Route,
  type Shared,
} from './controls.js';
import { colourFor, LEGEND_GRADIENT, LEGEND_TICKS, SCALE_MAX, textOn } from './scale.js';

/**
 * The first screen answers "where and when is it cleanest": the five zones with the cleanest
 * newest published hour and, once forecasts exist, the five cleanest hours ahead. Then every
 * zone as a tile on one colour scale, grouped by continent, with its value and its level word
 * (where it stands in the zone's own last 30 days, `/v1/intensity/level`), the age of that value
 * (stale past the /v1/status threshold of its source), a 24-hour sparkline and its greenest hour
 * of the next 24; and a ranking with each value's age, since the sources publish with different
 * delays. Seven requests in all, whatever the number of zones.
 */

const SVG = 'http://www.w3.org/2000/svg';

// Exports run one after the other: the API allows two at once per address.
let exportQueue: Promise<unknown> = Promise.resolve();
const queued = <T>(task: () => Promise<T>): Promise<T> => {
  const run = exportQueue.then(task, task);
  exportQueue = run.catch(() => undefined);
  return run;
};

const sparkCache = new Map<string, Promise<Map<string, Point[]>>>();

/**
 * The 24 hours before each zone's newest reading: one export per group of similar lag, and per
 * accounting shown (a zone without consumption values keeps its production line).
 */
function sparklines(zones: Zone[], values: Values, basis: Basis): Promise<Map<string, Point[]>> {
  const key = `${basis}|${[...values.consumed].join(',')}`;
  const cached = sparkCache.get(key);
  if (cached) return cached;
  const newest = new Map(values.readings.map((r) => [r.zone, Date.parse(r.ts)]));
  const counted = (zone: Zone): Accounting =>
    values.consumed.has(zone.zone) ? 'consumption' : 'production';
  // US data lag a day behind Europe's: asking both for one window would double Europe's rows.
  const groups = [
    zones.filter((z) => z.source !== 'us-agency'),
    zones.filter((z) => z.source === 'us-agency'),
  ].flatMap((group) =>
    (['consumption', 'production'] as const)
      .map((accounting) => ({
        accounting,
        zones: group.filter((z) => newest.has(z.zone) && counted(z) === accounting),
      }))
      .filter((part) => part.zones.length > 0),
  );
  const loading = Promise.all(
    groups.map(({ accounting, zones: members }) => {
      const from = Math.min(...members.map((z) => newest.get(z.zone)!)) - 24 * HOUR_MS;
      const codes = members.map((z) => z.zone);
      return queued(() => api.export(codes, from, basis, accounting));
    }),
  ).then((maps) => new Map(maps.flatMap((map) => [...map])));
  loading.catch(() => sparkCache.delete(key));
  sparkCache.set(key, loading);
  return loading;
}

function sparkline(points: Point[] | undefined, newestTs: number, zone: string): Element {
  if (points === undefined) return el('span', { class: 'spark-missing', 'aria-hidden': 'true' });
  const recent = points.filter((p) => p.t > newestTs - 24 * 3600 && p.t <= newestTs);
  if (recent.length < 2) return el('span', { class: 'spark-missing', text: 'no 24 h history' });
  const values = recent.map((p) => p.v);
  const min = Math.min(...values);
  const max = Math.max(...values);
  const span = max - min || 1;
  const start = newestTs - 24 * 3600;
  const coords = recent
    .map(
      (p) =>
        `${(((p.t - start) / (24 * 3600)) * 100).toFixed(1)},${(28 - ((p.v - min) / span) * 26).toFixed(1)}`,
    )
    .join(' ');
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 100 30');
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('class', 'spark');
  svg.setAttribute('role', 'img');
  svg.setAttribute(
    'aria-label',
    `${zone}, last 24 hours: from ${fmtValue(min)} to ${fmtValue(max)} gCO2eq/kWh`,
  );
  const line = document.createElementNS(SVG, 'polyline');
  line.setAttribute('points', coords);
  line.setAttribute('vector-effect', 'non-scaling-stroke');
  svg.append(line);
  return svg;
}

interface TileData {
  readonly zone: Zone;
  readonly reading: Reading | undefined;
  readonly placed: Placed | undefined;
  readonly ageHours: number;
  readonly stale: boolean;
  /** Whether a greenest hour is to come: its lines are held open until it does. */
  readonly greenPending: boolean;
  /** A production value shown where consumption values were asked for. */
  readonly productionInstead: boolean;
}

/** A tile's parts drawn once its sparkline and greenest hour have arrived. */
interface Slots {
  readonly newestTs: number;
  readonly spark: Element;
  readonly green: Element | false;
}

/** "Greenest tomorrow" / "04:00 UTC: 146", on two lines: one is too narrow. */
const greenLine = (green: Window): HTMLElement =>
  el(
    'span',
    { class: 'green' },
    `Greenest ${dayOf(green.start)}`,
    el('br'),
    `${fmtHourUtc(green.start)} UTC: ${fmtValue(green.gco2eq_kwh)}`,
  );

function tile(data: TileData, route: Route, slots: Map<string, Slots>): HTMLElement {
  const { zone, reading } = data;
  const href = hrefWith(`/zone/${zone.zone}`, new URLSearchParams(), kept(route));
  if (!reading) {
    return el(
      'li',
      {},
      el(
        'a',
        { class: 'tile tile-empty', href, 'data-zone': zone.zone },
        el('span', { class: 'code', text: zone.zone }),
        el('span', { class: 'name', text: zone.name }),
        el('span', { class: 'empty-note', text: 'No data yet on this basis.' }),
      ),
    );
  }
  const background = colourFor(reading.gco2eq_kwh);
  const a = el(
    'a',
    {
      class: 'tile',
      href,
      'data-zone': zone.zone,
      style: `--bg:${background};--fg:${textOn(background)}`,
    },
    // Code and value on lines of their own: a long code (US-ERCOT) never pushes the value to a
    // second line, and the name wraps instead of being cut.
    el('span', { class: 'code', text: zone.zone }),
    el(
      'span',
      { class: 'value' },
      el('strong', { class: 'number', text: fmtValue(reading.gco2eq_kwh) }),
      el('span', { class: 'unit', text: ' g' }),
      el('span', { class: 'sr-only', text: 'CO2eq per kWh' }),
      data.placed && ' ',
      data.placed && levelChip(data.placed, zone.zone),
    ),
    el('span', { class: 'name', text: zone.name }),
    el(
      'span',
      { class: 'age' },
      `${fmtAge(data.ageHours)} old`,
      data.stale && el('span', { class: 'badge', text: 'stale' }),
      data.productionInstead &&
        el('span', {
          class: 'badge',
          title: 'No consumption value: production value shown',
          text: 'production',
        }),
    ),
  );
  const newestTs = Date.parse(reading.ts) / 1000;
  // Room held for the sparkline and the greenest hour: the tiles do not grow when they arrive.
  const spark = sparkline(undefined, newestTs, zone.zone);
  const green =
    data.greenPending &&
    el('span', { class: 'green', 'aria-hidden': 'true' }, '\u00a0', el('br'), '\u00a0');
  a.append(spark);
  if (green) a.append(green);
  slots.set(zone.zone, { newestTs, spark, green });
  return el('li', {}, a);
}

const zoneHref = (zone: string, route: Route): string =>
  hrefWith(`/zone/${zone}`, new URLSearchParams(), kept(route));

/**
 * The legend: the scale with labelled ticks and the words at its ends, so it reads without
 * knowing the colours.
 */
function legend(): HTMLElement {
  return el(
    'div',
    { class: 'legend' },
    el('span', { class: 'legend-end', text: 'cleaner' }),
    el(
      'span',
      { class: 'legend-scale' },
      el('span', {
        class: 'legend-bar',
        style: `background:${LEGEND_GRADIENT}`,
        'aria-hidden': 'true',
      }),
      el(
        'span',
        { class: 'legend-ticks' },
        ...LEGEND_TICKS.map((tick) =>
          el('span', {
            style: `left:${((tick / SCALE_MAX) * 100).toFixed(1)}%`,
            text: tick === SCALE_MAX ? `${tick}+` : String(tick),
          }),
        ),
      ),
    ),
    el('span', { class: 'legend-end', text: 'dirtier' }),
  );
}

const TOP = 5;

/** Where it is cleanest (newest published values, with their ages) and when (forecasts). */
function answer(
  ranked: readonly (TileData & { reading: Reading })[],
  windows: readonly Window[],
  scheduleServed: boolean,
  partial: boolean,
  route: Route,
): HTMLElement {
  const where = el(
    'div',
    { class: 'answer-part' },
    el('h2', { text: 'Cleanest newest published values' }),
    el(
      'ol',
      {},
      ...ranked.slice(0, TOP).map((t) =>
        el(
          'li',
          {},
          el('a', { href: zoneHref(t.zone.zone, route), text: t.zone.zone }),
          // Left out on a phone, where the line must stay one line (the tiles name every zone).
          el('span', { class: 'answer-name', text: ` ${t.zone.name}` }),
          ': ',
          el('strong', { text: `${fmtValue(t.reading.gco2eq_kwh)} g` }),
          el('span', { class: 'answer-age', text: `, ${fmtAge(t.ageHours)} old` }),
        ),
      ),
    ),
  );
  const ahead = [...windows].sort((a, b) => a.gco2eq_kwh - b.gco2eq_kwh).slice(0, TOP);
  const when = el(
    'div',
    { class: 'answer-part' },
    el('h2', { text: 'Cleanest hours ahead, forecast' }),
    ahead.length > 0
      ? el(
          'ol',
          {},
          ...ahead.map((w) =>
            el(
              'li',
              {},
              el('a', { href: zoneHref(w.zone, route), text: w.zone }),
              ` ${dayOf(w.start)} ${fmtHourUtc(w.start)} UTC: `,
              el('strong', { text: `${fmtValue(w.gco2eq_kwh)} g` }),
            ),
          ),
        )
      : partial && scheduleServed
        ? // As high as the five hours to come: what is below does not move when they do.
          el('p', {
            class: 'answer-none answer-pending',
            text: 'Finding the greenest hour of each zone…',
          })
        : el('p', { class: 'answer-none', text: 'No forecasts yet, so no hours ahead.' }),
  );
  return el(
    'section',
    { class: 'answer', 'aria-label': 'Where and when it is cleanest' },
    where,
    when,
  );
}

/** "today" or "tomorrow" (UTC days) for a window's start, else its date. */
function dayOf(iso: string): string {
  const day = Math.floor(Date.parse(iso) / 86_400_000) - Math.floor(Date.now() / 86_400_000);
  return day === 0 ? 'today' : day === 1 ? 'tomorrow' : iso.slice(0, 10);
}

export async function renderOverview(
  target: HTMLElement,
  route: Route,
  shared: Shared,
  isCurrent: () => boolean,
  show: () => void,
): Promise<void> {
  const { basis, accounting } = route;
  // The level words come with the values (the page preloads both): no word pops in later.
  const noLevels: FirstData['levelResult'] = { value: null, problem: null };
  const levels = shared.features.then((features) =>
    features.level
      ? levelsOf(basis, accounting).then(
          (value) => ({ value, problem: null }),
          (error: Error) => ({ value: null, problem: error.message }),
        )
      : noLevels,
  );
  const [zones, values, features, levelResult] = await Promise.all([
    shared.zones,
    valuesOf(basis, accounting),
    shared.features,
    levels,
  ]);
  const statusResult = await shared.status.then(
    (status) => ({ status, problem: null }),
    (error: Error) => ({ status: null, problem: error.message }),
  );
  // The tiles at once with their values; sparklines and greenest hours when they arrive.
  const data = { zones, values, features, statusResult, levelResult };
  const drawn = draw(target, route, data);
  show();
  const [spark, schedule] = await Promise.all([
    sparklines(zones, values, basis).then(
      (map) => ({ map, problem: null }),
      (error: Error) => ({ map: new Map<string, Point[]>(), problem: error.message }),
    ),
    features.schedule
      ? api.schedule(basis).then(
          (value) => ({ options: value.options ?? [], problem: null }),
          (error: Error) => ({ options: [] as readonly Window[], problem: error.message }),
        )
      : Promise.resolve({ options: [] as readonly Window[], problem: null }),
  ]);
  if (!isCurrent()) return;
  complete(target, drawn, data.features, spark, schedule, route);
}

/** What the first draw leaves to fill in: the tiles' slots, the answer, the notes. */
interface Drawn {
  readonly slots: Map<string, Slots>;
  readonly ranked: readonly (TileData & { reading: Reading })[];
  readonly answer: HTMLElement;
  readonly notes: HTMLElement;
}

/**
 * The sparklines and greenest hours put into the tiles drawn first, in place: the rest of the
 * page (about a thousand elements) is not built again, and the focus stays where it is.
 */
function complete(
  target: HTMLElement,
  drawn: Drawn,
  features: Features,
  spark: { map: Map<string, Point[]>; problem: string | null },
  schedule: { options: readonly Window[]; problem: string | null },
  route: Route,
): void {
  const greens = new Map(schedule.options.map((w) => [w.zone, w]));
  for (const [zone, slots] of drawn.slots) {
    const line = sparkline(spark.map.get(zone) ?? [], slots.newestTs, zone);
    slots.spark.replaceWith(line);
    const green = greens.get(zone);
    if (slots.green && green) slots.green.replaceWith(greenLine(green));
    else if (slots.green) slots.green.remove();
  }
  const answered = answer(drawn.ranked, schedule.options, features.schedule, false, route);
  drawn.answer.replaceWith(answered);
  if (spark.problem) drawn.notes.append(missing(`No sparklines: ${spark.problem}`));
  if (features.schedule && schedule.problem) {
    drawn.notes.append(missing(`No greenest hours: ${schedule.problem}`));
  }
  delete target.dataset['partial'];
}

/** What the first draw waits for: the values, the zones, and what says how to read them. */
interface FirstData {
  readonly zones: Zone[];
  readonly values: Values;
  readonly features: Features;
  readonly statusResult: { status: Status | null; problem: string | null };
  readonly levelResult: { value: Levels | null; problem: string | null };
}

function draw(
  target: HTMLElement,
  route: Route,
  { zones, values, features, statusResult, levelResult }: FirstData,
): Drawn {
  const { basis, accounting } = route;
  const now = Date.now();
  const byZone = new Map(values.readings.map((r) => [r.zone, r]));
  const consumptionShown = accounting === 'consumption' && !values.refused;
  const thresholds = new Map(
    (statusResult.status?.sources ?? []).map((s) => [s.source, s.stale_after_hours]),
  );
  const tiles: TileData[] = zones.map((zone) => {
    const reading = byZone.get(zone.zone);
    const ageHours = reading ? (now - Date.parse(reading.ts)) / HOUR_MS : Infinity;
    const threshold = thresholds.get(zone.source);
    return {
      zone,
      reading,
      placed: reading && placedReading(levelResult.value, zone.zone, reading.ts),
      ageHours,
      stale: reading !== undefined && threshold !== undefined && ageHours > threshold,
      greenPending: features.schedule,
      productionInstead:
        consumptionShown && reading !== undefined && !values.consumed.has(zone.zone),
    };
  });

  const controls = el(
    'div',
    { class: 'controls' },
    basisControl(basis, (next) => {
      location.hash = hrefWith('/', route.params, kept({ basis: next, accounting }));
    }),
    accountingControl(accounting, (next) => {
      location.hash = hrefWith('/', route.params, kept({ basis, accounting: next }));
    }),
    legend(),
  );
  const notes = el(
    'div',
    { class: 'notes' },
    el('p', { text: `${ACCOUNTING_EXPLAINED[accounting]} ${BASIS_EXPLAINED[basis]}` }),
  );
  if (accounting === 'consumption') notes.append(...consumptionNotes(tiles, values, features));
  if (levelResult.value) {
    notes.append(
      el('p', {
        text: `The word after a value says where it stands within its own zone's last ${levelResult.value.window_days} days: ${levelBands(levelResult.value.thresholds)}.`,
      }),
    );
  } else if (levelResult.problem) notes.append(missing(`No level words: ${levelResult.problem}`));
  if (statusResult.problem)
    notes.append(missing(`Staleness cannot be judged: ${statusResult.problem}`));
  if (!features.schedule) {
    notes.append(
      missing(
        'Forecasts not available yet: this server does not serve forecasts, so the greenest hour of the next 24 is not shown.',
      ),
    );
  }
  target.dataset['partial'] = 'true';
  const absent = tiles.filter((t) => !t.reading).map((t) => t.zone.zone);
  if (absent.length > 0) {
    notes.append(missing(`No data yet on this basis for ${absent.join(', ')}.`));
  }

  const slots = new Map<string, Slots>();
  const groups = SOURCE_GROUPS.map(({ source, title }) => {
    const members = tiles.filter((t) => t.zone.source === source);
    const id = `group-${source}`;
    return el(
      'section',
      { class: 'group', 'aria-labelledby': id },
      el('h2', { id, text: `${title} (${members.length})` }),
      el('ul', { class: 'tiles' }, ...members.map((t) => tile(t, route, slots))),
    );
  });

  const ranked = tiles
    .filter((t): t is TileData & { reading: Reading } => t.reading !== undefined)
    .sort((a, b) => a.reading.gco2eq_kwh - b.reading.gco2eq_kwh);
  const ranking = el(
    'section',
    { class: 'ranking', 'aria-labelledby': 'ranking-title' },
    el('h2', { id: 'ranking-title', text: 'Ranking, greenest first' }),
    el('p', { class: 'ranking-note', text: 'Newest published value of each zone, and its age.' }),
    el(
      'ol',
      {},
      ...ranked.map((t) =>
        el(
          'li',
          {},
          el('a', { href: zoneHref(t.zone.zone, route), text: t.zone.zone }),
          el(
            'span',
            { class: 'bar-track', 'aria-hidden': 'true' },
            el('span', {
              class: 'bar',
              style: `width:${Math.min(100, (t.reading.gco2eq_kwh / SCALE_MAX) * 100).toFixed(1)}%;background:${colourFor(t.reading.gco2eq_kwh)}`,
            }),
          ),
          el('span', { class: 'rank-value', text: fmtValue(t.reading.gco2eq_kwh) }),
          el('span', { class: 'rank-age', text: `${fmtAge(t.ageHours)} old` }),
        ),
      ),
    ),
  );

  const answered = answer(ranked, [], features.schedule, true, route);
  target.replaceChildren(
    el('h1', {
      text: consumptionShown
        ? 'Newest published carbon intensity of consumption, gCO2eq/kWh'
        : 'Newest published carbon intensity, gCO2eq/kWh',
    }),
    answered,
    controls,
    notes,
    el('div', { class: 'overview' }, el('div', { class: 'groups' }, ...groups), ranking),
  );
  return { slots, ranked, answer: answered, notes };
}

/** What the consumption values leave out, each in one calm line. */
function consumptionNotes(
  tiles: readonly TileData[],
  values: Values,
  features: Features,
): HTMLElement[] {
  if (values.refused) {
    return [missing(NO_FLOWS)];
  }
  const notes: HTMLElement[] = [];
  const instead = tiles.filter((t) => t.productionInstead).map((t) => t.zone.zone);
  if (instead.includes('GB'))
    notes.push(missing(`Production value for GB, marked so: ${NO_GB_SERIES}.`));
  const waiting = instead.filter((zone) => zone !== 'GB');
  if (waiting.length > 0) {
    notes.push(
      missing(
        `Production values, marked so, for ${waiting.join(', ')}: no consumption value of theirs yet.`,
      ),
    );
  }
  if (features.schedule) {
    notes.push(
      el('p', {
        class: 'hint',
        text: "The forecasts (the hours ahead, each tile's greenest hour) are of production values: consumption values are not forecast.",
      }),
    );
  }
  return notes;
}
