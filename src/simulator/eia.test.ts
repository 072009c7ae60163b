import { describe, expect, it } from 'vitest';
import { simulatorDuringSuite } from '../../test/support/simulator-suite.js';
import { startSimulator } from './index.js';
import type { EiaRow } from './eia.js';
import { US_PROFILES } from './zone-profiles.js';

const NOW = Date.parse('2025-10-24T12:00:00Z');
const HOUR_MS = 3_600_000;
const ROUTE = '/v2/electricity/rto/fuel-type-data/data/';

const sim = simulatorDuringSuite({ seed: 42, now: () => NOW });

interface EiaBody {
  response: { warnings?: { warning: string }[]; total: string; data: EiaRow[] };
  request: { command: string; params: Record<string, unknown> };
  apiVersion: string;
}

async function eia(query: string, base = sim.url) {
  const response = await fetch(`${base}${ROUTE}?${query}`);
  return { response, body: (await response.json()) as EiaBody };
}

const standard =
  'api_key=k&frequency=hourly&data[0]=value&sort[0][column]=period&sort[0][direction]=asc';
// The zones' respondents: the tests that read every row need no more.
const zoneRespondents = US_PROFILES.map(
  (profile) => `facets[respondent][]=${profile.respondent}`,
).join('&');

async function allPages(query: string): Promise<{ rows: EiaRow[]; pages: EiaBody[] }> {
  const rows: EiaRow[] = [];
  const pages: EiaBody[] = [];
  for (let offset = 0, page = 0; page < 100; page++) {
    const { body } = await eia(`${query}&offset=${offset}&length=5000`);
    pages.push(body);
    rows.push(...body.response.data);
    offset += body.response.data.length;
    if (offset >= Number(body.response.total)) break;
  }
  return { rows, pages };
}

