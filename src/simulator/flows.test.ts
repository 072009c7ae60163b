import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entsoeBorder, eiaBorder, type Border } from '../core/consumption/flows.js';
import type { DirectedFlow } from '../core/flows.js';
import type { HourlySeries } from '../core/generation.js';
import { EUROPE_BORDERS } from '../core/grid-graph/europe.js';
import { US_NODES } from '../core/grid-graph/us.js';
import type { TimeWindow } from '../core/time.js';
import { fetchEiaInterchange } from '../sources/eia/index.js';
import { parseInterchangeData } from '../sources/eia/parse-interchange.js';
import { parseRegionData } from '../sources/eia/parse-region.js';
import { eiaInterchangeUrl, eiaRegionDataUrl } from '../sources/eia/request.js';
import { fetchEntsoeBorder } from '../sources/entsoe/flows.js';
import { parseA75 } from '../sources/entsoe/parse.js';
import { parseA11 } from '../sources/entsoe/parse-flows.js';
import { entsoeA11Url, entsoeA75Url } from '../sources/entsoe/request.js';
import { createUpstreamHttp } from '../sources/http.js';
import { netFlows, nodeBalances, simulatedBorders, type FlowGraphName } from './flow-model.js';
import { startSimulator, type Simulator } from './index.js';
import { EUROPE_EXTRA_PROFILES } from './node-profiles.js';

/**
 * The simulated flows (A11, interchange-data) read through the project's own requests, fetches,
 * parsers and netting (src/sources, src/core/consumption/flows.ts) balance every node:
 * generation - exports + imports = load within 2 % (extensions §16).
 */

const NOW = Date.parse('2025-10-24T18:00:00Z');
const SEED = 7;
const HOUR = 3600;
// Two days, published and past every revision at NOW, after the DE node's links went PT15M.
const WINDOW: TimeWindow = {
  fromTs: Date.parse('2025-10-20T00:00:00Z') / 1000,
  toTs: Date.parse('2025-10-22T00:00:00Z') / 1000,
};
const HOURS = Array.from(
  { length: (WINDOW.toTs - WINDOW.fromTs) / HOUR },
  (_, i) => WINDOW.fromTs + i * HOUR,
);
const TOLERANCE = 0.02;

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ seed: SEED, now: () => NOW });
});
afterAll(() => sim.close());

const text = async (url: string) => (await fetch(url)).text();
const europeBalances = new Map<number, ReturnType<typeof nodeBalances>>();
/** The model's generation and load of every European node in the hour starting at `ts`. */
function europeBalanceAt(ts: number): ReturnType<typeof nodeBalances> {
  const balances = europeBalances.get(ts) ?? nodeBalances('europe', SEED, ts * 1000);
  europeBalances.set(ts, balances);
  return balances;
}
const europeUrl = (direction: { outEic: string; inEic: string }, window = WINDOW) =>
  entsoeA11Url(sim.baseUrls['europe-tso'], 't', direction, window);

/** Hour start -> net flow per border, keyed `a b`, from directed flows (both directions). */
function seriesOf(flows: readonly DirectedFlow[]): Map<string, Map<number, number>> {
  const byDirection = new Map<string, Map<number, number>>();
  for (const { from, to, ts, mw } of flows) {
    const key = `${from} ${to}`;
    if (!byDirection.has(key)) byDirection.set(key, new Map());
    byDirection.get(key)?.set(ts, mw);
  }
  return byDirection;
}

/**
 * For every node with a balance and every hour whose borders are all known, the share of its
 * load that generation - exports + imports misses; and how many hours each node was checked.
 */
