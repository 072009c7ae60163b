import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../storage/sqlite/sqlite-store.js';
import { loadSharedInputs } from './inputs.js';

describe("a zone's upstream forecasts as the models read them", () => {
  const H = 3600;
  // A Monday 00:00 UTC; GB's fw48h feeds the operator-forecast input, half-hourly.
  const T0 = Date.UTC(2026, 0, 5) / 1000;
  const window = { fromTs: T0, upstreamFromTs: T0, gridEndTs: T0 + 48 * H };
  let store: SqliteStore;
  beforeEach(() => {
    store = new SqliteStore(':memory:');
  });
  afterEach(() => store.close());

  /** An fw48h issue at `issuedAt` of the 24 half hours from `fromTs`. */
  const issue = (issuedAt: number, fromTs: number) =>
    Array.from({ length: 24 }, (_, k) => ({
      zone: 'GB',
      ts: fromTs + k * 1800,
      kind: 'uk-operator:fw48h' as const,
      issuedAt,
      value: 100 + k,
    }));

  it('are only those issued by `issuedBy`: none of a kind when none was', async () => {
    const early = issue(T0 + 2 * H, T0 + 2 * H);
    const late = issue(T0 + 30 * H, T0 + 30 * H);
    await store.upsertForecasts([...early, ...late]);
    const all = await loadSharedInputs(store, 'GB', window);
    expect(all.upstream.operatorForecast?.size).toBe(48);
    // An issue at the time itself counts, as the stored state's digest counts it.
    for (const issuedBy of [T0 + 2 * H, T0 + 30 * H - 1]) {
      const by = await loadSharedInputs(store, 'GB', { ...window, issuedBy });
      expect(by.upstream.operatorForecast?.size).toBe(24);
    }
    const none = await loadSharedInputs(store, 'GB', { ...window, issuedBy: T0 + 2 * H - 1 });
    expect(none.upstream).toEqual({});
  });
});
