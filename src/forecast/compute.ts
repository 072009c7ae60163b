import type { ForecastBasis, ZoneBacktest } from '../core/forecast/backtest.js';
import { CarriedFits } from '../core/forecast/departure-regression.js';
import { LOOKBACK_SECONDS, UPSTREAM_LOOKBACK_SECONDS } from '../core/forecast/models.js';
import { prepareForecast, type ZoneForecast } from '../core/forecast/prepare.js';
import { HORIZON_HOURS, HOUR_SECONDS } from '../core/forecast/series.js';
import { ZoneState } from '../core/forecast/zone-state.js';
import { ZONES } from '../core/zones.js';
import type { Store } from '../storage/store.js';
import { forecastBases, loadSharedInputs, loadZoneInputs, type SharedInputs } from './inputs.js';
import { runAndStoreBacktest, type StoredRun } from './run-backtest.js';

/**
 * The forecast engine's CPU-heavy work, behind one interface: the walk-forward backtest and the
 * preparation of every zone's forecast. Run on the serving thread (inThreadCompute) or on a
 * worker process (worker-compute.ts), which hands the same results back whole.
 */

export const forecastKey = (zone: string, basis: ForecastBasis): string => `${zone}|${basis}`;

/** Every zone's forecast on every basis: null where a zone has too little history. */
export interface PreparedZones {
  readonly forecasts: readonly (readonly [key: string, forecast: ZoneForecast | null])[];
  /** Zones whose preparation failed: they keep their previous forecast. */
  readonly failures: readonly { zone: string; basis: ForecastBasis; message: string }[];
}

export interface ForecastCompute {
  /**
   * The walk-forward backtest of every zone as of `nowSeconds`, resumed from the state stored
   * with the newest run, stored with the state the next run resumes from.
   */
  backtest(nowSeconds: number, signal: AbortSignal): Promise<StoredRun>;
  /** Every zone's forecast issued at `nowTs`, with the backtest's models and bands. */
  prepare(
    nowTs: number,
    backtests: readonly ZoneBacktest[],
    signal: AbortSignal,
  ): Promise<PreparedZones>;
  /** Stops any work under way; later calls may start it again. */
  close(): Promise<void>;
}

/** The work on the calling thread: with an in-memory store, which no other thread can open. */
export function inThreadCompute(store: Store): ForecastCompute {
  const carried: CarriedFitsByForecast = new Map();
  return {
    backtest: (nowSeconds, signal) => runAndStoreBacktest(store, nowSeconds, signal),
    prepare: (nowTs, backtests, signal) => prepareZones(store, nowTs, backtests, carried, signal),
    close: async () => {},
  };
}

/**
 * Each zone's and basis's regression fits, from one preparation to the next: data arrives
 * several times an hour, and a fit made in that hour on the same values is the same.
 */
export type CarriedFitsByForecast = Map<string, CarriedFits>;

export async function prepareZones(
  store: Store,
  nowTs: number,
  backtests: readonly ZoneBacktest[],
  carried: CarriedFitsByForecast,
  signal?: AbortSignal,
): Promise<PreparedZones> {
  const byKey = new Map(backtests.map((run) => [forecastKey(run.zone, run.basis), run]));
  const forecasts: [string, ZoneForecast | null][] = [];
  const failures: { zone: string; basis: ForecastBasis; message: string }[] = [];
  const inputsWindow = {
    fromTs: nowTs - LOOKBACK_SECONDS,
    upstreamFromTs: nowTs - UPSTREAM_LOOKBACK_SECONDS,
    gridEndTs: nowTs + (HORIZON_HOURS + 2) * HOUR_SECONDS,
  };
  for (const { code } of ZONES) {
    let shared: SharedInputs | undefined;
    for (const basis of forecastBases(code)) {
      if (signal?.aborted) return { forecasts, failures };
      try {
        shared ??= await loadSharedInputs(store, code, inputsWindow);
        const inputs = await loadZoneInputs(store, code, basis, inputsWindow, shared);
        const key = forecastKey(code, basis);
        let fits = carried.get(key);
        if (!fits) carried.set(key, (fits = new CarriedFits()));
        const state = new ZoneState(inputs, fits);
        const forecast = prepareForecast(code, basis, state, nowTs, byKey.get(key));
        forecasts.push([key, forecast]);
      } catch (error) {
        failures.push({ zone: code, basis, message: String(error) });
      }
    }
    // Between zones, whatever else shares the thread runs.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { forecasts, failures };
}
