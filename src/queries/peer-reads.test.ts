import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computedReading } from '../../test/support/computed-reading.js';
import type { ConsumptionRow } from '../core/consumption/series-row.js';
import { HOUR } from '../core/time.js';
import { findZone, type Zone } from '../core/zones.js';
import type { ReadModel } from '../read/read-model.js';
import { ReadingCache } from '../read/reading-cache.js';
import { Reads } from '../read/reads.js';
import { createStore } from '../storage/create-store.js';
import type { Store } from '../storage/store.js';
import { PeerReads } from './peer-reads.js';

/**
 * The Electricity Maps shim's reads (extensions §15, Compat): each part of an answer is one call
 * of the read model, from memory and from the store alike, and holds each hour's consumption
 * value where there is one, else its production value.
 */

const T0 = Date.UTC(2026, 10, 20, 0) / 1000;
const AT = findZone('AT')!;
const GB = findZone('GB')!;

const traced = (zone: string, ts: number, lifecycle: number): ConsumptionRow => ({
  zone,
  ts,
  lifecycle,
  direct: lifecycle / 2,
  consumption: { hydro: 10, 'imported-estimated': 2 },
  imports: { DE: 5 },
  exports: {},
  estimatedPct: 100 / 6,
  estimatedBorders: [],
  renewablePct: 83.3,
  lowCarbonPct: 83.3,
});

let store: Store;
let cache: ReadingCache;
beforeAll(async () => {
  store = await createStore('sqlite::memory:');
  // AT: four published hours, the middle two traced; the newest not traced yet.
  await store.upsertReadings(
    [0, 1, 2, 3].map((k) => computedReading('AT', T0 + k * HOUR, { gas: 100 + k, hydro: 50 })),
  );
  await store.replaceConsumption('europe', {
    hours: [T0 + HOUR, T0 + 2 * HOUR],
    rows: [traced('AT', T0 + HOUR, 111.11), traced('AT', T0 + 2 * HOUR, 222.22)],
  });
  cache = new ReadingCache(store, undefined, { pollMs: 60_000 });
  await cache.refresh();
});
afterAll(async () => {
  await cache?.stop();
  await store?.close();
});

/** PeerReads on the read model `reads` answers with, counting the calls made of that model. */
function countedPeer(reads: Reads) {
  const calls: string[] = [];
  const model = reads.current();
  const counting = new Proxy(model, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(property));
        return (value as (...given: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  const counted = Object.assign(Object.create(reads) as Reads, {
    current: (): ReadModel => counting,
  });
  return { peer: new PeerReads(counted, 5000, 'consumption'), calls };
}

const models = () => [
  { name: 'memory', reads: new Reads(store, cache, () => new Error('unavailable')) },
  { name: 'store', reads: new Reads(store, undefined, () => new Error('unavailable')) },
];

describe('PeerReads for Electricity Maps (consumption where traced)', () => {
  it.each(['memory', 'store'])(
    'reads each part of an answer with one call, from %s',
    async (name) => {
      const { reads } = models().find((model) => model.name === name)!;
      expect(reads.current().inMemory).toBe(name === 'memory');
      const { peer, calls } = countedPeer(reads);
      const window = async (zone: Zone) => {
        calls.length = 0;
        const readings = await peer.readingsIn(zone, T0, T0 + 4 * HOUR, 'lifecycle');
        return { readings, calls: [...calls] };
      };

      const at = await window(AT);
      expect(at.calls).toEqual(['consumptionWhereTraced']);
      expect(at.readings.map((reading) => [reading.value, reading.method])).toEqual([
        [expect.any(Number), 'computed:v1'],
        [111.1, 'computed:v1:consumption'],
        [222.2, 'computed:v1:consumption'],
        [expect.any(Number), 'computed:v1'],
      ]);
      // GB has no consumption series: its production values, read as before.
      expect((await window(GB)).calls).toEqual(['window']);

      calls.length = 0;
      const newest = await peer.newestReading(AT, 'direct');
      expect(calls).toEqual(['newestWhereTraced']);
      // The newest hour is not traced yet: its production value.
      expect(newest).toMatchObject({ ts: T0 + 3 * HOUR, method: 'computed:v1:direct' });

      calls.length = 0;
      const mixes = await peer.hourlyMixesIn(AT, T0, T0 + 4 * HOUR);
      expect(calls).toEqual(['mixesWithTraced']);
      expect(mixes.map((point) => point.traced?.imports ?? null)).toEqual([
        null,
        { DE: 5 },
        { DE: 5 },
        null,
      ]);
    },
  );

  it('answers the same from memory and from the store', async () => {
    const [memory, stored] = models().map(({ reads }) => new PeerReads(reads, 5000, 'consumption'));
    for (const basis of ['lifecycle', 'direct'] as const) {
      expect(await memory!.readingsIn(AT, T0, T0 + 4 * HOUR, basis)).toEqual(
        await stored!.readingsIn(AT, T0, T0 + 4 * HOUR, basis),
      );
      expect(await memory!.newestReading(AT, basis)).toEqual(
        await stored!.newestReading(AT, basis),
      );
    }
  });
});
