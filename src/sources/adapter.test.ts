import { describe, expect, it } from 'vitest';
import type { ZoneReadings } from '../core/method.js';
import type { StoredForecast } from '../core/reading.js';
import type { ZoneMixes } from '../core/uk-operator.js';
import { zonesOfSource } from '../core/zones.js';
import { eachZone, failureOf, isForecastOutcome, type ZoneOutcome } from './adapter.js';
import { UpstreamError } from './http.js';

const [GB] = zonesOfSource('uk-operator');
const TS = Date.UTC(2026, 10, 20) / 1000;
const forecast: StoredForecast = {
  zone: 'GB',
  ts: TS,
  kind: 'uk-operator:fw48h',
  issuedAt: TS,
  value: 120,
};
// A feed of actuals may carry forecasts beside its readings (GB's operator forecast): it is still
// a readings outcome, which is why outcomes are told apart by kind, not by their properties.
const readings: ZoneReadings = {
  readings: [],
  forecasts: [forecast],
  quality: {
    zone: 'GB',
    pointsStored: 0,
    incompleteHours: 0,
    clampedNegatives: 0,
    unknownCodes: [],
  },
};
const mixes: ZoneMixes = { mixes: [], unknownCodes: ['WAVE'] };
const refused = new UpstreamError('temporary', 'upstream down');

async function outcomesOf(generator: AsyncGenerator<ZoneOutcome>): Promise<ZoneOutcome[]> {
  const outcomes: ZoneOutcome[] = [];
  for await (const outcome of generator) outcomes.push(outcome);
  return outcomes;
}

describe('eachZone', () => {
  it('tags each outcome with the kind of the feed that made it', async () => {
    const outcomes = await outcomesOf(
      eachZone(
        [GB!],
        {},
        { kind: 'readings', fetch: async () => readings },
        { kind: 'mixes', fetch: async () => mixes },
        { kind: 'forecasts', fetch: async () => [forecast] },
      ),
    );
    expect(outcomes).toEqual([
      { kind: 'readings', zone: 'GB', ...readings },
      { kind: 'mixes', zone: 'GB', ...mixes },
      { kind: 'forecasts', zone: 'GB', forecasts: [forecast] },
    ]);
    expect(outcomes.map(isForecastOutcome)).toEqual([false, false, true]);
    expect(outcomes.map(failureOf)).toEqual([undefined, undefined, undefined]);
  });

  it('tells a failed feed of actuals from a failed forecast feed', async () => {
    const outcomes = await outcomesOf(
      eachZone(
        [GB!],
        {},
        { kind: 'readings', fetch: () => Promise.reject(refused) },
        { kind: 'mixes', fetch: () => Promise.reject(new Error('bug')) },
        { kind: 'forecasts', fetch: () => Promise.reject(refused) },
      ),
    );
    expect(outcomes.map(({ kind }) => kind)).toEqual([
      'actuals-failed',
      'actuals-failed',
      'forecasts-failed',
    ]);
    expect(outcomes.map(isForecastOutcome)).toEqual([false, false, true]);
    expect(failureOf(outcomes[0]!)).toBe(refused);
    // Anything unexpected is an invalid payload (asUpstreamError).
    expect(failureOf(outcomes[1]!)?.kind).toBe('invalid');
    expect(failureOf(outcomes[2]!)).toBe(refused);
  });

  it('starts no further feed once the signal is aborted', async () => {
    const controller = new AbortController();
    const asked: string[] = [];
    const outcomes = await outcomesOf(
      eachZone(
        [GB!],
        { signal: controller.signal },
        {
          kind: 'readings',
          fetch: async () => {
            asked.push('readings');
            controller.abort();
            return readings;
          },
        },
        {
          kind: 'mixes',
          fetch: async () => {
            asked.push('mixes');
            return mixes;
          },
        },
      ),
    );
    expect(asked).toEqual(['readings']);
    expect(outcomes.map(({ kind }) => kind)).toEqual(['readings']);
  });
});