function imbalances(
  borders: readonly Border[],
  balanceAt: (ts: number) => ReadonlyMap<string, { generation: number; load: number }>,
): { worst: number; checkedHours: Map<string, number> } {
  const bordersOf = new Map<string, Border[]>();
  for (const border of borders) {
    for (const node of [border.from, border.to]) {
      bordersOf.set(node, [...(bordersOf.get(node) ?? []), border]);
    }
  }
  let worst = 0;
  const checkedHours = new Map<string, number>();
  for (const ts of HOURS) {
    for (const [node, { generation, load }] of balanceAt(ts)) {
      let exports = 0;
      let known = true;
      for (const border of bordersOf.get(node) ?? []) {
        const net = border.net.get(ts);
        if (net === undefined) known = false;
        else exports += border.from === node ? net : -net;
      }
      if (!known) continue;
      checkedHours.set(node, (checkedHours.get(node) ?? 0) + 1);
      worst = Math.max(worst, Math.abs(generation - exports - load) / load);
    }
  }
  return { worst, checkedHours };
}

function expectEveryNodeChecked(graph: FlowGraphName, checkedHours: Map<string, number>): void {
  const simulated = [...nodeBalances(graph, SEED, WINDOW.fromTs * 1000).keys()];
  expect(simulated.length).toBeGreaterThan(graph === 'europe' ? 40 : 55);
  for (const node of simulated) {
    // A gap on one of its borders leaves an hour out, rarely.
    expect(checkedHours.get(node) ?? 0, node).toBeGreaterThan(HOURS.length - 6);
  }
}

