import {
  type BacktestOptions,
  backtestZoneSteps,
  resumptionOf,
  zoneInputsData,
  type ForecastBasis,
  type BacktestRun,
  ISSUE_EVERY_HOURS,
  issueTimes,
  type ZoneBacktest,
} from '../core/forecast/backtest.js';
import { CANDIDATE_MODELS, LOOKBACK_SECONDS } from '../core/forecast/models.js';
import { OPERATOR_FORECAST } from '../core/forecast/operator-forecast.js';
import { DAY_SECONDS, HORIZON_HOURS, HOUR_SECONDS } from '../core/forecast/series.js';
import { ZoneState } from '../core/forecast/zone-state.js';
import type { FallBackReason, ZoneBacktestState } from '../core/forecast/backtest-state.js';
import { stateBytes, statesOf } from './backtest-state-bytes.js';
import { findZone, ZONES } from '../core/zones.js';
import type { BacktestStates, Store } from '../storage/store.js';
import { forecastBases, loadSharedInputs, loadZoneInputs, type SharedInputs } from './inputs.js';
import type { ZoneTaskResult, ZoneWorkers } from './zone-workers.js';

/** Runs the walk-forward backtest over stored history (`gridco2 backtest`, and `serve` daily). */

export interface BacktestWindow {
  /** Zones to evaluate (default: all 45). */
  readonly zones?: readonly string[];
  /** First issue time, epoch seconds (default: two weeks after each zone's first value, at most 400 days back). */
  readonly fromTs?: number;
  /** Last issue time (default: 72 hours before now, so every horizon can be scored). */
  readonly toTs?: number;
  /** Bases to evaluate (default: every basis of each zone). */
  readonly bases?: readonly ForecastBasis[];
}

/** Longest walk-forward `serve` runs on its own. */
const DEFAULT_BACKTEST_DAYS = 400;
/** A zone's first issue comes this long after its first value (at least a week of profile). */
const WARM_UP_SECONDS = 14 * DAY_SECONDS;
/** The longest the backtest holds the event loop at a time. */
const SLICE_MS = 20;

/** A run and what the next one resumes from (the store keeps both together). */
interface ResumableRun {
  readonly run: BacktestRun;
  readonly states: BacktestStates;
  readonly resumption: Resumption;
}

/**
 * How many zones and bases resumed from the stored state, and by reason the `zone|basis` of those
 * that ran from their first issue (the engine logs it: a daily rerun should resume them all).
 */
export interface Resumption {
  resumed: number;
  readonly fellBack: Partial<Record<FallBackReason, string[]>>;
}

/**
 * `serve`'s backtest of every zone: resumed, zone by zone, from the state stored with the newest
 * run where that still holds (a day later, it forecasts only the new issues), else from each
 * zone's first issue; the same result either way (core/forecast/backtest-state.ts).
 */
async function runResumableBacktest(
  store: Store,
  nowSeconds: number,
  signal?: AbortSignal,
  workers?: ZoneWorkers,
): Promise<ResumableRun> {
  const previous = statesOf(await store.newestBacktestStates());
  const kept: ZoneBacktestState[] = [];
  const resumption: Resumption = { resumed: 0, fellBack: {} };
  const run = await runBacktest(
    store,
    nowSeconds,
    {},
    () => {},
    signal,
    { previous, kept, resumption },
    workers,
  );
  return { run, states: stateBytes(kept), resumption };
}

/** A run as stored, and how its zone-bases resumed (the engine logs it). */
export interface StoredRun {
  readonly run: BacktestRun;
  readonly resumption: Resumption;
}

/**
 * `serve`'s backtest: `runResumableBacktest`, stored with its states where it ran. In the forecast
 * worker, only the run then crosses to the server, not the state (the 240-day demo's: 87 MB then,
 * about 1.4 s of CPU to send and receive, profiled, the server's part of it on the serving thread).
 */
