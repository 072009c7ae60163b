import { afterEach, describe, expect, it } from 'vitest';
import { europeProfileOf, simulatorDuringSuite } from '../../test/support/simulator-suite.js';
import { parseFuelTypeData } from '../sources/eia/parse.js';
import { parseA75 } from '../sources/entsoe/parse.js';
import { operatorMixes } from '../core/uk-operator.js';
import { parseGeneration, parseIntensity } from '../sources/neso/parse.js';
import { publishedMix } from './flow-model.js';
import { hourGap, isReported } from './mix-model.js';

/** The project's real parsers (src/sources/*\/parse.ts) read what the simulator serves. */

const NOW = Date.parse('2025-10-24T18:00:00Z');
const SEED = 9;
const HOUR_MS = 3_600_000;

const sim = simulatorDuringSuite({ seed: SEED, now: () => NOW });
afterEach(() => sim.clearFaults());

const text = async (path: string) => (await fetch(`${sim.url}${path}`)).text();
const a75Path = (eic: string, start: string, end: string) =>
  `/api?securityToken=t&documentType=A75&processType=A16&in_Domain=${eic}&periodStart=${start}&periodEnd=${end}`;
const eiaPath = (query: string) =>
  `/v2/electricity/rto/fuel-type-data/data/?api_key=k&frequency=hourly&data[0]=value&${query}`;

describe('parseA75 on simulated documents', () => {
  it('decodes a PT15M A03 document back to the model: the hourly mean of the published quarters', async () => {
    const profile = europeProfileOf('FI');
    // Three days around the first hour since June with a gap in the mix.
    let gapHour = Date.parse('2025-06-01T00:00Z') / HOUR_MS;
    while (
      hourGap(profile, SEED, gapHour) === null &&
      gapHour < Date.parse('2025-10-01T00:00Z') / HOUR_MS
    )
      gapHour++;
    const start = (gapHour - 36) * HOUR_MS;
    const hours = 72;
    const param = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace(/\D/g, '');
    const result = parseA75(
      await text(a75Path(profile.eic, param(start), param(start + hours * HOUR_MS))),
    );
    if (result.kind !== 'generation') throw new Error(`got ${result.kind}`);
    expect(result.dropped).toEqual([]);
    const generation = result.areas.get(profile.eic);
    const quarters = publishedMix(profile, SEED, start, HOUR_MS / 4, hours * 4);
    let gaps = 0;
    profile.fuels.forEach((fuel, f) => {
      const series = generation?.get(fuel.code);
      for (let h = 0; h < hours; h++) {
        const hourStart = start + h * HOUR_MS;
        if (!isReported(hourGap(profile, SEED, hourStart / HOUR_MS), f)) {
          gaps++;
          expect(series?.has(hourStart / 1000)).not.toBe(true);
          continue;
        }
        const published = [0, 1, 2, 3].map(
          (q) => Math.round((quarters[f]?.[h * 4 + q] ?? 0) * 100) / 100,
        );
        const mean = published.reduce((a, b) => a + b, 0) / 4;
        expect(series?.get(hourStart / 1000)).toBeCloseTo(mean, 6);
      }
    });
    expect(gaps).toBeGreaterThan(0);
  });

  it('keeps pumping (outBiddingZone series) out of generation, without dropping anything', async () => {
    const profile = europeProfileOf('IT-CSUD');
    const start = Date.parse('2023-01-17T00:00Z');
    const result = parseA75(await text(a75Path(profile.eic, '202301170000', '202301180000')));
    if (result.kind !== 'generation') throw new Error(`got ${result.kind}`);
    expect(result.dropped).toEqual([]);
    const pumped = profile.fuels.findIndex((fuel) => fuel.code === 'B10');
    const model = publishedMix(profile, SEED, start, HOUR_MS, 24)[pumped] as Float64Array;
    const generating = [...model].flatMap((mw, h) =>
      mw >= 0 && isReported(hourGap(profile, SEED, start / HOUR_MS + h), pumped)
        ? [(start + h * HOUR_MS) / 1000]
        : [],
    );
    expect([...(result.areas.get(profile.eic)?.get('B10')?.keys() ?? [])]).toEqual(generating);
  });

  it('tells "no data", refusals and broken bodies apart', async () => {
    expect(
      parseA75(await text(a75Path('10YFI-1--------U', '203001010000', '203001020000'))).kind,
    ).toBe('no-data');
    expect(
      parseA75(await text(a75Path('10YFI-1--------U', '202401010000', '202601010000'))).kind,
    ).toBe('upstream-error');
    for (const fault of ['malformed', 'html-page'] as const) {
      sim.setFault({ source: 'europe-tso', fault, count: 1 });
      expect(
        parseA75(await text(a75Path('10YFI-1--------U', '202510200000', '202510210000'))).kind,
      ).toBe('invalid-payload');
    }
  });
});

