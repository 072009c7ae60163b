import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { emissionsBalance } from '../core/consumption/check.js';
import { type HourGraph, type HourTrace, traceHour } from '../core/consumption/trace-hour.js';
import { BASES } from '../core/factors.js';
import type { DirectedFlow } from '../core/flows.js';
import { intensityOfMix } from '../core/method.js';
import type { Mix, StoredReading } from '../core/reading.js';
import { HOUR } from '../core/time.js';
import { SqliteStore } from '../storage/sqlite/sqlite-store.js';
import { consumptionLease, recomputeConsumption, updateConsumption } from './update-consumption.js';

const H0 = Date.UTC(2026, 5, 1, 12) / 1000;
const hour = (k: number) => H0 + k * HOUR;

/** A node's stored hour, as ingestion writes it: published (complete) or not. */
function reading(zone: string, ts: number, mix: Mix, complete = true): StoredReading {
  const lifecycle = intensityOfMix(mix);
  return {
    zone,
    ts,
    value: lifecycle,
    method: 'computed:v1',
    complete,
    mix,
    lifecycle: complete ? lifecycle : null,
    direct: complete ? intensityOfMix(mix, 'direct') : null,
  };
}

/** A European border's two gross directions in one hour (A11): `mwh` from `from` to `to`. */
const europeFlow = (from: string, to: string, ts: number, mwh: number): DirectedFlow[] => [
  { from, to, ts, mw: mwh },
  { from: to, to: from, ts, mw: 0 },
];

let store: SqliteStore;
beforeEach(() => {
  store = new SqliteStore(':memory:');
});
afterEach(() => store.close());

async function valuesOf(zone: string, from = hour(0), to = hour(3)) {
  const lifecycle = await store.consumptionInWindow(zone, from, to, 100, 'lifecycle');
  const direct = await store.consumptionInWindow(zone, from, to, 100, 'direct');
  return lifecycle.map((point, i) => ({
    ts: point.ts,
    lifecycle: point.value,
    direct: direct[i]!.value,
  }));
}

/**
 * The worked example of docs/method.md ("A worked example: three zones") on three Baltic nodes:
 * EE (gas 100, wind 100) exports 100 to LV (coal 50, hydro 50), which exports 100 to LT (solar
 * 50), which also imports 50 from Belarus (a boundary node: no mix, no annual intensity, so at
 * the `other` factor). Hours 0 to 2 alike.
 */
const EE: Mix = { gas: 100, 'wind-onshore': 100 };
const LV: Mix = { coal: 50, hydro: 50 };
const LT: Mix = { solar: 50 };

async function storeExample({ lvltHours = [0, 1, 2] } = {}) {
  await store.upsertReadings(
    [0, 1, 2].flatMap((k) => [
      reading('EE', hour(k), EE),
      reading('LV', hour(k), LV),
      reading('LT', hour(k), LT),
    ]),
  );
  await store.upsertFlows('europe', [
    ...[0, 1, 2].flatMap((k) => europeFlow('EE', 'LV', hour(k), 100)),
    ...lvltHours.flatMap((k) => europeFlow('LV', 'LT', hour(k), 100)),
    ...[0, 1, 2].flatMap((k) => europeFlow('BY', 'LT', hour(k), 50)),
  ]);
}

/** The example's hour as the solver's graph, written here by hand. */
const exampleGraph = (ts: number): HourGraph => ({
  ts,
  nodes: [
    { id: 'EE', generation: EE, complete: true },
    { id: 'LV', generation: LV, complete: true },
    { id: 'LT', generation: LT, complete: true },
  ],
  flows: [
    { from: 'EE', to: 'LV', mwh: 100, estimated: false },
    { from: 'LV', to: 'LT', mwh: 100, estimated: false },
    { from: 'BY', to: 'LT', mwh: 50, estimated: false },
  ],
  estimates: new Map([['BY', { kind: 'other' }]]),
});

