import { describe, expect, it } from 'vitest';
import { simulatorDuringSuite } from '../../test/support/simulator-suite.js';
import { startSimulator } from './index.js';

// The minute the recorded fixtures were fetched, plus a few seconds.
const NOW = Date.parse('2023-03-14T12:01:30Z');
const HOUR_MS = 3_600_000;
const INDEXES = ['very low', 'low', 'moderate', 'high', 'very high'];

const sim = simulatorDuringSuite({ seed: 42, now: () => NOW });

interface Entry {
  from: string;
  to: string;
  intensity: { forecast: number; actual: number | null; index: string };
}

async function intensity(path: string, base = sim.url) {
  const response = await fetch(`${base}${path}`, { headers: { accept: 'application/json' } });
  return { response, body: (await response.json()) as { data: Entry[] } };
}

function expectWellFormed(entries: Entry[]): void {
  for (const { from, to, intensity: value } of entries) {
    expect(from).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:[03]0Z$/);
    expect(Date.parse(to) - Date.parse(from)).toBe(HOUR_MS / 2);
    expect(Number.isInteger(value.forecast)).toBe(true);
    expect(value.actual === null || Number.isInteger(value.actual)).toBe(true);
    expect(INDEXES).toContain(value.index);
  }
}

describe('NESO intensity', () => {
  it('fw48h: 96 half hours from the one containing {from}, no actuals', async () => {
    const { response, body } = await intensity('/intensity/2023-03-14T12:01Z/fw48h');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(body.data).toHaveLength(96);
    expect(body.data[0]).toMatchObject({ from: '2023-03-14T12:00Z', to: '2023-03-14T12:30Z' });
    expect(body.data.at(-1)?.to).toBe('2023-03-16T12:00Z');
    expect(body.data.every((entry) => entry.intensity.actual === null)).toBe(true);
    expectWellFormed(body.data);
  });

  it('pt24h: the 48 half hours before {from}, all settled', async () => {
    const { body } = await intensity('/intensity/2023-03-14T12:01Z/pt24h');
    expect(body.data).toHaveLength(48);
    expect(body.data[0]?.from).toBe('2023-03-13T12:00Z');
    expect(body.data.at(-1)?.to).toBe('2023-03-14T12:00Z');
    expect(body.data.every((entry) => entry.intensity.actual !== null)).toBe(true);
    expectWellFormed(body.data);
  });

  it('fw24h: 48 half hours', async () => {
    const { body } = await intensity('/intensity/2023-03-14T12:01Z/fw24h');
    expect(body.data).toHaveLength(48);
  });

  it('{from}/{to}: the half hours ending in [from, to], so a boundary brings the one before', async () => {
    const onBoundary = await intensity('/intensity/2023-03-01T00:00Z/2023-03-02T00:00Z');
    expect(onBoundary.body.data).toHaveLength(49);
    expect(onBoundary.body.data[0]?.from).toBe('2023-02-28T23:30Z');
    const offBoundary = await intensity('/intensity/2023-03-01T00:01Z/2023-03-02T00:00Z');
    expect(offBoundary.body.data).toHaveLength(48);
    expect(offBoundary.body.data[0]?.from).toBe('2023-03-01T00:00Z');
    const withSeconds = await intensity('/intensity/2023-03-01T00:01:00Z/2023-03-02T00:00:00Z');
    expect(withSeconds.body).toEqual(offBoundary.body);
  });

  it('/intensity/{from}: the half hour containing {from}', async () => {
    const { body } = await intensity('/intensity/2023-03-10T08:45Z');
    expect(body.data.map((entry) => entry.from)).toEqual(['2023-03-10T08:30Z']);
  });

  it('/intensity: the latest complete half hour, with its actual', async () => {
    const { body } = await intensity('/intensity');
    expect(body.data).toHaveLength(1);
    expect(body.data[0]).toMatchObject({ from: '2023-03-14T11:30Z', to: '2023-03-14T12:00Z' });
    expect(body.data[0]?.intensity.actual).not.toBeNull();
  });

  it('forecasts 48 hours ahead: actual null from the current half hour on, nothing beyond', async () => {
    const { body } = await intensity('/intensity/2023-03-14T10:01Z/2023-03-17T10:00Z');
    const current = body.data.findIndex((entry) => entry.from === '2023-03-14T12:00Z');
    expect(current).toBe(4);
    expect(body.data.slice(0, current).every((entry) => entry.intensity.actual !== null)).toBe(
      true,
    );
    expect(body.data.slice(current).every((entry) => entry.intensity.actual === null)).toBe(true);
    expect(body.data.at(-1)?.to).toBe('2023-03-16T12:00Z');
  });

  it('revises actuals for a day and forecasts with every issue, then settles', async () => {
    const moving = await startSimulator({ seed: 42, now: () => NOW });
    try {
      const at = async (now: number, path: string) => {
        moving.setNow(now);
        return (await intensity(path, moving.url)).body.data.map((entry) => entry.intensity);
      };
      const past = '/intensity/2023-03-13T12:01Z/2023-03-14T12:00Z';
      const actuals = async (now: number) => (await at(now, past)).map((value) => value.actual);
      expect(await actuals(NOW + 2 * HOUR_MS)).not.toEqual(await actuals(NOW));
      expect(await actuals(NOW + 48 * HOUR_MS)).toEqual(await actuals(NOW + 30 * HOUR_MS));

      const ahead = '/intensity/2023-03-14T20:01Z/2023-03-15T08:00Z';
      const forecasts = async (now: number) =>
        (await at(now, ahead)).map((value) => value.forecast);
      expect(await forecasts(NOW + HOUR_MS)).not.toEqual(await forecasts(NOW));
    } finally {
      await moving.close();
    }
  });
});

