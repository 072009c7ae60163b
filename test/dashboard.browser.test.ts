// Code run in the page (page.evaluate) is typed with the DOM.
/// <reference lib="dom" />
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from './support/built-cli.js';
import { chromiumForTests } from './support/chromium.js';

/**
 * The dashboard in a real browser: the headless Chromium shipped inside an npm package (or
 * CHROME_PATH's; see test/support/chromium.ts) driven by playwright-core, against `gridco2 demo`
 * started as a user starts it (the build: test/support/built-cli.ts, in an empty folder),
 * serving the page built by `npm run build` and synthetic data for all 45 zones, border flows included (FLOWS=on), from which the consumption series are
 * traced here into the demo's store once its backfill is done. Screenshots at 1280 and 360 px are
 * kept in test/artefacts/.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ARTEFACTS = join(ROOT, 'test/artefacts');
const BUILT = join(ROOT, 'dist/web/index.html');
// Enough history for the forecasts (7 days), so the greenest hours can be shown.
const DAYS = 9;

const cwd = mkdtempSync(join(tmpdir(), 'gridco2-dashboard-browser-'));
let child: ChildProcessWithoutNullStreams;
let output = '';
let url: string;
let browser: Browser;
const problems: string[] = [];

function waitForOutput(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout.off('data', check);
      resolve(match);
    };
    const timer = setTimeout(
      () => reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${output.slice(-3000)}`)),
      timeoutMs,
    );
    child.stdout.on('data', check);
    child.once('exit', () =>
      reject(new Error(`gridco2 demo exited before ${pattern}:\n${output.slice(-3000)}`)),
    );
    check();
  });
}

async function openPage(width: number): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  // Any console error or uncaught exception fails the suite (checked at the end).
  page.on('console', (message) => {
    if (message.type() === 'error')
      problems.push(`${width}px console: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => problems.push(`${width}px page error: ${error.message}`));
  return page;
}

/** Waits until the view has drawn (the shell marks <body> after each render). */
async function rendered(page: Page, view: string, after = 0): Promise<number> {
  await page.waitForFunction(
    ([name, previous]) =>
      document.body.dataset['view'] === name &&
      Number(document.body.dataset['ready'] ?? 0) > Number(previous),
    [view, after] as const,
    { timeout: 60_000 },
  );
  return Number(await page.evaluate(() => document.body.dataset['ready']));
}

/**
 * Where the server serves /v1/schedule, waits until it has forecasts to plan with (computed from
 * the stored history after the backfill): a 404 on the first screen would be a console error.
 */
async function untilForecastsServed(): Promise<void> {
  const index = (await (await fetch(`${url}/v1`)).json()) as Record<string, unknown>;
  if (!JSON.stringify(index).includes('/v1/schedule')) return;
  // Every zone's forecast: the page's hours ahead are the greenest of all of them. The forecasts
  // are prepared by a worker process below the server's priority, which waits on a busy machine.
  const deadline = Date.now() + 170_000;
  while (Date.now() < deadline) {
    const response = await fetch(`${url}/v1/schedule?zones=all&duration_minutes=60`);
    const body = (await response.json()) as { options?: unknown[] };
    if (response.status === 200 && body.options?.length === 45) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error('/v1/schedule never listed a window in every zone');
}

/**
 * Waits until the served levels reflect the backfilled history: the reading cache takes the last
 * chunks in at its next poll, and a level needs 7 days of them (null until then).
 */
async function untilLevelsServed(): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const response = await fetch(
      `${url}/v1/intensity/level?zones=all&horizon_hours=0&basis=lifecycle`,
    );
    const body = (await response.json()) as LevelBody;
    if (body.data.filter((entry) => entry.now.level !== null).length > 40) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('/v1/intensity/level never gave a level to more than 40 zones');
}

/**
 * Waits until the demo serves consumption values for every zone but GB: it traces them itself,
 * after its backfill of the flow graphs (the second phase of its backfill).
 */