describe('EIA fuel-type-data', () => {
  it('answers in the 2.1.8 shape: strings for total and values, the request echoed with its key', async () => {
    const { response, body } = await eia(
      `${standard}&facets[respondent][]=PJM&start=2025-10-20T01&end=2025-10-20T03&offset=0&length=5000`,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(body.apiVersion).toBe('2.1.8');
    expect(body.response).toMatchObject({
      total: '24',
      dateFormat: 'YYYY-MM-DD"T"HH24',
      frequency: 'hourly',
    });
    expect(body.response.warnings).toBeUndefined();
    expect(body.request).toEqual({
      command: ROUTE,
      params: {
        frequency: 'hourly',
        data: ['value'],
        facets: { respondent: ['PJM'] },
        start: '2025-10-20T01',
        end: '2025-10-20T03',
        sort: [{ column: 'period', direction: 'asc' }],
        offset: '0',
        length: '5000',
        api_key: 'k',
      },
    });
    // Both ends inclusive, compared as period strings; a period labels the END of its hour.
    expect([...new Set(body.response.data.map((row) => row.period))]).toEqual([
      '2025-10-20T01',
      '2025-10-20T02',
      '2025-10-20T03',
    ]);
    expect(body.response.data[0]).toEqual({
      period: '2025-10-20T01',
      respondent: 'PJM',
      'respondent-name': 'PJM Interconnection, LLC',
      fueltype: 'COL',
      'type-name': 'Coal',
      value: expect.stringMatching(/^-?\d+$/),
      'value-units': 'megawatthours',
    });
    // Within an hour: respondents, then fuel types, in code order.
    const codes = body.response.data
      .filter((row) => row.period === '2025-10-20T02')
      .map((row) => row.fueltype);
    expect(codes).toEqual([...codes].sort());
  });

  it('accepts data[]=value, and without data sends rows without values', async () => {
    const window = 'api_key=k&facets[respondent][]=CISO&start=2025-10-20T01&end=2025-10-20T01';
    const withValues = await eia(`${window}&data[]=value`);
    expect(withValues.body.response.data[0]?.value).toMatch(/^-?\d+$/);
    const without = await eia(window);
    expect(without.body.response.data.length).toBeGreaterThan(0);
    expect(
      without.body.response.data.every((row) => !('value' in row) && !('value-units' in row)),
    ).toBe(true);
  });

  it('repeats facets, and an unknown facet value just matches no rows', async () => {
    const window = `${standard}&start=2025-10-20T01&end=2025-10-20T05`;
    const { body } = await eia(
      `${window}&facets[respondent][]=ERCO&facets[respondent][]=BPAT&facets[fueltype][]=NG&facets[fueltype][]=WAT`,
    );
    expect(new Set(body.response.data.map((row) => row.respondent))).toEqual(
      new Set(['BPAT', 'ERCO']),
    );
    expect(new Set(body.response.data.map((row) => row.fueltype))).toEqual(new Set(['NG', 'WAT']));
    const none = await eia(`${window}&facets[respondent][]=ERCOT`);
    expect(none.response.status).toBe(200);
    expect(none.body.response).toMatchObject({ total: '0', data: [] });
  });

  it('pages by 5000 with the "incomplete return" warning, and the pages add up to total', async () => {
    const query = `${standard}&${zoneRespondents}&start=2025-10-10T00&end=2025-10-13T23`;
    const { rows, pages } = await allPages(query);
    expect(pages.length).toBeGreaterThan(1);
    expect(pages[0]?.response.data).toHaveLength(5000);
    expect(pages[0]?.response.warnings?.[0]?.warning).toBe('incomplete return');
    expect(pages.at(-1)?.response.warnings).toBeUndefined();
    expect(rows).toHaveLength(Number(pages[0]?.response.total));
    const keys = rows.map((row) => `${row.period} ${row.respondent} ${row.fueltype}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toEqual([...keys].sort());

    const capped = await eia(`${query}&length=9000`);
    expect(capped.body.response.data).toHaveLength(5000);
    expect(capped.body.response.warnings).toHaveLength(1);
    const small = await eia(`${query}&length=100&offset=50`);
    expect(small.body.response.data).toHaveLength(100);
    expect(small.body.response.data[0]).toEqual(rows[50]);
    expect(small.body.response.warnings).toBeUndefined();
  });

  it('sorts descending on request', async () => {
    const { body } = await eia(
      'api_key=k&data[0]=value&facets[respondent][]=MISO&start=2025-10-20T00&end=2025-10-20T05&sort[0][column]=period&sort[0][direction]=desc',
    );
    const periods = body.response.data.map((row) => row.period);
    expect(periods[0]).toBe('2025-10-20T05');
    expect(periods).toEqual([...periods].sort().reverse());
  });

  it.each([
    ['US', 'US48'],
    ['US-PJM', 'PJM'],
    ['US-BPA', 'BPAT'],
    ['US-ERCOT', 'ERCO'],
  ])('publishes %s (respondent %s) 11 to 30 hours late', async (zone, respondent) => {
    const lagMinutes = sim.state().publicationLagMinutes[zone] as number;
    expect(lagMinutes / 60).toBeGreaterThanOrEqual(11);
    expect(lagMinutes / 60).toBeLessThanOrEqual(30);
    const { body } = await eia(
      `api_key=k&data[0]=value&facets[respondent][]=${respondent}&start=2025-10-22T00&sort[0][column]=period&sort[0][direction]=desc&length=1`,
    );
    const latestEnd = Math.floor((NOW - lagMinutes * 60_000) / HOUR_MS) * HOUR_MS;
    expect(body.response.data[0]?.period).toBe(new Date(latestEnd).toISOString().slice(0, 13));
  });

  it('revises recent hours: the same hour differs when asked later, and settles after a day', async () => {
    const moving = await startSimulator({ seed: 42, now: () => NOW });
    try {
      // The three latest published hours: still preliminary at NOW.
      const lagMs = (moving.state().publicationLagMinutes['US'] as number) * 60_000;
      const latest = Math.floor((NOW - lagMs) / HOUR_MS) * HOUR_MS;
      const label = (ms: number) => new Date(ms).toISOString().slice(0, 13);
      const query = `${standard}&facets[respondent][]=US48&start=${label(latest - 2 * HOUR_MS)}&end=${label(latest)}`;
      const valuesAt = async (now: number) => {
        moving.setNow(now);
        return (await eia(query, moving.url)).body.response.data.map((row) => row.value);
      };
      const first = await valuesAt(NOW);
      expect(first.length).toBeGreaterThan(0);
      expect(await valuesAt(NOW + 6 * HOUR_MS)).not.toEqual(first);
      const settled = await valuesAt(NOW + 48 * HOUR_MS);
      expect(await valuesAt(NOW + 96 * HOUR_MS)).toEqual(settled);
    } finally {
      await moving.close();
    }
  });

  it('shows the feed quirks: a missing fuel type, a partial-mix hour, small negatives', async () => {
    const { rows } = await allPages(
      `${standard}&${zoneRespondents}&start=2025-08-01T00&end=2025-09-30T23`,
    );
    const perGroup = new Map<string, number>();
    for (const row of rows) {
      const key = `${row.period} ${row.respondent}`;
      perGroup.set(key, (perGroup.get(key) ?? 0) + 1);
    }
    const usual = new Map<string, number>();
    for (const [key, count] of perGroup) {
      const respondent = key.split(' ')[1] as string;
      usual.set(respondent, Math.max(usual.get(respondent) ?? 0, count));
    }
    const respondentOf = (key: string): string => key.split(' ')[1] as string;
    const groups = [...perGroup].map(([key, count]) => ({
      count,
      usual: usual.get(respondentOf(key)) ?? 0,
    }));
    // One type missing now and then; a partial mix (one row only) rarely.
    expect(groups.filter(({ count, usual }) => count === usual - 1).length).toBeGreaterThan(10);
    expect(groups.filter(({ count, usual }) => count === 1 && usual > 2).length).toBeGreaterThan(0);
    expect(rows.some((row) => row.fueltype === 'SUN' && Number(row.value) < 0)).toBe(true);
  });
});

describe('EIA refusals', () => {
  it('answers a missing key with 403 API_KEY_MISSING, as the api.data.gov gateway does', async () => {
    const response = await fetch(`${sim.url}${ROUTE}?frequency=hourly`);
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({
      error: {
        code: 'API_KEY_MISSING',
        message: expect.stringContaining('No api_key was supplied'),
      },
    });
  });

  it('answers a wrong key with 403 API_KEY_INVALID when a key is configured', async () => {
    const guarded = await startSimulator({
      seed: 1,
      now: () => NOW,
      credentials: { 'us-agency': 'right' },
    });
    try {
      const wrong = await fetch(`${guarded.url}${ROUTE}?api_key=wrong&frequency=hourly`);
      expect(wrong.status).toBe(403);
      expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe(
        'API_KEY_INVALID',
      );
      expect(
        (await fetch(`${guarded.url}${ROUTE}?api_key=right&frequency=hourly&end=2019-01-01T00`))
          .status,
      ).toBe(200);
    } finally {
      await guarded.close();
    }
  });

  const cases: [string, string, number, RegExp][] = [
    ['another frequency', 'frequency=local-hourly', 400, /Invalid frequency 'local-hourly'/],
    ['another data column', 'data[0]=price', 400, /Invalid data 'price'/],
    ['another facet', 'facets[type][]=NG', 400, /Invalid facet 'type'/],
    ['a malformed start', 'start=2025-10-20 01', 400, /Invalid start/],
    ['an impossible end', 'end=2025-02-30T00', 400, /Invalid end/],
    ['another sort column', 'sort[0][column]=value', 400, /Invalid sort column/],
    [
      'another sort direction',
      'sort[0][column]=period&sort[0][direction]=up',
      400,
      /Invalid sort direction/,
    ],
    ['a negative offset', 'offset=-1', 400, /Invalid offset/],
    ['a fractional length', 'length=1.5', 400, /Invalid length/],
  ];
  it.each(cases)('answers %s with %i', async (_, query, status, message) => {
    const { response, body } = await eia(`api_key=k&${query}`);
    expect(response.status).toBe(status);
    expect(body).toEqual({ error: expect.stringMatching(message), code: status });
  });

  it('answers another route with 404', async () => {
    const response = await fetch(`${sim.url}/v2/electricity/rto/daily-region-data/data/?api_key=k`);
    expect(response.status).toBe(404);
  });
});