describe('ENTSO-E A11 physical flows', () => {
  let borders: Border[];
  let directed: Map<string, Map<number, number>>;
  beforeAll(async () => {
    const client = {
      http: createUpstreamHttp({ source: 'europe-tso' }),
      baseUrl: sim.baseUrls['europe-tso'],
      token: 't',
    };
    const flows = await Promise.all(
      EUROPE_BORDERS.map((border) => fetchEntsoeBorder(client, border, WINDOW)),
    );
    directed = seriesOf(flows.flat());
    borders = EUROPE_BORDERS.flatMap(({ a, b }) => {
      const border = entsoeBorder(
        a,
        b,
        directed.get(`${a} ${b}`) ?? new Map(),
        directed.get(`${b} ${a}`) ?? new Map(),
      );
      return border ? [border] : [];
    });
  });

  it('publishes every border of the graph, both directions', () => {
    expect(borders).toHaveLength(EUROPE_BORDERS.length);
    for (const { from, to, net } of borders) {
      expect(net.size, `${from}-${to}`).toBeGreaterThan(HOURS.length - 4);
    }
  });

  it('balances every simulated node in every hour within 2 %', () => {
    const { worst, checkedHours } = imbalances(borders, europeBalanceAt);
    expect(worst).toBeLessThan(TOLERANCE);
    expectEveryNodeChecked('europe', checkedHours);
  });

  it("answers A's export to B and B's import from A with one document: one way at a time, gaps in both directions", () => {
    let gaps = 0;
    for (const { a, b } of EUROPE_BORDERS) {
      const aToB = directed.get(`${a} ${b}`) ?? new Map<number, number>();
      const bToA = directed.get(`${b} ${a}`) ?? new Map<number, number>();
      expect([...aToB.keys()], `${a}-${b}`).toEqual([...bToA.keys()]);
      gaps += HOURS.length - aToB.size;
      for (const [ts, mw] of aToB) {
        expect(Math.min(mw, bToA.get(ts) as number), `${a}-${b} ${ts}`).toBe(0);
      }
    }
    expect(gaps).toBeGreaterThan(0);
  });

  it('nets to the flow model, whole MW on hourly links and hundredths on quarter-hourly ones', () => {
    const index = new Map(simulatedBorders('europe').map(({ a, b }, i) => [`${a} ${b}`, i]));
    for (const { from, to, net } of borders) {
      for (const [ts, mw] of net) {
        const modelled = netFlows('europe', SEED, ts * 1000)[index.get(`${from} ${to}`) as number];
        // Each link rounds on its own; BE-DE and FR-COR-IT-SARD have two.
        expect(Math.abs(mw - (modelled as number)), `${from}-${to}`).toBeLessThanOrEqual(1);
      }
    }
  });

  it('publishes the generation the balance counts (A75 of the extra nodes without storage)', async () => {
    for (const profile of EUROPE_EXTRA_PROFILES) {
      if (profile.fuels.some((fuel) => fuel.kind === 'storage')) continue;
      const parsed = parseA75(
        await text(entsoeA75Url(sim.baseUrls['europe-tso'], 't', profile.eic, WINDOW)),
      );
      if (parsed.kind !== 'generation') throw new Error(`${profile.zone}: ${parsed.kind}`);
      const byType = parsed.areas.get(profile.eic);
      let compared = 0;
      for (const ts of HOURS) {
        const values = profile.fuels.map((fuel) => byType?.get(fuel.code)?.get(ts));
        // An hour missing a type (the feed's quirk) is not the whole generation.
        if (values.some((value) => value === undefined)) continue;
        const published = values.reduce((sum: number, value) => sum + (value as number), 0);
        const modelled = europeBalanceAt(ts).get(profile.zone)?.generation;
        expect(Math.abs(published - (modelled as number)), profile.zone).toBeLessThanOrEqual(
          profile.fuels.length / 2,
        );
        compared++;
      }
      expect(compared, profile.zone).toBeGreaterThan(HOURS.length - 4);
    }
  });

  it('reads like the recordings: same elements in the same order, PT60M A01 integers, PT15M A03 on the DE links', async () => {
    const recorded = readFileSync(
      new URL(
        '../../test/fixtures/upstreams/europe-tso/entsoe_A11_DK-1_to_GB_2023-12-20T1700Z_PT60M_3-timeseries-with-gaps.xml',
        import.meta.url,
      ),
      'utf8',
    );
    // DK1 -> GB, as recorded; then DE-LU -> NL.
    const hourly = await text(europeUrl({ outEic: '10YDK-1--------W', inEic: '10YGB----------A' }));
    const shape = (xml: string) =>
      xml
        .slice(0, xml.indexOf('</Point>'))
        .replace(/>[^<]*</g, '><')
        .replace(/<mRID>[^<]*<|<(start|end)>[^<]*</g, '');
    expect(shape(hourly)).toEqual(shape(recorded));
    expect(hourly).toMatch(/<quantity>\d+<\/quantity>/);
    const quarterly = await text(
      europeUrl({ outEic: '10Y1001A1001A82H', inEic: '10YNL----------L' }),
    );
    expect(quarterly).toContain('<curveType>A03</curveType>');
    expect(quarterly).toContain('<resolution>PT15M</resolution>');
    expect(quarterly).toMatch(/<quantity>\d+\.\d+<\/quantity>/);
  });

  it('answers a pair outside the graph, and a window not yet published, with "No matching data" (HTTP 200)', async () => {
    const outside = await fetch(
      europeUrl({ outEic: '10YPL-AREA-----S', inEic: '10YFR-RTE------C' }),
    );
    expect(outside.status).toBe(200);
    const body = await outside.text();
    expect(parseA11(body)).toMatchObject({ kind: 'no-data' });
    expect(body).toContain(
      'No matching data found for Data item NET_CROSS_BORDER_PHYSICAL_FLOWS_R3 [12.1.G] (10YFR-RTE------C, 10YPL-AREA-----S) and interval 2025-10-20T00:00Z/2025-10-22T00:00Z.',
    );
    const future = { fromTs: NOW / 1000, toTs: NOW / 1000 + 24 * HOUR };
    const unpublished = await text(
      europeUrl({ outEic: '10YES-REE------0', inEic: '10YFR-RTE------C' }, future),
    );
    expect(parseA11(unpublished)).toMatchObject({ kind: 'no-data' });
    // A boundary area is on the platform, without generation.
    const turkey = await text(
      entsoeA75Url(sim.baseUrls['europe-tso'], 't', '10YTR-TEIAS----W', WINDOW),
    );
    expect(parseA75(turkey)).toMatchObject({ kind: 'no-data' });
  });
});