describe('updateConsumption: the three-zone example written to a store', () => {
  it('stores the solver values of every hour, as in docs/method.md', async () => {
    await storeExample();
    const update = await updateConsumption(store, 'europe');
    expect(update.hours).toEqual([hour(0), hour(1), hour(2)]);
    const expected = {
      EE: { lifecycle: 250.5, direct: 185 },
      LV: { lifecycle: 336.25, direct: 282.5 },
      LT: { lifecycle: 355.125, direct: 285 },
    };
    for (const [zone, value] of Object.entries(expected)) {
      const stored = await valuesOf(zone);
      expect(stored.map((point) => point.ts)).toEqual([hour(0), hour(1), hour(2)]);
      for (const point of stored) {
        expect(point.lifecycle).toBeCloseTo(value.lifecycle, 9);
        expect(point.direct).toBeCloseTo(value.direct, 9);
      }
    }
    // Exactly the solver's, run here on the graph written by hand.
    const solved = traceHour(exampleGraph(hour(1))).solved;
    for (const zone of ['EE', 'LV', 'LT']) {
      expect((await valuesOf(zone, hour(1), hour(2)))[0]).toEqual({
        ts: hour(1),
        ...solved.get(zone)!.intensity,
      });
    }
    const [lt] = await store.consumptionMixesInWindow('LT', hour(0), hour(1), 10);
    expect(lt).toMatchObject({
      imports: { BY: 50, LV: 100 },
      exports: {},
      estimatedBorders: [],
    });
    const close = (value: number) => expect.closeTo(value, 9);
    expect(lt!.consumption).toEqual({
      coal: close(25),
      gas: close(25),
      hydro: close(25),
      solar: close(50),
      'wind-onshore': close(25),
      'imported-estimated': close(50),
    });
    expect(lt!.estimatedPct).toBeCloseTo(25, 9);
    expect(lt!.renewablePct).toBeCloseTo(50, 9);
    expect(lt!.lowCarbonPct).toBeCloseTo(50, 9);
  });

  it('conserves emissions in every hour with the stored values (check.ts)', async () => {
    await storeExample();
    await updateConsumption(store, 'europe');
    for (const k of [0, 1, 2]) {
      const graph = exampleGraph(hour(k));
      const trace = await storedTrace(hour(k), ['EE', 'LV', 'LT']);
      for (const basis of BASES) {
        const { consumedOrExported, emittedOrImported } = emissionsBalance(graph, trace, basis);
        expect(consumedOrExported).toBeCloseTo(emittedOrImported, 6);
      }
      // docs/method.md: 129,700 kg lifecycle, 103,750 kg direct.
      expect(emissionsBalance(graph, trace, 'lifecycle').consumedOrExported).toBeCloseTo(
        129_700,
        6,
      );
      expect(emissionsBalance(graph, trace, 'direct').consumedOrExported).toBeCloseTo(103_750, 6);
    }
  });

  it('traces again only the hour of a revised flow, and nothing when nothing changed', async () => {
    await storeExample();
    await updateConsumption(store, 'europe');
    const before = await valuesOf('LT');
    expect((await updateConsumption(store, 'europe')).hours).toEqual([]);
    await store.upsertFlows('europe', [{ from: 'LV', to: 'LT', ts: hour(1), mw: 80 }]);
    const update = await updateConsumption(store, 'europe');
    expect(update.hours).toEqual([hour(1)]);
    // LT: solar 50, 80 of LV's traced mix at 336.25, 50 from Belarus at 700, over 180.
    const after = await valuesOf('LT');
    expect(after[1]!.lifecycle).toBeCloseTo((50 * 48 + 80 * 336.25 + 50 * 700) / 180, 9);
    expect([after[0], after[2]]).toEqual([before[0], before[2]]);
    // LV now consumes 120: what it passes on is unchanged, what it keeps is not.
    const [lv] = await store.consumptionMixesInWindow('LV', hour(1), hour(2), 1);
    expect(lv!.exports).toEqual({ LT: 80 });
  });

  it('traces again the later hours that carry a revised flow, listing the border as estimated', async () => {
    // LV-LT published for hours 0 and 1 only: hour 2 carries hour 1's flow.
    await storeExample({ lvltHours: [0, 1] });
    await updateConsumption(store, 'europe');
    const [carried] = await store.consumptionMixesInWindow('LT', hour(2), hour(3), 1);
    expect(carried).toMatchObject({ imports: { BY: 50, LV: 100 }, estimatedBorders: ['LV'] });
    await store.upsertFlows('europe', [{ from: 'LV', to: 'LT', ts: hour(1), mw: 80 }]);
    const update = await updateConsumption(store, 'europe');
    expect(update.hours).toEqual([hour(1), hour(2)]);
    const after = await valuesOf('LT');
    expect(after[2]!.lifecycle).toBeCloseTo((50 * 48 + 80 * 336.25 + 50 * 700) / 180, 9);
    expect(after[2]!.lifecycle).toBe(after[1]!.lifecycle);
  });

  it('gives an hour whose node mix is incomplete no value there, and its exports enter estimated', async () => {
    await storeExample();
    await store.upsertReadings([reading('LV', hour(1), { coal: 50 }, false)]);
    await updateConsumption(store, 'europe');
    expect((await valuesOf('LV')).map((point) => point.ts)).toEqual([hour(0), hour(2)]);
    // LT at hour 1: solar 50; 100 from LV at its production mix of hour 0 (422), 50 at 700.
    const lt = await valuesOf('LT', hour(1), hour(2));
    expect(lt[0]!.lifecycle).toBeCloseTo(0.25 * 48 + (100 * 422 + 50 * 700) / 200, 9);
    const [ltMix] = await store.consumptionMixesInWindow('LT', hour(1), hour(2), 1);
    expect(ltMix!.estimatedPct).toBeCloseTo(75, 9);

    // The mix completed: its hour is traced again, and the rows are the example's.
    await store.upsertReadings([reading('LV', hour(1), LV)]);
    const update = await updateConsumption(store, 'europe');
    expect(update.hours).toEqual([hour(1)]);
    expect((await valuesOf('LV')).map((point) => point.ts)).toEqual([hour(0), hour(1), hour(2)]);
    expect((await valuesOf('LT', hour(1), hour(2)))[0]!.lifecycle).toBeCloseTo(355.125, 9);
  });
});