describe('parseFuelTypeData on simulated pages', () => {
  it('reads a truncated page: total, the warning, values keyed by hour start', async () => {
    const body = await text(
      eiaPath(
        'start=2025-10-01T00&end=2025-10-08T00&sort[0][column]=period&sort[0][direction]=asc',
      ),
    );
    const page = JSON.parse(body) as {
      response: { total: string; data: Record<string, string>[] };
    };
    const result = parseFuelTypeData(body);
    if (result.kind !== 'generation') throw new Error(`got ${result.kind}`);
    expect(result).toMatchObject({
      total: Number(page.response.total),
      rows: 5000,
      truncated: true,
      dropped: [],
    });
    const row = page.response.data[1234] as Record<string, string>;
    const hourStart = Date.parse(`${row.period}:00Z`) / 1000 - 3600;
    expect(
      result.respondents
        .get(row.respondent as string)
        ?.get(row.fueltype as string)
        ?.get(hourStart),
    ).toBe(Number(row.value));
  });

  it('reads an empty page as no generation, and a refused key as an upstream error', async () => {
    const empty = parseFuelTypeData(await text(eiaPath('facets[respondent][]=XX')));
    expect(empty).toMatchObject({ kind: 'generation', total: 0, rows: 0 });
    const refused = parseFuelTypeData(
      await text('/v2/electricity/rto/fuel-type-data/data/?frequency=hourly'),
    );
    expect(refused).toMatchObject({ kind: 'upstream-error', code: 'API_KEY_MISSING' });
  });
});

describe('parseIntensity on simulated replies', () => {
  it('reads forecasts ahead and settled half hours behind', async () => {
    const ahead = parseIntensity(await text('/intensity/2025-10-24T18:01Z/fw48h'));
    if (ahead.kind !== 'half-hours') throw new Error(`got ${ahead.kind}`);
    expect(ahead.dropped).toEqual([]);
    expect(ahead.halfHours).toHaveLength(96);
    expect(
      ahead.halfHours.every(({ actual, forecast }) => actual === null && forecast !== null),
    ).toBe(true);

    const behind = parseIntensity(await text('/intensity/2025-10-24T18:01Z/pt24h'));
    if (behind.kind !== 'half-hours') throw new Error(`got ${behind.kind}`);
    expect(behind.halfHours.every(({ actual }) => actual !== null)).toBe(true);
  });

  it('reads the error body as an upstream error', async () => {
    expect(
      parseIntensity(await text('/intensity/2025-01-01T00:00Z/2025-03-01T00:00Z')),
    ).toMatchObject({
      kind: 'upstream-error',
      code: '400 Bad Request',
    });
  });
});

describe('parseGeneration on simulated replies', () => {
  it('reads the range and the current mix; GB on each basis follows the operator figure', async () => {
    const week = '2025-10-17T18:00Z/2025-10-24T18:00Z';
    const mixes = parseGeneration(await text(`/generation/${week}`));
    const figures = parseIntensity(await text(`/intensity/${week}`));
    if (mixes.kind !== 'mix-half-hours' || figures.kind !== 'half-hours') {
      throw new Error(`got ${mixes.kind}, ${figures.kind}`);
    }
    expect(mixes.dropped).toEqual([]);
    expect(mixes.halfHours).toHaveLength(7 * 48 + 1);
    const { mixes: computed, unknownCodes } = operatorMixes('GB', mixes.halfHours);
    expect(unknownCodes).toEqual([]);
    // One grid behind both: the lifecycle value from the served mix moves with the operator's
    // figure, but is not it (the operator's is direct, imports included).
    const pairs = computed.map(({ ts, lifecycle }) => [
      figures.halfHours.find(({ start }) => start === ts)?.actual ?? NaN,
      lifecycle ?? NaN,
    ]);
    expect(pairs.every(([operator, lifecycle]) => operator! > 0 && lifecycle! > 0)).toBe(true);
    expect(correlation(pairs)).toBeGreaterThan(0.9);
    expect(pairs.some(([operator, lifecycle]) => Math.abs(operator! - lifecycle!) > 10)).toBe(true);

    const current = parseGeneration(await text('/generation'));
    expect(current).toMatchObject({ kind: 'mix-half-hours', dropped: [] });
  });
});

function correlation(pairs: readonly number[][]): number {
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const xs = pairs.map(([x]) => x ?? NaN);
  const ys = pairs.map(([, y]) => y ?? NaN);
  const [mx, my] = [mean(xs), mean(ys)];
  const cov = mean(xs.map((x, i) => (x - mx) * ((ys[i] ?? NaN) - my)));
  const spread = (values: number[], m: number) =>
    Math.sqrt(mean(values.map((value) => (value - m) ** 2)));
  return cov / (spread(xs, mx) * spread(ys, my));
}