export async function runAndStoreBacktest(
  store: Store,
  nowSeconds: number,
  signal?: AbortSignal,
  workers?: ZoneWorkers,
): Promise<StoredRun> {
  const { run, states, resumption } = await runResumableBacktest(
    store,
    nowSeconds,
    signal,
    workers,
  );
  await store.saveBacktest(run, states);
  return { run, resumption };
}

export async function runBacktest(
  store: Store,
  nowSeconds: number,
  window: BacktestWindow = {},
  onZone: (zone: string, done: number, total: number) => void = () => {},
  signal?: AbortSignal,
  states?: {
    readonly previous: ReadonlyMap<string, ZoneBacktestState>;
    readonly kept: ZoneBacktestState[];
    readonly resumption: Resumption;
  },
  /** Processes that backtest zone-bases side by side; without them, one after another here. */
  workers?: ZoneWorkers,
): Promise<BacktestRun> {
  const zones = window.zones ?? ZONES.map((zone) => zone.code);
  const toTs = alignToIssue(window.toTs ?? nowSeconds - HORIZON_HOURS * HOUR_SECONDS);
  const plans: ZonePlan[] = [];
  let zoneBases = 0;
  for (const zone of zones) {
    const first = (await store.readingsInWindow(zone, 0, toTs, 1))[0];
    const earliest = first ? alignToIssue(first.ts + WARM_UP_SECONDS + DAY_SECONDS - 1) : toTs + 1;
    const fromTs = Math.max(
      window.fromTs !== undefined
        ? alignToIssue(window.fromTs)
        : toTs - DEFAULT_BACKTEST_DAYS * DAY_SECONDS,
      earliest,
    );
    const bases = forecastBases(zone).filter(
      (basis) => !window.bases || window.bases.includes(basis),
    );
    const times = fromTs <= toTs ? issueTimes(fromTs, toTs) : [];
    plans.push({
      zone,
      fromTs,
      times,
      bases,
      first: zoneBases,
    });
    zoneBases += bases.length;
  }
  // Zone-bases finish in any order: each result, and the state it keeps, takes its place in the
  // order they were asked in.
  const placed: (ZoneTaskResult | Promise<ZoneTaskResult>)[] = [];
  const inFlight = new Set<Promise<unknown>>();
  const progress: Promise<void>[] = [];
  let done = 0;
  // In the workers, the costliest zones first: the last to finish is then a short one, not GB
  // (twice the slots of an hourly zone) alone on one core while the others wait.
  for (const { zone, fromTs, times, bases, first } of workers ? byCostDown(plans) : plans) {
    const inputsWindow = {
      fromTs: fromTs - LOOKBACK_SECONDS,
      upstreamFromTs: fromTs - LOOKBACK_SECONDS,
      gridEndTs: toTs + (HORIZON_HOURS + 1) * HOUR_SECONDS,
      issuedBy: toTs,
    };
    let shared: SharedInputs | undefined;
    for (const [offset, basis] of bases.entries()) {
      shared ??= await loadSharedInputs(store, zone, inputsWindow);
      const inputs = await loadZoneInputs(store, zone, basis, inputsWindow, shared);
      const previous = states?.previous.get(`${zone}|${basis}`);
      const options = {
        issueTimes: times,
        candidates: basis === 'operator' ? [OPERATOR_FORECAST] : CANDIDATE_MODELS,
        ...(previous && { previous }),
      };
      const state = new ZoneState(inputs);
      // One that resumes forecasts a day's issues: here, for less than a zone worker's copy of
      // its inputs and state, and its own warm-up (the daily rerun of the 240-day demo at two
      // workers: 16.5 -> 12.6 CPU s). Those from their first issue in the workers.
      const resumes = previous && resumptionOf(zone, basis, state, options) === null;
      if (workers && !resumes) {
        // At most one zone-base's inputs wait beside those being backtested.
        while (inFlight.size >= workers.size) await Promise.race(inFlight);
        signal?.throwIfAborted();
        const task = workers.run({
          zone,
          basis,
          inputs: zoneInputsData(inputs),
          issueTimes: times,
          candidateIds: options.candidates.map(({ id }) => id),
          ...(previous && { previous }),
          keep: states !== undefined,
        });
        placed[first + offset] = task;
        const settled: Promise<void> = task.then(
          () => void inFlight.delete(settled),
          () => void inFlight.delete(settled),
        );
        inFlight.add(settled);
        continue;
      }
      placed[first + offset] = await backtestHere(zone, basis, state, options, {
        keep: states !== undefined,
        ...(signal && { signal }),
      });
    }
    // Counted when its zone-bases are done, not when they are handed to the workers; a failure
    // is thrown where the results are collected.
    progress.push(
      Promise.all(placed.slice(first, first + bases.length)).then(
        () => onZone(zone, ++done, zones.length),
        () => {},
      ),
    );
  }
  await Promise.all(progress);
  const results: ZoneBacktest[] = [];
  for (const { result, kept, fellBack } of await Promise.all(placed)) {
    results.push(result);
    if (!states) continue;
    if (kept) states.kept.push(kept);
    if (fellBack !== undefined)
      tallyResumption(states.resumption, result.zone, result.basis, fellBack);
  }
  return { createdAt: nowSeconds, zones: results };
}