describe('updateConsumption: GB, US48, recompute', () => {
  it('never gives GB a value; its half-hourly shares of the hour enter its neighbour', async () => {
    // NESO shares: wind 50 % then 30 %, gas the rest: the hour's shares are wind 40, gas 60.
    const gb = (ts: number, wind: number): StoredReading => ({
      ...reading('GB', ts, { gas: 100 - wind, 'wind-onshore': wind }),
      method: 'upstream:uk-operator:actual',
      value: 150,
    });
    await store.upsertReadings([
      gb(hour(0), 50),
      gb(hour(0) + HOUR / 2, 30),
      reading('NO-2', hour(0), { hydro: 100 }),
    ]);
    await store.upsertFlows('europe', europeFlow('GB', 'NO-2', hour(0), 50));
    const update = await updateConsumption(store, 'europe');
    expect(update.hours).toEqual([hour(0)]);
    expect(await store.consumptionInWindow('GB', hour(0), hour(1), 10, 'lifecycle')).toEqual([]);
    const [no2] = await valuesOf('NO-2', hour(0), hour(1));
    expect(no2!.lifecycle).toBeCloseTo((100 * 24 + 50 * (0.4 * 11 + 0.6 * 490)) / 150, 9);
    expect(no2!.direct).toBeCloseTo((50 * 0.6 * 370) / 150, 9);
  });

  it('publishes US48 only in an hour where every balancing authority with a mix is solved', async () => {
    // ISO-NE (gas 100) imports 50 from NYISO (nuclear 150); EIA: both report the pair, signed.
    await store.upsertReadings([
      ...[0, 1].flatMap((k) => [
        reading('US-ISONE', hour(k), { gas: 100 }),
        reading('US-NYISO', hour(k), { nuclear: 150 }),
      ]),
      reading('US-NYISO', hour(1), { nuclear: 150 }, false),
    ]);
    await store.upsertFlows(
      'us',
      [0, 1].flatMap((k) => [
        { from: 'US-NYISO', to: 'US-ISONE', ts: hour(k), mw: 50 },
        { from: 'US-ISONE', to: 'US-NYISO', ts: hour(k), mw: -50 },
      ]),
    );
    await updateConsumption(store, 'us');
    // ISO-NE consumes 150 at (100 x 490 + 50 x 12) / 150, NYISO 100 at 12.
    const [us, ...others] = await valuesOf('US', hour(0), hour(2));
    expect(others).toEqual([]);
    expect(us!.ts).toBe(hour(0));
    expect(us!.lifecycle).toBeCloseTo((100 * 490 + 50 * 12 + 100 * 12) / 250, 9);
    expect((await valuesOf('US-ISONE', hour(0), hour(2))).map((point) => point.ts)).toEqual([
      hour(0),
      hour(1),
    ]);
  });

  it('traces every hour again on recompute, and nothing without flows', async () => {
    await store.upsertReadings([reading('EE', hour(0), EE), reading('FI', hour(1), { hydro: 1 })]);
    expect(await updateConsumption(store, 'europe')).toEqual({
      graph: 'europe',
      hours: [],
      changed: 0,
      cursor: null,
    });
    await store.upsertFlows('europe', europeFlow('EE', 'FI', hour(0), 10));
    const first = await updateConsumption(store, 'europe');
    expect(first.hours).toEqual([hour(0), hour(1)]);
    expect(first.cursor).toBe(await store.consumptionCursor('europe'));
    const updates = await recomputeConsumption(store);
    expect(updates.map(({ graph, hours, changed }) => ({ graph, hours, changed }))).toEqual([
      { graph: 'europe', hours: [hour(0), hour(1)], changed: 0 },
      { graph: 'us', hours: [], changed: 0 },
    ]);
  });
});