describe('EIA interchange-data', () => {
  let borders: Border[];
  let reports: Map<string, Map<number, number>>;
  let region: ReadonlyMap<string, ReadonlyMap<string, HourlySeries>>;
  const reporters = US_NODES.flatMap((node) =>
    node.role !== 'boundary' && node.upstreamId !== null ? [node.upstreamId] : [],
  );
  const codeOf = new Map(US_NODES.map((node) => [node.upstreamId, node.code]));
  beforeAll(async () => {
    const client = {
      http: createUpstreamHttp({ source: 'us-agency' }),
      baseUrl: sim.baseUrls['us-agency'],
      apiKey: 'k',
    };
    const { flows, unknownCodes, unlistedPairs } = await fetchEiaInterchange(client, WINDOW);
    expect([unknownCodes, unlistedPairs]).toEqual([[], []]);
    reports = seriesOf(flows);
    borders = simulatedBorders('us').flatMap(({ a, b }) => {
      const border = eiaBorder(
        a,
        b,
        reports.get(`${a} ${b}`) ?? new Map(),
        reports.get(`${b} ${a}`) ?? new Map(),
      );
      return border ? [border] : [];
    });
    const byRespondent = new Map<string, Map<string, HourlySeries>>();
    for (let offset = 0, total = 1; offset < total;) {
      const request = { ...client, respondents: reporters, window: WINDOW, offset };
      const page = parseRegionData(await text(eiaRegionDataUrl(request, ['D', 'NG'])));
      if (page.kind !== 'region-data') throw new Error(`region-data: ${page.kind}`);
      for (const [respondent, byType] of page.respondents) {
        const merged = byRespondent.get(respondent) ?? new Map<string, HourlySeries>();
        for (const [type, series] of byType) {
          merged.set(type, new Map([...(merged.get(type) ?? []), ...series]));
        }
        byRespondent.set(respondent, merged);
      }
      total = page.total;
      offset += page.rows;
    }
    region = byRespondent;
  });

  it('balances every balancing authority in every hour within 2 %, by its own published NG and D', () => {
    expect(borders).toHaveLength(simulatedBorders('us').length);
    const { worst, checkedHours } = imbalances(borders, (ts) => {
      const balances = new Map<string, { generation: number; load: number }>();
      for (const [respondent, byType] of region) {
        const generation = byType.get('NG')?.get(ts);
        const load = byType.get('D')?.get(ts);
        const node = codeOf.get(respondent);
        if (node && generation !== undefined && load !== undefined) {
          balances.set(node, { generation, load });
        }
      }
      return balances;
    });
    expect(worst).toBeLessThan(TOLERANCE);
    expectEveryNodeChecked('us', checkedHours);
  });

  it("reports each pair twice as exact opposites: A's export to B is B's import from A", () => {
    let pairs = 0;
    for (const { a, b } of simulatedBorders('us')) {
      const aReport = reports.get(`${a} ${b}`);
      const bReport = reports.get(`${b} ${a}`);
      const foreign = [a, b].some(
        (code) => US_NODES.find((node) => node.code === code)?.role === 'boundary',
      );
      if (foreign) {
        // Only the US side reports a foreign neighbour.
        expect((aReport?.size ?? 0) + (bReport?.size ?? 0), `${a}-${b}`).toBe(HOURS.length);
        continue;
      }
      expect(aReport?.size, `${a}-${b}`).toBe(HOURS.length);
      for (const [ts, mw] of aReport ?? []) {
        expect((bReport?.get(ts) as number) + mw, `${a}-${b}`).toBe(0);
      }
      pairs++;
    }
    expect(pairs).toBeGreaterThan(130);
  });

  it('labels the hour by its end and pages like the other routes', async () => {
    const url = (offset: number) =>
      eiaInterchangeUrl({
        baseUrl: sim.baseUrls['us-agency'],
        apiKey: 'k',
        respondents: reporters,
        window: WINDOW,
        offset,
      });
    const first = JSON.parse(await text(url(0))) as {
      response: { total: string; data: { period: string; value: string }[]; warnings?: unknown[] };
    };
    expect(first.response.data[0]?.period).toBe('2025-10-20T01');
    expect(first.response.data[0]?.value).toMatch(/^-?\d+$/);
    expect(first.response.warnings).toHaveLength(1);
    const parsed = parseInterchangeData(await text(url(5000)));
    if (parsed.kind !== 'interchange') throw new Error(parsed.kind);
    expect(parsed.total).toBe(Number(first.response.total));
    expect(parsed.total).toBe(HOURS.length * reports.size);
  });
});
