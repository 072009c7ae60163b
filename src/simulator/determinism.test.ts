import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from './index.js';

const NOW = Date.parse('2025-10-24T18:00:00Z');

const PATHS = [
  '/api?securityToken=t&documentType=A75&processType=A16&in_Domain=10Y1001A1001A82H&periodStart=202510010000&periodEnd=202510080000',
  '/api?securityToken=t&documentType=A75&processType=A16&in_Domain=10Y1001A1001A71M&periodStart=202510010000&periodEnd=202510080000',
  '/v2/electricity/rto/fuel-type-data/data/?api_key=k&frequency=hourly&data[0]=value&start=2025-10-01T00&end=2025-10-08T00',
  '/intensity/2025-10-01T00:00Z/2025-10-08T00:00Z',
];

let first: Simulator;
let twin: Simulator;
let otherSeed: Simulator;
beforeAll(async () => {
  [first, twin, otherSeed] = await Promise.all([
    startSimulator({ seed: 5, now: () => NOW }),
    startSimulator({ seed: 5, now: () => NOW }),
    startSimulator({ seed: 6, now: () => NOW }),
  ]);
});
afterAll(() => Promise.all([first.close(), twin.close(), otherSeed.close()]));

const bytes = async (sim: Simulator, path: string) =>
  Buffer.from(await (await fetch(`${sim.url}${path}`)).arrayBuffer());

describe('determinism', () => {
  it.each(PATHS)('same seed and clock, same bytes: %s', async (path) => {
    const [a, b, c] = await Promise.all([
      bytes(first, path),
      bytes(twin, path),
      bytes(otherSeed, path),
    ]);
    expect(a.length).toBeGreaterThan(1000);
    expect(a.equals(b)).toBe(true);
    expect(a.equals(c)).toBe(false);
  });

  it('keeps no state: a day alone equals the same day inside a week', async () => {
    const day = 'periodStart=202510030000&periodEnd=202510040000';
    const week = 'periodStart=202510010000&periodEnd=202510080000';
    const a75 = (window: string) =>
      `/api?securityToken=t&documentType=A75&processType=A16&in_Domain=10YES-REE------0&${window}&psrType=B19`;
    // An hourly A01 document with one Period: (instant, quantity) per Point.
    const points = async (window: string) => {
      const body = (await bytes(first, a75(window))).toString();
      const periodStart = Date.parse([...body.matchAll(/<start>([^<]*)</g)][1]?.[1] ?? '');
      return [...body.matchAll(/<position>(\d+)<\/position>\s*<quantity>([^<]*)</g)].map(
        ([, position, quantity]) => [periodStart + (Number(position) - 1) * 3_600_000, quantity],
      );
    };
    const dayPoints = await points(day);
    expect(dayPoints.length).toBeGreaterThan(20);
    expect(await points(week)).toEqual(expect.arrayContaining(dayPoints));

    const eia = (window: string) =>
      `/v2/electricity/rto/fuel-type-data/data/?api_key=k&data[0]=value&facets[respondent][]=TVA&${window}`;
    const rows = async (window: string) =>
      JSON.parse((await bytes(first, eia(window))).toString()).response.data as unknown[];
    const wide = await rows('start=2025-10-01T00&end=2025-10-08T00');
    const narrow = await rows('start=2025-10-03T05&end=2025-10-03T05');
    expect(wide).toEqual(expect.arrayContaining(narrow));

    const neso = async (path: string) =>
      JSON.parse((await bytes(first, path)).toString()).data as unknown[];
    const fortnight = await neso('/intensity/2025-09-20T00:01Z/2025-10-04T00:00Z');
    expect(fortnight.slice(96, 144)).toEqual(
      await neso('/intensity/2025-09-22T00:01Z/2025-09-23T00:00Z'),
    );
  });
});
