import { afterEach, describe, expect, it } from 'vitest';
import { computedReading } from '../../test/support/computed-reading.js';
import { HOUR } from '../core/time.js';
import { CONTRACT_REGISTRY } from '../core/zone-registry.js';
import { createStore } from '../storage/create-store.js';
import type { Store } from '../storage/store.js';
import { ServedZones } from './served-zones.js';

const DAY = 24 * HOUR;
const START = Date.UTC(2026, 11, 2, 8) / 1000;

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

const extraCodes = (served: ServedZones) =>
  served.current.zones.slice(CONTRACT_REGISTRY.zones.length).map((zone) => zone.code);

describe('ServedZones (extensions §16)', () => {
  it('with ZONES=all, serves a node from its first complete mix until 7 days after its last', async () => {
    store = await createStore('sqlite::memory:');
    let now = START;
    const served = new ServedZones('all', store, () => now * 1000);
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

    // Stopped (the server closes its store next): nothing is read again.
    await served.stop();
    await store.upsertReadings([computedReading('LV', now - HOUR, { hydro: 10 })]);
    await served.resolve();
    expect(extraCodes(served)).toEqual(['US-AECI']);
  });

  it('by default serves the 45 and never reads the store', async () => {
    store = await createStore('sqlite::memory:');
    await store.upsertReadings([computedReading('EE', START - HOUR, { gas: 100 })]);
    const served = new ServedZones('contract', store, () => START * 1000);
    await served.start();
    expect(served.current).toBe(CONTRACT_REGISTRY);
    await served.stop();
  });

  it('keeps the zones it serves when the store cannot be read', async () => {
    store = await createStore('sqlite::memory:');
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