describe('NESO refusals', () => {
  const cases: [string, string, number, RegExp][] = [
    ['more than 14 days', '/intensity/2023-01-01T00:00Z/2023-01-15T00:01Z', 400, /14 days/],
    [
      'an end before the start',
      '/intensity/2023-01-02T00:00Z/2023-01-01T00:00Z',
      400,
      /after the from/,
    ],
    ['a date without time', '/intensity/2023-01-01/fw24h', 400, /valid ISO 8601/],
    ['an impossible date', '/intensity/2023-02-30T00:00Z/fw24h', 400, /valid ISO 8601/],
    ['an unknown route', '/intensity/2023-01-01T00:00Z/fw24h/extra', 404, /No route/],
  ];
  it.each(cases)('answers %s with %i', async (_, path, status, message) => {
    const response = await fetch(`${sim.url}${path}`);
    expect(response.status).toBe(status);
    expect(await response.json()).toEqual({
      error: {
        code: expect.stringMatching(new RegExp(`^${status} `)),
        message: expect.stringMatching(message),
      },
    });
  });

  it('accepts exactly 14 days', async () => {
    const { response, body } = await intensity('/intensity/2023-01-01T00:01Z/2023-01-15T00:01Z');
    expect(response.status).toBe(200);
    expect(body.data).toHaveLength(14 * 48);
  });
});

describe('NESO generation mix', () => {
  interface MixEntry {
    from: string;
    to: string;
    generationmix: { fuel: string; perc: number }[];
  }
  const FUELS = ['biomass', 'coal', 'imports', 'gas', 'nuclear', 'other', 'hydro', 'solar', 'wind'];
  const get = async <T>(path: string, base = sim.url) => {
    const response = await fetch(`${base}${path}`, { headers: { accept: 'application/json' } });
    return { status: response.status, body: (await response.json()) as T };
  };
  const percOf = (entry: MixEntry | undefined, fuel: string) =>
    entry?.generationmix.find((item) => item.fuel === fuel)?.perc;

  it('range: from the half hour ending at a boundary {from} up to the one in progress', async () => {
    const { body } = await get<{ data: MixEntry[] }>(
      '/generation/2023-03-13T12:00Z/2023-03-15T12:00Z',
    );
    expect(body.data[0]?.from).toBe('2023-03-13T11:30Z');
    // NOW is 12:01:30Z on the 14th: nothing after the half hour in progress.
    expect(body.data.at(-1)?.from).toBe('2023-03-14T12:00Z');
    expect(body.data).toHaveLength(50);
    const offBoundary = await get<{ data: MixEntry[] }>(
      '/generation/2023-03-13T12:01Z/2023-03-14T12:00Z',
    );
    expect(offBoundary.body.data[0]?.from).toBe('2023-03-13T12:00Z');
    for (const entry of body.data) {
      expect(entry.generationmix.map(({ fuel }) => fuel)).toEqual(FUELS);
      // Shares of generation and imports, one decimal each: close to 100, not always exactly.
      const sum = entry.generationmix.reduce((total, { perc }) => total + perc, 0);
      expect(Math.abs(sum - 100)).toBeLessThanOrEqual(0.5);
    }
  });

  it('/generation: the half hour in progress, provisional until it is over', async () => {
    const { body } = await get<{ data: MixEntry }>('/generation');
    expect(body.data).toMatchObject({ from: '2023-03-14T12:00Z', to: '2023-03-14T12:30Z' });
    // As recorded: other and hydro are missing from the current mix, and come later.
    expect([percOf(body.data, 'other'), percOf(body.data, 'hydro')]).toEqual([0, 0]);
    const later = await startSimulator({ seed: 42, now: () => NOW + HOUR_MS });
    try {
      const { body: revised } = await get<{ data: MixEntry[] }>(
        '/generation/2023-03-14T12:01Z/2023-03-14T12:30Z',
        later.url,
      );
      expect(revised.data).toHaveLength(1);
      expect(percOf(revised.data[0], 'hydro')).toBeGreaterThan(0);
      expect(percOf(revised.data[0], 'other')).toBeGreaterThan(0);
      expect(percOf(revised.data[0], 'gas')).not.toBe(percOf(body.data, 'gas'));
    } finally {
      await later.close();
    }
  });

  const refusals: [string, string, number, RegExp][] = [
    ['more than 14 days', '/generation/2023-01-01T00:00Z/2023-01-15T00:01Z', 400, /14 days/],
    ['an end before the start', '/generation/2023-01-02T00:00Z/2023-01-01T00:00Z', 400, /after/],
    ['a date without time', '/generation/2023-01-01/2023-01-02T00:00Z', 400, /valid ISO 8601/],
    ['a lone {from}', '/generation/2023-01-01T00:00Z', 404, /No route/],
  ];
  it.each(refusals)(
    'answers %s with %i and the error envelope',
    async (_, path, status, message) => {
      const { status: answered, body } = await get<unknown>(path);
      expect(answered).toBe(status);
      expect(body).toEqual({
        error: {
          code: expect.stringMatching(new RegExp(`^${status} `)),
          message: expect.stringMatching(message),
        },
      });
    },
  );
});