/** The stored values of an hour as a trace: check.ts reads which nodes are solved, and their values. */
async function storedTrace(ts: number, zones: readonly string[]): Promise<HourTrace> {
  const solved = new Map<string, { intensity: { lifecycle: number; direct: number } }>();
  for (const zone of zones) {
    const [point] = await valuesOf(zone, ts, ts + HOUR);
    if (point !== undefined) solved.set(zone, { intensity: point });
  }
  return { ts, solved } as unknown as HourTrace;
}

describe('updateConsumption: one update of a graph at a time on the store', () => {
  it("waits for the graph's lease held by another process, then reads and writes after it", async () => {
    await storeExample();
    // A `gridco2 backfill` in another process holds Europe's lease while it updates.
    expect(await store.acquireLease(consumptionLease('europe'), 'backfill', 600_000)).toBe(true);
    const asked: string[] = [];
    const watched = new Proxy(store, {
      get(target, property, receiver) {
        if (property !== 'acquireLease') return Reflect.get(target, property, receiver) as unknown;
        return (name: string, holder: string, ttlMs: number) => {
          asked.push(name);
          return target.acquireLease(name, holder, ttlMs);
        };
      },
    });
    const update = updateConsumption(watched, 'europe');
    while (asked.length < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    // Refused and asked again: nothing written meanwhile, the cursor not moved.
    expect(asked.every((name) => name === consumptionLease('europe'))).toBe(true);
    expect(await valuesOf('EE')).toEqual([]);
    expect(await store.consumptionCursor('europe')).toBeNull();
    // The other holder writes and lets go: the waiting update goes on with the inputs as stored.
    await store.upsertReadings([reading('EE', hour(0), { gas: 200 })]);
    await store.releaseLease(consumptionLease('europe'), 'backfill');
    expect((await update).hours).toEqual([hour(0), hour(1), hour(2)]);
    const [ee] = await store.consumptionMixesInWindow('EE', hour(0), hour(1), 1);
    expect(Object.keys(ee!.consumption)).toEqual(['gas']);
    // And it let go of the lease in turn.
    expect(await store.acquireLease(consumptionLease('europe'), 'backfill', 600_000)).toBe(true);
  });

  it('stops before writing more once its lease is taken from it', async () => {
    await storeExample();
    const holders: string[] = [];
    const watched = new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'acquireLease') {
          return (name: string, holder: string, ttlMs: number) => {
            holders.push(holder);
            return target.acquireLease(name, holder, ttlMs);
          };
        }
        if (property !== 'replaceConsumption') {
          return Reflect.get(target, property, receiver) as unknown;
        }
        // After its first write, its lease lapses and another process takes it.
        return async (...args: Parameters<SqliteStore['replaceConsumption']>) => {
          const changed = await target.replaceConsumption(...args);
          await target.releaseLease(consumptionLease('europe'), holders[0]!);
          expect(await target.acquireLease(consumptionLease('europe'), 'backfill', 600_000)).toBe(
            true,
          );
          return changed;
        };
      },
    });
    await expect(updateConsumption(watched, 'europe')).rejects.toThrow(/taken by another holder/);
    // The three hours were written in one write; the cursor did not move: the next update
    // traces them again.
    expect((await valuesOf('EE')).length).toBe(3);
    expect(await store.consumptionCursor('europe')).toBeNull();
  });
});
