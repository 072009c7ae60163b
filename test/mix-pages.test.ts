import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredReading } from '../src/core/reading.js';
import { ZONES } from '../src/core/zones.js';
import { DataResponder, MIX_PAGE_ROWS } from '../src/http/transport/data-responder.js';
import { ReadingCache } from '../src/read/reading-cache.js';
import { Reads } from '../src/read/reads.js';
import { createStore } from '../src/storage/create-store.js';
import type { Store } from '../src/storage/store.js';
import { computed, H, HOUR_NOW } from './support/fixed-store.js';

/**
 * `/v1/mix` bodies are read a page at a time, with turns of the event loop between pages
 * (issue 21), so the data can change while one is read: such a body may be sent, but never kept
 * for the requests that follow.
 */

const FR = ZONES.find((zone) => zone.code === 'FR')!;
/** Three pages of hourly mixes. */
const FROM = HOUR_NOW - 3 * MIX_PAGE_ROWS * H;
const withGas = (hour: number, gas: number): StoredReading => ({
  ...computed('FR', FROM + hour * H, 100),
  mix: { gas, nuclear: 90 },
});

describe('DataResponder.mix, read over several turns of the event loop', () => {
  let store: Store;
  let cache: ReadingCache;
  let responder: DataResponder;

  beforeAll(async () => {
    store = await createStore('sqlite::memory:');
    await store.upsertReadings(Array.from({ length: 3 * MIX_PAGE_ROWS }, (_, i) => withGas(i, 10)));
    cache = new ReadingCache(store, undefined);
    await cache.refresh();
    responder = new DataResponder(new Reads(store, cache, () => new Error('store unavailable')));
  });
  afterAll(async () => {
    await cache.stop();
    await store.close();
  });

  const firstGas = async (): Promise<number> => {
    const body = (await responder.mix(FR, FROM, HOUR_NOW)).body.toString();
    return (JSON.parse(body) as { data: { generation: { gas: number } }[] }).data[0]!.generation
      .gas;
  };

  it('keeps no body read across a change, even when the same window was asked meanwhile', async () => {
    // Asked once: from its next request on, the window's body may be kept.
    expect(await firstGas()).toBe(10);
    const read = store.mixesInWindow.bind(store);
    let reads = 0;
    let meanwhile: number | undefined;
    store.mixesInWindow = async (zone, from, to, limit) => {
      // After the first page: the first hour changes, and another request of the window runs.
      if (++reads === 2) {
        await store.upsertReadings([withGas(0, 20)]);
        await cache.refresh();
        meanwhile = await firstGas();
      }
      return read(zone, from, to, limit);
    };
    let during: number;
    try {
      during = await firstGas();
    } finally {
      store.mixesInWindow = read;
    }
    expect(meanwhile).toBe(20);
    // Read before the change: sent as it was read...
    expect(during).toBe(10);
    // ...but not kept: the next request answers the data as it is.
    expect(await firstGas()).toBe(20);
    expect(await firstGas()).toBe(20);
  });
});