/**
 * A zone-base's backtest on this thread, in slices of at most SLICE_MS: requests are served
 * between them while `serve` runs it.
 */
async function backtestHere(
  zone: string,
  basis: ForecastBasis,
  state: ZoneState,
  options: BacktestOptions,
  { keep, signal }: { readonly keep: boolean; readonly signal?: AbortSignal },
): Promise<ZoneTaskResult> {
  let kept: ZoneBacktestState | undefined;
  let fellBack: FallBackReason | null | undefined;
  const steps = backtestZoneSteps(zone, basis, state, {
    ...options,
    ...(keep && {
      keep: (state: ZoneBacktestState) => (kept = state),
      onResumption: (reason: FallBackReason | null) => (fellBack = reason),
    }),
  });
  let sliceStarted = Date.now();
  for (;;) {
    const step = steps.next();
    if (step.done) {
      return {
        result: step.value,
        ...(kept && { kept }),
        ...(fellBack !== undefined && { fellBack }),
      };
    }
    if (Date.now() - sliceStarted >= SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
      sliceStarted = Date.now();
    }
  }
}

/** A zone's part of a run: its issue times and bases; `first`, its first zone-base's place in the run. */
interface ZonePlan {
  readonly zone: string;
  readonly fromTs: number;
  readonly times: readonly number[];
  readonly bases: readonly ForecastBasis[];
  readonly first: number;
}

/**
 * The zones, costliest first: a zone-base's backtest costs about its issues times its slots per
 * hour, the operator's forecast (republished, no fits) next to nothing.
 */
function byCostDown(plans: readonly ZonePlan[]): ZonePlan[] {
  const cost = ({ zone, times, bases }: ZonePlan) => {
    const slotsPerHour = 60 / (findZone(zone)?.resolutionMin ?? 60);
    return times.length * bases.filter((basis) => basis !== 'operator').length * slotsPerHour;
  };
  return [...plans].sort((a, b) => cost(b) - cost(a));
}

function tallyResumption(
  resumption: Resumption,
  zone: string,
  basis: ForecastBasis,
  reason: FallBackReason | null,
): void {
  if (!reason) resumption.resumed++;
  else (resumption.fellBack[reason] ??= []).push(`${zone}|${basis}`);
}

/** Issue times fall on 00:00, 06:00, 12:00 and 18:00 UTC. */
const alignToIssue = (ts: number): number =>
  Math.floor(ts / (ISSUE_EVERY_HOURS * HOUR_SECONDS)) * ISSUE_EVERY_HOURS * HOUR_SECONDS;
