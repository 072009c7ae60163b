import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { computedReading } from '../../test/support/computed-reading.js';
import {
  createThrowawayDatabase,
  isPostgresAvailable,
  type ThrowawayDatabase,
} from '../../test/support/postgres.js';
import { HOUR } from '../core/time.js';
import { CONTRACT_REGISTRY } from '../core/zone-registry.js';
import { createStore } from '../storage/create-store.js';
import type { ReadingChange, Store } from '../storage/store.js';
import { ServedZones } from './served-zones.js';

const DAY = 24 * HOUR;
const START = Date.UTC(2026, 11, 2, 8) / 1000;

const postgresAvailable = await isPostgresAvailable('served-zones postgres suite');
const databases: ThrowawayDatabase[] = [];
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});
afterAll(async () => {
  for (const database of databases) await database.drop();
});

const BACKENDS = [
  { name: 'sqlite', available: true, url: async () => 'sqlite::memory:' },
  {
    name: 'postgres',
    available: postgresAvailable,
    url: async () => {
      const database = await createThrowawayDatabase();
      databases.push(database);
      return database.url;
    },
  },
];

const extraCodes = (served: ServedZones) =>
  served.current.zones.slice(CONTRACT_REGISTRY.zones.length).map((zone) => zone.code);

/** The store, counting the reads of each method that ServedZones may call. */
function counted(inner: Store) {
  const reads = { latestPerZone: 0, readingsInWindow: 0 };
  const proxy = new Proxy(inner, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (property === 'latestPerZone' || property === 'readingsInWindow') reads[property]++;
        return (value as (...given: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, reads };
}

const change = (zone: string): ReadingChange => ({
  zone,
  ts: START - HOUR,
  value: 100,
  method: 'computed:v1',
  published: true,
  lifecycle: 100,
  direct: 90,
  version: 1,
});

for (const backend of BACKENDS) {
  describe.skipIf(!backend.available)(`ServedZones on ${backend.name} (extensions §16)`, () => {
    it('with ZONES=all, serves a node from its first complete mix until 7 days after its last', async () => {
      store = await createStore(await backend.url());
      let now = START;
      const { store: watched, reads } = counted(store);
      const served = new ServedZones('all', watched, () => now * 1000);
      let changes = 0;
      served.onChange(() => changes++);

      await served.resolve();
      expect(served.current.sameAs(CONTRACT_REGISTRY)).toBe(true);
      expect(changes).toBe(0);

      // A partial mix is stored, never published: not yet a zone.
      await store.upsertReadings([
        { ...computedReading('SK', START - HOUR, { nuclear: 100 }), complete: false },
      ]);
      await served.resolve();
      expect(extraCodes(served)).toEqual([]);

      await store.upsertReadings([
        computedReading('US-AECI', START - HOUR, { coal: 100 }),
        computedReading('EE', START - 2 * HOUR, { gas: 50, 'wind-onshore': 50 }),
        // Older complete mixes do not hide the newest.
        computedReading('EE', START - 3 * DAY, { gas: 100 }),
      ]);
      await served.resolve();
      expect(extraCodes(served)).toEqual(['EE', 'US-AECI']);
      expect(served.current.find('ee')?.name).toBe('Estonia');
      expect(changes).toBe(1);

      // The same zones again: no change to tell.
      await served.resolve();
      expect(changes).toBe(1);

      // EE is silent for a week after its last mix; US-AECI keeps publishing.
      now = START + 7 * DAY - 2 * HOUR;
      await store.upsertReadings([computedReading('US-AECI', now - HOUR, { coal: 100 })]);
      await served.resolve();
      expect(extraCodes(served)).toEqual(['EE', 'US-AECI']);
      now += 1;
      await served.resolve();
      expect(extraCodes(served)).toEqual(['US-AECI']);
      expect(changes).toBe(2);

      // One grouped read per resolve, whatever the number of nodes (69): none per node.
      expect(reads).toEqual({ latestPerZone: 6, readingsInWindow: 0 });

      // Stopped (the server closes its store next): nothing is read again.
      await served.stop();
      await store.upsertReadings([computedReading('LV', now - HOUR, { hydro: 10 })]);
      await served.resolve();
      expect(extraCodes(served)).toEqual(['US-AECI']);
      expect(reads.latestPerZone).toBe(6);
    });

    it("resolves again for the reading cache's changes only when an extra node's series changed", async () => {
      store = await createStore(await backend.url());
      const { store: watched, reads } = counted(store);
      const served = new ServedZones('all', watched, () => START * 1000);
      await store.upsertReadings([computedReading('LT', START - HOUR, { hydro: 10 })]);

      // The 45's own changes, most of what is applied, leave the extra nodes as they are.
      await served.resolveFor({
        fromVersion: 1,
        version: 2,
        changes: [change('DE'), change('GB')],
      });
      expect(reads.latestPerZone).toBe(0);
      expect(extraCodes(served)).toEqual([]);

      await served.resolveFor({
        fromVersion: 2,
        version: 3,
        changes: [change('DE'), change('LT')],
      });
      expect(reads.latestPerZone).toBe(1);
      expect(extraCodes(served)).toEqual(['LT']);

      // Everything reloaded (the first load, or too many changes): any node may have come.
      await store.upsertReadings([computedReading('US-DUK', START - HOUR, { gas: 10 })]);
      await served.resolveFor({ fromVersion: 3, version: 4, changes: undefined });
      expect(reads.latestPerZone).toBe(2);
      expect(extraCodes(served)).toEqual(['LT', 'US-DUK']);
      await served.stop();
    });

    it('by default serves the 45 and never reads the store', async () => {
      store = await createStore(await backend.url());
      await store.upsertReadings([computedReading('EE', START - HOUR, { gas: 100 })]);
      const { store: watched, reads } = counted(store);
      const served = new ServedZones('contract', watched, () => START * 1000);
      await served.start();
      await served.resolveFor({ fromVersion: 0, version: 1, changes: [change('EE')] });
      expect(served.current).toBe(CONTRACT_REGISTRY);
      expect(reads).toEqual({ latestPerZone: 0, readingsInWindow: 0 });
      await served.stop();
    });

    it('keeps the zones it serves when the store cannot be read', async () => {
      store = await createStore(await backend.url());
      await store.upsertReadings([computedReading('LT', START - HOUR, { hydro: 10 })]);
      const served = new ServedZones('all', store, () => START * 1000);
      await served.resolve();
      expect(extraCodes(served)).toEqual(['LT']);
      await store.close();
      await served.resolve();
      expect(extraCodes(served)).toEqual(['LT']);
      store = undefined;
    });
  });
}
