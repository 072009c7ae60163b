import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Basis } from '../core/factors.js';
import type { BacktestRun, ZoneBacktest } from '../core/forecast/backtest.js';
import { namesKnownModels, type ZoneForecast } from '../core/forecast/prepare.js';
import { DAY_SECONDS } from '../core/forecast/series.js';
import type { Store } from '../storage/store.js';
import type { ForecastBook } from './book.js';
import { type ForecastCompute, forecastKey as key, inThreadCompute } from './compute.js';
import { defaultForecastBasis } from '../core/zones.js';

/**
 * Keeps every zone's forecast on every basis prepared in memory (the routes only read them):
 * recomputed when the store's data version moves (new readings or upstream forecasts) and at
 * least hourly as time moves on, from the newest stored backtest's choice of model and error
 * band. Reruns the backtest once a day, and at once when the newest names a model this version
 * does not have, on one instance at a time (a store lease); the others, and `gridco2 backtest`
 * runs, are picked up from the store.
 */

export interface ForecastEngineOptions {
  readonly store: Store;
  readonly logger?: Logger;
  /** Milliseconds since the epoch. */
  readonly clock?: () => number;
  /** How often the store's data version is checked. */
  readonly checkMs?: number;
  /** Where the backtest and the recomputes run (default: on this thread). */
  readonly compute?: ForecastCompute;
}

const RECOMPUTE_AT_LEAST_MS = 3_600_000;
const BACKTEST_EVERY_SECONDS = DAY_SECONDS;
/** After a failed backtest, the next attempt waits this long. */
const BACKTEST_RETRY_MS = 3_600_000;
/** How often the newest stored backtest is looked up (another instance's, or the CLI's). */
const BACKTEST_LOOKUP_MS = 10 * 60_000;
/**
 * A stored backtest that evaluated no issue of a zone is rerun once the zone has a forecast (a
 * store being filled: the demo, a first backfill); at most this often, or ten times as long as
 * the last run took.
 */
const BACKTEST_RECHECK_MS = 60_000;
const BACKTEST_LEASE = 'backtest';
const BACKTEST_LEASE_MS = 3_600_000;

export class ForecastEngine implements ForecastBook {
  private readonly prepared = new Map<string, ZoneForecast>();
  private backtestRun: BacktestRun | null = null;
  private readonly backtestByZone = new Map<string, ZoneBacktest>();
  private computedVersion = -1;
  private computedAtMs = 0;
  private backtestLookedUpAtMs = Number.NEGATIVE_INFINITY;
  private backtestAttemptedAtMs = Number.NEGATIVE_INFINITY;
  private backtestCheckedAtMs = 0;
  private backtestTookMs = 0;
  private backtestWanted = false;
  /** Fills of the store under way (`whileFilling`). */
  private filling = 0;
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly stopping = new AbortController();
  private readonly clock: () => number;
  private readonly holder = `${hostname()}:${process.pid}:forecasts`;
  private readonly compute: ForecastCompute;
  /** False until every zone has been prepared once. */
  ready = false;

  constructor(private readonly options: ForecastEngineOptions) {
    this.clock = options.clock ?? Date.now;
    this.compute = options.compute ?? inThreadCompute(options.store);
  }

  forecast(zone: string, basis: Basis | undefined): ZoneForecast | null {
    return this.prepared.get(key(zone, basis ?? defaultForecastBasis(zone))) ?? null;
  }

  /** The newest backtest this instance knows of. */
  get backtest(): BacktestRun | null {
    return this.backtestRun;
  }

  /** Whether a check (preparing forecasts, maybe a backtest) is under way. */
  get computing(): boolean {
    return this.running !== undefined;
  }

  /** Prepares at once in the background, then checks every `checkMs`. */
  start(): void {
    void this.tick();
    this.timer = setInterval(() => void this.tick(), this.options.checkMs ?? 30_000);
    this.timer.unref();
  }

  /**
   * Runs the backtest at once (on the instance that gets the lease), whatever the age of the
   * newest: for a store just filled (the demo once its backfill is in), whose first backtest saw
   * too little history to choose models or bands. Resolves once done.
   */
  async backtestNow(): Promise<void> {
    this.backtestWanted = true;
    await this.tick();
    // A check already under way may have passed its backtest: the next one runs it.
    if (this.backtestWanted) await this.tick();
  }

  /**
   * Holds the recheck for zones the newest backtest left out while `fill` runs (the demo's
   * backfill): a full backtest started on partial data just before the fill ends would be
   * rerun by the `backtestNow` after it, and the demo would wait for both.
   */
  async whileFilling<T>(fill: Promise<T>): Promise<T> {
    this.filling++;
    try {
      return await fill;
    } finally {
      this.filling--;
    }
  }

  /** Stops checking and interrupts a backtest under way; resolves once nothing runs. */
  async stop(): Promise<void> {
    this.stopping.abort();
    clearInterval(this.timer);
    await this.running;
    await this.compute.close();
  }

  /** One check: reruns what is due. Resolves when done; never rejects (failures are logged). */
  tick(): Promise<void> {
    this.running ??= this.check().finally(() => (this.running = undefined));
    return this.running;
  }