async function consumptionServed(): Promise<void> {
  const deadline = Date.now() + 170_000;
  while (Date.now() < deadline) {
    const body = (await (
      await fetch(`${url}/v1/intensity/latest?accounting=consumption`)
    ).json()) as { data: unknown[] };
    if (body.data.length === 44) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error('/v1/intensity/latest?accounting=consumption never listed the 44 zones');
}

/** No tile cuts its code or name, and no value (number and unit) takes two lines. */
async function expectTilesWhole(page: Page): Promise<void> {
  const faults = await page.$$eval('a.tile[data-zone]', (tiles) =>
    tiles.flatMap((tile) => {
      const zone = tile.getAttribute('data-zone');
      const found: string[] = [];
      for (const part of Array.from(tile.querySelectorAll<HTMLElement>('.code, .name'))) {
        if (part.scrollWidth > part.clientWidth + 1) found.push(`${zone}: ${part.className} cut`);
      }
      const value = tile.querySelector<HTMLElement>('.value');
      if (value && value.scrollWidth > value.clientWidth + 1) found.push(`${zone}: value cut`);
      if (value) {
        const range = document.createRange();
        range.selectNodeContents(value);
        const tops = Array.from(range.getClientRects())
          .filter((rect) => rect.width > 0 && rect.height > 1)
          .map((rect) => rect.bottom);
        if (Math.max(...tops) - Math.min(...tops) > 8) found.push(`${zone}: value wraps`);
      }
      return found;
    }),
  );
  expect(faults).toEqual([]);
}

interface LevelBody {
  data: { zone: string; now: { ts: string; level: string | null; percentile: number | null } }[];
}

/**
 * The API's level word of each zone (`/v1/intensity/level`), read before and after `read`: a zone
 * whose newest reading changed meanwhile (a new hour published by the demo) is left out, so the
 * page is compared only with what the API said all along.
 */
async function apiLevelsAround<T>(
  query: string,
  read: () => Promise<T>,
): Promise<{ read: T; levels: Map<string, string | null> }> {
  const ask = async () =>
    ((await (await fetch(`${url}/v1/intensity/level?${query}`)).json()) as LevelBody).data;
  const before = await ask();
  const result = await read();
  const after = new Map((await ask()).map((entry) => [entry.zone, entry.now]));
  const levels = new Map<string, string | null>();
  for (const { zone, now } of before) {
    const later = after.get(zone);
    if (later?.ts === now.ts) levels.set(zone, now.level);
  }
  return { read: result, levels };
}

const tileValues = (page: Page) =>
  page.$$eval('a.tile[data-zone]', (tiles) =>
    Object.fromEntries(
      tiles.map((tile) => [
        tile.getAttribute('data-zone'),
        tile.querySelector('.number')?.textContent ?? null,
      ]),
    ),
  );

beforeAll(async () => {
  if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run npm run build first`);
  const chromiumUsed = await chromiumForTests();
  console.info(`dashboard browser test: ${chromiumUsed.origin}`);
  mkdirSync(ARTEFACTS, { recursive: true });
  child = spawn(process.execPath, [CLI, 'demo', '--days', String(DAYS)], {
    cwd,
    env: {
      PATH: process.env['PATH'] ?? '',
      PORT: '0',
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: '100000',
      FLOWS: 'on',
    },
  });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  url = (await waitForOutput(/"url":"(http[^"]+)".*"msg":"gridco2 serving"/, 120_000))[1]!;
  // Every zone current, and the history backfilled, before the page is opened.
  await waitForOutput(/45 of 45 zones current/, 120_000);
  await waitForOutput(/demo: backfill of \d+ days done/, 120_000);
  await untilForecastsServed();
  await untilLevelsServed();
  await consumptionServed();
  browser = await chromium.launch({
    executablePath: chromiumUsed.executablePath,
    env: chromiumUsed.env,
    args: [...chromiumUsed.args],
  });
});

afterAll(async () => {
  await browser?.close();
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(cwd, { recursive: true, force: true });
});

describe('the dashboard in Chromium', () => {
  let page: Page;

  it('shows 45 tiles grouped Europe / US / GB, a ranking, and lights the first screen', async () => {
    page = await openPage(1280);
    // The level word after each value is the API's level of that zone (the page's basis).
    const { read: words, levels } = await apiLevelsAround(
      'zones=all&horizon_hours=0&basis=lifecycle',
      async () => {
        await page.goto(`${url}/`);
        await rendered(page, 'overview');
        return page.$$eval('a.tile[data-zone]', (tiles) =>
          tiles.map((tile) => [
            tile.getAttribute('data-zone')!,
            tile.querySelector('.value .level')?.getAttribute('data-level') ?? null,
            tile.querySelector('.value .level')?.textContent ?? null,
          ]),
        );
      },
    );
    expect(await page.locator('a.tile[data-zone]').count()).toBe(45);
    // A zone whose 30-day window holds under 7 days has no level (null) and its tile no word;
    // the demo's 9 days give most zones one.
    expect(levels.size).toBeGreaterThan(40);
    expect([...levels.values()].filter((level) => level !== null).length).toBeGreaterThan(40);
    for (const [zone, level, text] of words) {
      if (!levels.has(zone!)) continue;
      const expected = levels.get(zone!) ?? null;
      expect(level, `${zone}'s level on its tile`).toBe(expected);
      if (expected === null) continue;
      expect(expected, `${zone}'s level`).toMatch(/^(very-low|low|moderate|high|very-high)$/);
      // Words people read ("very high"), after a hidden "level" for screen readers.
      expect(text, `${zone}'s level word`).toBe(`level ${expected.replace('-', ' ')}`);
    }
    // The words take the scale's colours by rank: very low pale green, very high dark red.
    const chips = await page.$$eval('a.tile .level', (spans) =>
      spans.map((span) => {
        const [r, g, b] = getComputedStyle(span).backgroundColor.match(/\d+/g)!.map(Number);
        return { level: span.getAttribute('data-level'), r: r!, g: g!, b: b! };
      }),
    );
    for (const { level, r, g, b } of chips) {
      if (level === 'very-low') expect(g, 'very low is green').toBeGreaterThan(Math.max(r, b));
      if (level === 'very-high') expect(r, 'very high is red').toBeGreaterThan(Math.max(g, b));
      if (level === 'very-high') expect(r + g + b, 'very high is dark').toBeLessThan(400);
    }
    // And the page says what a word means.
    await expect(page.locator('.notes').textContent()).resolves.toContain(
      "says where it stands within its own zone's last 30 days: very low below its 10th percentile",
    );
    const groups = await page.$$eval('section.group', (sections) =>
      sections.map((section) => [
        section.querySelector('h2')?.textContent,
        section.querySelectorAll('a.tile').length,
      ]),
    );
    expect(groups).toEqual([
      ['Europe (33)', 33],
      ['United States (11)', 11],
      ['Great Britain (1)', 1],
    ]);
    expect(await page.locator('.ranking li').count()).toBe(45);
    // Values of different ages sit together: never called "now", and each says its age.
    await expect(page.locator('h1').textContent()).resolves.toMatch(/^Newest published/);
    const ages = await page.locator('.ranking li .rank-age').allTextContents();
    expect(ages).toHaveLength(45);
    for (const age of ages) expect(age).toMatch(/^[\d.]+ (min|h|d) old$/);
    // The first answer: where (newest values, with ages) and when (hours ahead) it is cleanest.
    const where = await page.locator('.answer-part').first().locator('li').allTextContents();
    expect(where).toHaveLength(5);
    for (const line of where) expect(line).toMatch(/: [\d.]+ g, [\d.]+ (min|h|d) old$/);
    const ahead = await page.locator('.answer-part').nth(1).locator('li').allTextContents();
    expect(ahead).toHaveLength(5);
    for (const line of ahead) expect(line).toMatch(/\d\d:\d\d UTC: [\d.]+ g$/);
    // The legend reads without a key: labelled ticks, and the words at its ends.
    await expect(page.locator('.legend-ticks span').allTextContents()).resolves.toEqual([
      '0',
      '200',
      '400',
      '600',
      '800+',
    ]);
    await expect(page.locator('.legend').textContent()).resolves.toMatch(/^cleaner.*dirtier/);
    // Clean is green, dirty dark red or brown: what the tiles of the demo's values show.
    const colours = await page.$$eval('a.tile[data-zone]', (tiles) =>
      tiles.map((tile) => {
        const [r, g, b] = getComputedStyle(tile).backgroundColor.match(/\d+/g)!.map(Number);
        return { value: Number(tile.querySelector('.number')?.textContent), r: r!, g: g!, b: b! };
      }),
    );
    for (const { value, r, g, b } of colours) {
      if (value < 60) expect(g, `${value} g is green`).toBeGreaterThan(Math.max(r, b));
      if (value > 500) expect(r, `${value} g is dark red`).toBeGreaterThan(Math.max(g, b));
      if (value > 500) expect(r + g + b, `${value} g is dark`).toBeLessThan(400);
    }
    expect(colours.some((c) => c.value < 60) && colours.some((c) => c.value > 500)).toBe(true);
    await expectTilesWhole(page);
    // The demo's data are synthetic, and the page says so.
    await expect(page.locator('main .demo').textContent()).resolves.toContain('synthetic');
    // Sparklines drawn from the one export, each with a label for screen readers.
    const sparks = await page.$$eval('a.tile svg.spark', (svgs) =>
      svgs.map((svg) => [
        svg.getAttribute('aria-label'),
        svg.querySelector('polyline')?.getAttribute('points')?.split(' ').length ?? 0,
      ]),
    );
    expect(sparks.length).toBe(45);
    for (const [label, points] of sparks) {
      expect(label).toMatch(/last 24 hours: from [\d.]+ to [\d.]+ gCO2eq\/kWh/);
      expect(points).toBeGreaterThan(10);
    }
    // What the first screen transferred: page, assets and API answers.
    const bytes = await page.evaluate(() =>
      [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
        .map((entry) => (entry as PerformanceResourceTiming).transferSize)
        .reduce((a, b) => a + b, 0),
    );
    expect(bytes).toBeGreaterThan(1000);
    expect(bytes).toBeLessThan(150_000);
    await page.screenshot({ path: join(ARTEFACTS, 'dashboard-1280.png'), fullPage: true });
    await page
      .locator('ul.tiles')
      .nth(1)
      .screenshot({ path: join(ARTEFACTS, 'tiles-us-1280.png') });
  });

  it('changes the values when the basis toggle is used', async () => {
    const lifecycle = await tileValues(page);
    const before = Number(await page.evaluate(() => document.body.dataset['ready']));
    await page.getByLabel('Direct').check();
    await rendered(page, 'overview', before);
    expect(page.url()).toContain('basis=direct');
    // The keyboard focus stays on the radio used, through both redraws of the first screen.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('basis-direct');
    const direct = await tileValues(page);
    expect(Object.keys(direct)).toHaveLength(45);
    const changed = Object.keys(lifecycle).filter((zone) => lifecycle[zone] !== direct[zone]);
    // Direct factors are lower for every fuel: most zones change, and DE (coal, gas) must.
    expect(changed.length).toBeGreaterThan(30);
    expect(Number(direct['DE'])).toBeLessThan(Number(lifecycle['DE']));
  });

  it('switches the values to consumption, keeps the choice in the URL, and marks GB', async () => {
    const before = Number(await page.evaluate(() => document.body.dataset['ready']));
    await page.getByLabel('Consumption').check();
    await rendered(page, 'overview', before);
    expect(page.url()).toContain('accounting=consumption');
    expect(page.url()).toContain('basis=direct');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('accounting-consumption');
    const shown = await tileValues(page);
    const newest = async (query: string) =>
      new Map(
        (
          (await (await fetch(`${url}/v1/intensity/latest?${query}`)).json()) as {
            data: { zone: string; gco2eq_kwh: number }[];
          }
        ).data.map((r) => [r.zone, r.gco2eq_kwh]),
      );
    const consumed = await newest('basis=direct&accounting=consumption');
    const produced = await newest('basis=direct');
    expect(consumed.size).toBeGreaterThan(40);
    expect(consumed.has('GB')).toBe(false);
    // Each tile shows the API's consumption value, GB its production value marked so.
    for (const [zone, value] of consumed)
      expect(Math.abs(Number(shown[zone]) - value), zone).toBeLessThanOrEqual(0.5);
    expect(Math.abs(Number(shown['GB']) - produced.get('GB')!)).toBeLessThanOrEqual(0.5);
    await expect(
      page.locator('a.tile[data-zone="GB"] .badge').allTextContents(),
    ).resolves.toContain('production');
    await expect(page.locator('a.tile .badge', { hasText: 'production' }).count()).resolves.toBe(
      45 - consumed.size,
    );
    await expect(page.locator('.notes').textContent()).resolves.toContain(
      'Production value for GB, marked so: GB has no consumption series',
    );
    await expect(page.locator('.notes').textContent()).resolves.toContain(
      "The forecasts (the hours ahead, each tile's greenest hour) are of production values",
    );
    await expect(page.locator('h1').textContent()).resolves.toContain('of consumption');
    // Imports move values: some zone's consumption value is not its production value.
    expect([...consumed].some(([zone, value]) => Math.abs(value - produced.get(zone)!) > 1)).toBe(
      true,
    );
    // A tile's link keeps the choice.
    await expect(page.locator('a.tile[data-zone="DE"]').getAttribute('href')).resolves.toBe(
      '#/zone/DE?basis=direct&accounting=consumption',
    );
    await page.screenshot({ path: join(ARTEFACTS, 'dashboard-consumption-1280.png') });
    const back = Number(await page.evaluate(() => document.body.dataset['ready']));
    await page.getByLabel('Production').check();
    await rendered(page, 'overview', back);
    expect(page.url()).not.toContain('accounting');
  });

  it("draws a zone's cross-border flows and consumed mix of the newest hour", async () => {
    const zonePage = await openPage(1280);
    await zonePage.goto(`${url}/#/zone/DE?range=24h&accounting=consumption`);
    await rendered(zonePage, 'zone');
    const traced = (await (await fetch(`${url}/v1/mix?zone=DE&accounting=consumption`)).json()) as {
      data: { ts: string; imports: Record<string, number>; exports: Record<string, number> }[];
    };
    const hour = traced.data.at(-1)!;
    const flows = zonePage.locator('svg.flows');
    await expect(flows.getAttribute('role')).resolves.toBe('img');
    await expect(flows.locator('title').textContent()).resolves.toBe(
      `Cross-border flows of DE at ${hour.ts.slice(0, 16).replace('T', ' ')} UTC, MWh`,
    );
    const description = (await flows.locator('desc').textContent())!;
    expect(description).toMatch(/^Imports [\d.]+ MWh.*; exports [\d.]+ MWh/);
    // One bar per flow: imports left of the axis, exports right of it.
    const bars = await flows.evaluate((svg) => {
      const axis = svg.querySelector('line.flows-axis')!.getBoundingClientRect().x;
      return Array.from(svg.querySelectorAll('rect')).map((rect) => {
        const box = rect.getBoundingClientRect();
        // By its middle: a bar a tenth of a pixel wide touches the axis on both sides.
        const middle = box.left + box.width / 2;
        return {
          left: middle < axis && box.right <= axis + 1,
          right: middle > axis && box.left >= axis - 1,
        };
      });
    });
    const imports = Object.values(hour.imports).filter((mwh) => mwh > 0);
    const exports = Object.values(hour.exports).filter((mwh) => mwh > 0);
    expect(imports.length + exports.length).toBeGreaterThan(1);
    expect(bars.filter((bar) => bar.left)).toHaveLength(imports.length);
    expect(bars.filter((bar) => bar.right)).toHaveLength(exports.length);
    for (const [neighbour] of Object.entries(hour.imports).filter(([, v]) => v > 0))
      expect(description).toContain(`${neighbour} `);
    const codes = await flows.locator('text.flows-code').allTextContents();
    expect(new Set(codes)).toEqual(
      new Set(
        [...Object.entries(hour.imports), ...Object.entries(hour.exports)]
          .filter(([, mwh]) => mwh > 0)
          .map(([code]) => code),
      ),
    );
    const consumed = zonePage.locator('section[aria-labelledby="consumed-title"]');
    await expect(consumed.locator('.mix-bars li').count()).resolves.toBeGreaterThan(2);
    await expect(consumed.locator('.chart canvas').count()).resolves.toBe(1);
    await expect(zonePage.locator('#intensity-title').textContent()).resolves.toBe(
      'Intensity of consumption, last 24 h',
    );
    await expect(zonePage.locator('.zone-now').textContent()).resolves.toContain('consumed');
    await expect(zonePage.locator('#forecast-note').textContent()).resolves.toContain(
      'of production values',
    );
    await consumed.screenshot({ path: join(ARTEFACTS, 'zone-consumption-1280.png') });
    // GB has no consumption series: its production values, said so, and no consumption asked for.
    const asked: string[] = [];
    zonePage.on('request', (request) => asked.push(request.url()));
    const before = Number(await zonePage.evaluate(() => document.body.dataset['ready']));
    await zonePage.goto(`${url}/#/zone/GB?accounting=consumption`);
    await rendered(zonePage, 'zone', before);
    await expect(zonePage.locator('.zone-now').textContent()).resolves.toContain('(production)');
    await expect(zonePage.locator('.missing').allTextContents()).resolves.toContain(
      'Production values: GB has no consumption series (its operator publishes generation shares, not quantities, so its flows cannot be traced).',
    );
    await expect(zonePage.locator('svg.flows').count()).resolves.toBe(0);
    expect(asked.filter((a) => a.includes('zone=GB') && a.includes('accounting'))).toEqual([]);
    await zonePage.close();
  });

  it('shows production values, said in one line, where the server serves no consumption', async () => {
    // A page of its own: the 400 answers made up here would be console errors on the others.
    const flowsOff = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await flowsOff.route(/accounting=consumption/, (route) =>
      route.fulfill({
        status: 400,
        contentType: 'application/json',
        body: JSON.stringify({
          error: 'unsupported param: accounting',
          hint: 'this server runs with FLOWS=off: it ingests no border flows',
        }),
      }),
    );
    await flowsOff.goto(`${url}/#/?accounting=consumption`);
    await rendered(flowsOff, 'overview');
    await expect(flowsOff.locator('.notes .missing').allTextContents()).resolves.toContain(
      'This server serves no consumption values (it ingests no border flows: FLOWS=off), so production values are shown.',
    );
    expect(await flowsOff.locator('a.tile[data-zone]').count()).toBe(45);
    await expect(
      flowsOff.locator('a.tile .badge', { hasText: 'production' }).count(),
    ).resolves.toBe(0);
    await expect(flowsOff.locator('#accounting-consumption').isChecked()).resolves.toBe(true);
    await flowsOff.goto(`${url}/#/zone/DE?accounting=consumption&range=24h`);
    await rendered(flowsOff, 'zone');
    await expect(flowsOff.locator('.missing').first().textContent()).resolves.toContain(
      'FLOWS=off',
    );
    await expect(flowsOff.locator('.chart canvas').count()).resolves.toBeGreaterThan(0);
    await expect(flowsOff.locator('svg.flows').count()).resolves.toBe(0);
    await flowsOff.close();
  });

  it('goes to a zone by keyboard and draws its chart', async () => {
    const before = Number(await page.evaluate(() => document.body.dataset['ready']));
    const { read: level, levels } = await apiLevelsAround(
      'zone=DE&horizon_hours=0&basis=direct',
      async () => {
        await page.locator('a.tile[data-zone="DE"]').focus();
        await page.keyboard.press('Enter');
        await rendered(page, 'zone', before);
        return page.locator('.zone-now .level').getAttribute('data-level');
      },
    );
    expect(page.url()).toMatch(/#\/zone\/DE\?basis=direct$/);
    // The newest value's level word, the API's, with its percentile and the bands in words.
    if (levels.has('DE')) expect(level).toBe(levels.get('DE'));
    expect(level).toMatch(/^(very-low|low|moderate|high|very-high)$/);
    await expect(page.locator('.level-note').textContent()).resolves.toMatch(
      /^Level (very low|low|moderate|high|very high): at percentile [\d.]+ of DE's own values of the last 30 days \(very low below its 10th percentile/,
    );
    await expect(page.locator('h1').textContent()).resolves.toMatch(/(\(DE\)| · DE)$/);
    await expect(page.locator('.zone-now').textContent()).resolves.toMatch(
      /gCO2eq\/kWh level (very low|low|moderate|high|very high), newest published: \d{4}-\d\d-\d\d \d\d:\d\d UTC, [\d.]+ (min|h|d) old$/,
    );
    await expect(page.locator('figure strong').first().textContent()).resolves.toContain(
      'times in UTC',
    );
    // The forecast's band is drawn only once its errors are measured, and said either way.
    const note = await page.locator('#forecast-note').textContent();
    const bandSeries = await page.locator('.chart .u-legend .u-series .u-label').allTextContents();
    if (note?.includes('No P10-P90 band yet')) expect(bandSeries).not.toContain('P10');
    else expect(note).toContain('the band spans P10 to P90');
    const chart = page.locator('.chart').first();
    expect(Number(await chart.getAttribute('data-points'))).toBeGreaterThan(24);
    // Pixels actually drawn on the plot's canvas, not an empty frame.
    const inked = await chart.locator('canvas').evaluate((canvas: HTMLCanvasElement) => {
      const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
      let count = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) count++;
      return count;
    });
    expect(inked).toBeGreaterThan(500);
    // Words where a piece is missing or explained, never a blank panel.
    await expect(page.locator('#mix-title').isVisible()).resolves.toBe(true);
    await expect(page.locator('.current-mix').textContent()).resolves.toMatch(/% renewable/);
    await expect(page.locator('table.heatmap tbody tr').count()).resolves.toBeGreaterThan(0);
    await expect(page.locator('section.panel').last().textContent()).resolves.toContain('ENTSO-E');
  });

  it('compares three zones on one chart, and downloads what is shown as CSV', async () => {
    for (const zone of ['FR', 'PL']) {
      const before = Number(await page.evaluate(() => document.body.dataset['ready']));
      await page.selectOption('#compare-zone', zone);
      await page.click('#compare-add');
      await rendered(page, 'zone', before);
    }
    expect(page.url()).toContain('compare=FR%2CPL');
    const labels = await page.$$eval('.chart .u-legend .u-series .u-label', (cells) =>
      cells.map((cell) => cell.textContent),
    );
    expect(labels).toEqual(expect.arrayContaining(['DE', 'FR', 'PL']));
    const summary = await page.locator('figure .summary').first().textContent();
    for (const zone of ['DE', 'FR', 'PL'])
      expect(summary).toMatch(new RegExp(`${zone}: \\d+ readings`));
    // No fourth zone: the chart holds three.
    await expect(page.locator('#compare-zone').count()).resolves.toBe(0);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('#download-csv'),
    ]);
    const stream = await download.createReadStream();
    let csv = '';
    for await (const chunk of stream) csv += String(chunk);
    const lines = csv.trim().split('\n');
    expect(lines[0]).toBe('zone,ts,gco2eq_kwh,method,kind,p10,p90');
    expect(new Set(lines.slice(1).map((line) => line.split(',')[0]))).toEqual(
      expect.objectContaining({ size: expect.any(Number) }),
    );
    for (const zone of ['DE', 'FR', 'PL'])
      expect(lines.some((line) => line.startsWith(`${zone},`))).toBe(true);
    expect(csv).not.toContain('null');
    await page.screenshot({ path: join(ARTEFACTS, 'zone-1280.png'), fullPage: true });
    // Removing a compared zone leaves the focus on the zone picker, not on <body>.
    const before = Number(await page.evaluate(() => document.body.dataset['ready']));
    await page.getByRole('button', { name: 'Stop comparing with FR' }).click();
    await rendered(page, 'zone', before);
    await page.waitForFunction(() => document.activeElement?.id === 'compare-zone');
    expect(page.url()).toContain('compare=PL');
  });

  it('says in words when a zone does not exist', async () => {
    const before = Number(await page.evaluate(() => document.body.dataset['ready']));
    await page.goto(`${url}/#/zone/XX`);
    await rendered(page, 'zone', before);
    await expect(page.locator('.missing').first().textContent()).resolves.toContain(
      'There is no zone "XX"',
    );
    // An unknown zone in compare= is said too, not silently dropped.
    const again = Number(await page.evaluate(() => document.body.dataset['ready']));
    await page.goto(`${url}/#/zone/FR?range=24h&compare=XX`);
    await rendered(page, 'zone', again);
    await expect(page.locator('section.panel .missing').allTextContents()).resolves.toEqual(
      expect.arrayContaining([expect.stringContaining('there is no zone "XX"')]),
    );
  });

  it('shows /v1/status in sentences and a table of sources', async () => {
    await page.goto(`${url}/#/status`);
    await rendered(page, 'status');
    await expect(page.locator('.status-table tbody tr').count()).resolves.toBe(3);
    const sentences = await page.locator('.status-sentences li').allTextContents();
    expect(sentences).toHaveLength(3);
    for (const line of sentences) {
      expect(line).toMatch(
        /^(Europe|The United States|Great Britain) \(.+\) is (delivering|behind): /,
      );
      expect(line).toMatch(/[\d.]+ (min|h|d)( to [\d.]+ (min|h|d))? old/);
    }
    expect(sentences.join(' ')).toContain("Great Britain (NESO) is delivering: its one zone's");
    // The service's own note, in operators' words, is there but folded away.
    await expect(page.locator('.status-note summary').textContent()).resolves.toMatch(/note/);
    await expect(page.locator('.status-note p').textContent()).resolves.toMatch(/europe-tso/);
    await expect(page.locator('.status-note p').isVisible()).resolves.toBe(false);
    await page.screenshot({ path: join(ARTEFACTS, 'status-1280.png'), fullPage: true });
    // The skip link moves the focus to the content and leaves the route alone.
    const before = Number(await page.evaluate(() => document.body.dataset['ready']));
    await page.locator('a.skip').focus();
    await page.keyboard.press('Enter');
    expect(page.url()).toMatch(/#\/status$/);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    expect(Number(await page.evaluate(() => document.body.dataset['ready']))).toBe(before);
  });

  it('is usable at 360 px: 45 tiles, nothing wider than the screen', async () => {
    const small = await openPage(360);
    await small.goto(`${url}/`);
    await rendered(small, 'overview');
    expect(await small.locator('a.tile[data-zone]').count()).toBe(45);
    const width = await small.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(360);
    await expectTilesWhole(small);
    // A phone's first screen (360 x 740) answers where and when it is cleanest.
    await small.setViewportSize({ width: 360, height: 740 });
    for (const part of await small.locator('.answer-part').all()) {
      const box = (await part.boundingBox())!;
      expect(box.y + box.height).toBeLessThanOrEqual(740);
    }
    // One line for each of its answers.
    for (const line of await small.locator('.answer li').all()) {
      expect((await line.boundingBox())!.height).toBeLessThan(30);
    }
    await small.screenshot({ path: join(ARTEFACTS, 'dashboard-360-first-screen.png') });
    await small.setViewportSize({ width: 360, height: 900 });
    await small.screenshot({ path: join(ARTEFACTS, 'dashboard-360.png'), fullPage: true });
    await small
      .locator('ul.tiles')
      .nth(1)
      .screenshot({ path: join(ARTEFACTS, 'tiles-us-360.png') });
    // The status table fits the screen, every column visible without scrolling.
    await small.goto(`${url}/#/status`);
    await rendered(small, 'status');
    const table = (await small.locator('.status-table').boundingBox())!;
    const content = await small.locator('main').evaluate((main) => {
      const box = main.getBoundingClientRect();
      return box.right - parseFloat(getComputedStyle(main).paddingRight);
    });
    expect(table.x + table.width).toBeLessThanOrEqual(content);
    await small.screenshot({ path: join(ARTEFACTS, 'status-360.png'), fullPage: true });
    const asked: string[] = [];
    small.on('request', (request) => asked.push(request.url()));
    await small.goto(`${url}/#/zone/GB?range=24h`);
    await rendered(small, 'zone');
    // On 24 h the forecast asked for is no longer than the range shown.
    const forecasts = asked.filter((a) => a.includes('/v1/intensity/forecast'));
    expect(forecasts.length).toBeGreaterThan(0);
    for (const address of forecasts) expect(address).toContain('horizon_hours=24');
    expect(await small.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      360,
    );
    await small.screenshot({ path: join(ARTEFACTS, 'zone-360.png'), fullPage: true });
    await small.close();
  });

  it('logged no console error on any page', () => {
    expect(problems).toEqual([]);
  });
});
