import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Basis } from '../core/factors.js';
import type { BacktestRun, ForecastBasis, ZoneBacktest } from '../core/forecast/backtest.js';
import { ZoneState } from '../core/forecast/models.js';
import { prepareForecast, type ZoneForecast } from '../core/forecast/prepare.js';
import { DAY_SECONDS, HORIZON_HOURS, HOUR_SECONDS } from '../core/forecast/series.js';
import { ZONES } from '../core/zones.js';
import type { Store } from '../storage/store.js';
import type { ForecastBook } from './book.js';
import { defaultForecastBasis, forecastBases, loadZoneInputs } from './inputs.js';
import { runBacktest } from './run-backtest.js';

/**
 * Keeps every zone's forecast on every basis prepared in memory (the routes only read them):
 * recomputed when the store's data version moves (new readings or upstream forecasts) and at
 * least hourly as time moves on, from the newest stored backtest's choice of model and error
 * band. Reruns the backtest once a day, on one instance at a time (a store lease).
 */

export interface ForecastEngineOptions {
  readonly store: Store;
  readonly logger?: Logger;
  /** Milliseconds since the epoch. */
  readonly clock?: () => number;
  /** How often the store's data version is checked. */
  readonly checkMs?: number;
  /** Whether this instance may run the daily backtest. */
  readonly backtests?: boolean;
}

/** Values a model looks back on: ten weeks of profile and 35 days of fitting, with a margin. */
const LOOKBACK_SECONDS = (70 + 35 + 7) * DAY_SECONDS;
/** Upstream forecasts a model looks back on: its fitting window. */
const UPSTREAM_LOOKBACK_SECONDS = (35 + 3) * DAY_SECONDS;
const RECOMPUTE_AT_LEAST_MS = 3_600_000;
const BACKTEST_EVERY_SECONDS = DAY_SECONDS;
/**
 * A stored backtest that evaluated no issue of a zone is rerun once the zone has a forecast (a
 * store being filled: the demo, a first backfill); at most this often.
 */
const BACKTEST_RECHECK_MS = 60_000;
const BACKTEST_LEASE = 'backtest';
const BACKTEST_LEASE_MS = 3_600_000;

const key = (zone: string, basis: ForecastBasis): string => `${zone}|${basis}`;

export class ForecastEngine implements ForecastBook {
  private readonly prepared = new Map<string, ZoneForecast>();
  private backtestRun: BacktestRun | null = null;
  private readonly backtestByZone = new Map<string, ZoneBacktest>();
  private computedVersion = -1;
  private computedAtMs = 0;
  private backtestCheckedAtMs = 0;
  private backtestTookMs = 0;
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly clock: () => number;
  private readonly holder = `${hostname()}:${process.pid}:forecasts`;

  constructor(private readonly options: ForecastEngineOptions) {
    this.clock = options.clock ?? Date.now;
  }

  forecast(zone: string, basis: Basis | undefined): ZoneForecast | null {
    return this.prepared.get(key(zone, basis ?? defaultForecastBasis(zone))) ?? null;
  }

  /** The newest backtest this instance knows of. */
  get backtest(): BacktestRun | null {
    return this.backtestRun;
  }

  /** Prepares at once in the background, then checks every `checkMs`. */
  start(): void {
    void this.tick();
    this.timer = setInterval(() => void this.tick(), this.options.checkMs ?? 30_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** One check: reruns what is due. Resolves when done; never rejects (failures are logged). */
  tick(): Promise<void> {
    this.running ??= this.check()
      .catch((error: unknown) =>
        this.options.logger?.error({ err: error }, 'forecasts: update failed'),
      )
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async check(): Promise<void> {
    const { store } = this.options;
    const nowMs = this.clock();
    if (!this.backtestRun) this.useBacktest(await store.newestBacktest());
    if (await this.backtestDue(nowMs)) await this.rerunBacktest(nowMs);
    const version = await store.dataVersion();
    if (version === this.computedVersion && nowMs - this.computedAtMs < RECOMPUTE_AT_LEAST_MS)
      return;
    await this.prepareAll(nowMs);
    this.computedVersion = version;
    this.computedAtMs = nowMs;
  }

  private useBacktest(run: BacktestRun | null): void {
    this.backtestRun = run;
    this.backtestByZone.clear();
    for (const zone of run?.zones ?? []) this.backtestByZone.set(key(zone.zone, zone.basis), zone);
  }

  private async backtestDue(nowMs: number): Promise<boolean> {
    if (this.options.backtests === false) return false;
    const run = this.backtestRun;
    if (!run || nowMs / 1000 - run.createdAt >= BACKTEST_EVERY_SECONDS) return true;
    // Spent mostly idle: a run over a large store takes a minute or more of CPU.
    const recheckMs = Math.max(BACKTEST_RECHECK_MS, 10 * this.backtestTookMs);
    if (nowMs - this.backtestCheckedAtMs < recheckMs) return false;
    this.backtestCheckedAtMs = nowMs;
    // A zone the last run could not evaluate that has a forecast now (a store being filled: the
    // demo, a first backfill). GB's operator forecast is measured over fw48h issues collected
    // live: the daily run picks them up.
    return run.zones.some(
      ({ zone, basis, issues }) =>
        issues === 0 && basis !== 'operator' && this.prepared.has(key(zone, basis)),
    );
  }

  private async rerunBacktest(nowMs: number): Promise<void> {
    const { store, logger } = this.options;
    if (!(await store.acquireLease(BACKTEST_LEASE, this.holder, BACKTEST_LEASE_MS))) {
      // Another instance runs it: take its result when it is stored.
      this.useBacktest(await store.newestBacktest());
      return;
    }
    try {
      // Real time, not the injected clock: how long the work took.
      const started = Date.now();
      const run = await runBacktest(store, Math.floor(nowMs / 1000));
      if (this.stopped) return;
      await store.saveBacktest(run);
      this.useBacktest(run);
      this.backtestTookMs = Date.now() - started;
      this.backtestCheckedAtMs = nowMs;
      logger?.info(
        { zones: run.zones.length, ms: this.backtestTookMs },
        'forecasts: backtest done',
      );
    } finally {
      await store.releaseLease(BACKTEST_LEASE, this.holder);
    }
  }

  private async prepareAll(nowMs: number): Promise<void> {
    const { store } = this.options;
    const nowTs = Math.floor(nowMs / 1000);
    const gridEndTs = nowTs + (HORIZON_HOURS + 1) * HOUR_SECONDS;
    for (const { code } of ZONES) {
      for (const basis of forecastBases(code)) {
        if (this.stopped) return;
        const inputs = await loadZoneInputs(store, code, basis, {
          fromTs: nowTs - LOOKBACK_SECONDS,
          toTs: gridEndTs,
          upstreamFromTs: nowTs - UPSTREAM_LOOKBACK_SECONDS,
          gridEndTs,
        });
        const forecast = prepareForecast(
          code,
          basis,
          new ZoneState(inputs),
          nowTs,
          this.backtestByZone.get(key(code, basis)),
        );
        if (forecast) this.prepared.set(key(code, basis), forecast);
        else this.prepared.delete(key(code, basis));
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