  private async check(): Promise<void> {
    const { logger } = this.options;
    const prepare = () =>
      this.prepareIfDue().catch((error: unknown) => {
        if (!this.stopping.signal.aborted)
          logger?.error({ err: error }, 'forecasts: update failed');
      });
    // The backtest beside the forecasts, not after them: one that fails or takes long never holds
    // them back, and a backtest wanted at once (the demo's, once its backfill is in) does not wait
    // for forecasts its own will replace.
    const [, ran] = await Promise.all([
      prepare(),
      this.backtestIfDue().catch((error: unknown) => {
        if (!this.stopping.signal.aborted)
          logger?.error({ err: error }, 'forecasts: backtest failed');
        return false;
      }),
    ]);
    // With the new choice of models and bands at once (the forecasts beside it may have ended
    // after it, on the previous run's).
    if (ran) {
      this.computedVersion = -1;
      await prepare();
    }
  }

  private async prepareIfDue(): Promise<void> {
    const nowMs = this.clock();
    if (nowMs - this.backtestLookedUpAtMs >= BACKTEST_LOOKUP_MS) {
      this.backtestLookedUpAtMs = nowMs;
      // Read and parsed only when another instance or the CLI stored a newer one.
      const stored = await this.options.store.newestBacktest(this.backtestRun?.createdAt);
      // Not one older than the backtest run beside this meanwhile.
      if (stored && stored.createdAt > (this.backtestRun?.createdAt ?? Number.NEGATIVE_INFINITY)) {
        this.useBacktest(stored);
        this.computedVersion = -1;
      }
    }
    const version = await this.options.store.dataVersion();
    if (version === this.computedVersion && nowMs - this.computedAtMs < RECOMPUTE_AT_LEAST_MS)
      return;
    await this.prepareAll(nowMs);
    this.computedVersion = version;
    this.computedAtMs = nowMs;
    this.ready = true;
  }

  private useBacktest(run: BacktestRun | null): void {
    this.backtestRun = run;
    this.backtestByZone.clear();
    for (const zone of run?.zones ?? []) this.backtestByZone.set(key(zone.zone, zone.basis), zone);
  }

  /** Less than a day old, and naming only models this version has. */
  private isFresh(run: BacktestRun | null, nowMs: number): boolean {
    return (
      run !== null &&
      nowMs / 1000 - run.createdAt < BACKTEST_EVERY_SECONDS &&
      run.zones.every(namesKnownModels)
    );
  }

  /** Runs the backtest when it is due and this instance holds the lease; true if it ran. */
  private async backtestIfDue(): Promise<boolean> {
    const nowMs = this.clock();
    const stale =
      !this.isFresh(this.backtestRun, nowMs) &&
      nowMs - this.backtestAttemptedAtMs >= BACKTEST_RETRY_MS;
    const wanted = this.backtestWanted;
    if (this.stopping.signal.aborted || !(stale || wanted || this.missingZones(nowMs))) {
      return false;
    }
    this.backtestWanted = false;
    this.backtestAttemptedAtMs = nowMs;
    const { store, logger } = this.options;
    if (!(await store.acquireLease(BACKTEST_LEASE, this.holder, BACKTEST_LEASE_MS))) return false;
    try {
      // Another instance may have stored this day's run meanwhile.
      const stored = await store.newestBacktest();
      if (stale && !wanted && this.isFresh(stored, nowMs)) {
        this.useBacktest(stored);
        this.computedVersion = -1;
        return true;
      }
      // Real time, not the injected clock: how long the work took.
      const started = Date.now();
      const { run, resumption } = await this.compute.backtest(
        Math.floor(nowMs / 1000),
        this.stopping.signal,
      );
      this.useBacktest(run);
      this.backtestTookMs = Date.now() - started;
      this.backtestCheckedAtMs = nowMs;
      this.computedVersion = -1;
      // Resumed: forecast only the issues since the previous run; the others from their first.
      logger?.info(
        { zones: run.zones.length, ms: this.backtestTookMs, ...resumption },
        'forecasts: backtest done',
      );
      return true;
    } finally {
      await store.releaseLease(BACKTEST_LEASE, this.holder).catch(() => undefined);
    }
  }

  /**
   * Whether the newest backtest left out a zone that has a forecast now (a store being filled:
   * the demo, a first backfill); checked at most every BACKTEST_RECHECK_MS, or ten times as long
   * as the last run took, and not while a fill is under way (`whileFilling`). GB's operator forecast is measured over fw48h issues collected live:
   * the daily run picks them up.
   */
  private missingZones(nowMs: number): boolean {
    const run = this.backtestRun;
    if (!run || this.filling > 0) return false;
    const recheckMs = Math.max(BACKTEST_RECHECK_MS, 10 * this.backtestTookMs);
    if (nowMs - this.backtestCheckedAtMs < recheckMs) return false;
    this.backtestCheckedAtMs = nowMs;
    return run.zones.some(
      ({ zone, basis, issues }) =>
        issues === 0 && basis !== 'operator' && this.prepared.has(key(zone, basis)),
    );
  }

  private async prepareAll(nowMs: number): Promise<void> {
    // The time itself, not a grid below it: an upstream forecast stamped with the current half
    // hour (NESO's fw48h) is issued before now and must be seen at once.
    const nowTs = Math.floor(nowMs / 1000);
    const { forecasts, failures } = await this.compute.prepare(
      nowTs,
      [...this.backtestByZone.values()],
      this.stopping.signal,
    );
    if (this.stopping.signal.aborted) return;
    for (const [zoneKey, forecast] of forecasts) {
      if (forecast) this.prepared.set(zoneKey, forecast);
      else this.prepared.delete(zoneKey);
    }
    // One zone's failure leaves its previous forecast; the others are still prepared.
    for (const { zone, basis, message } of failures) {
      this.options.logger?.error({ err: message, zone, basis }, 'forecasts: zone not prepared');
    }
  }
}
