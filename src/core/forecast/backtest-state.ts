import { createHash } from 'node:crypto';
import type { DepartureFit } from './departure-fit.js';
import { departureFitsSince, holdDepartureFits } from './departure-regression.js';
import { type ForecastBasis, horizonEnd } from './forecast-model.js';
import { WEEK_SECONDS } from './series.js';
import type { WalkForwardData } from './walk-forward.js';
import type { ZoneState } from './zone-state.js';

/**
 * What a zone's backtest keeps for the next run (issue 38): the walk-forward after its last
 * settled issue (every outcome it is scored on published), the forecasts of the issues after it,
 * and the departure regressions' newest fits. The next run, a day later with a day more of data,
 * resumes there: it scores the unsettled issues again on their stored forecasts and forecasts
 * only the new issues. It resumes only when the models, the grid and every value the state was
 * made from (a digest) are the same; else the zone runs from its first issue.
 */

/** Bumped when what the state holds or how the walk-forward folds changes. */
const STATE_FORMAT = 4;

export interface ZoneBacktestState {
  readonly format: number;
  readonly zone: string;
  readonly basis: ForecastBasis;
  /** Every model forecast at each issue (candidates, baselines, fallback), in order. */
  readonly models: readonly string[];
  readonly startTs: number;
  readonly step: number;
  readonly publicationLagSeconds: number;
  /** The first and last issue times asked for. */
  readonly firstIssueTs: number;
  readonly lastIssueTs: number;
  readonly checkpoint: WalkForwardData;
  /** The issues after the checkpoint, with every model's forecast (the served one left out). */
  readonly tail: readonly StoredIssue[];
  readonly coverage: Coverage;
  readonly digest: string;
  readonly departureFits: readonly (readonly [key: number, fit: DepartureFit | undefined])[];
}

export interface StoredIssue {
  readonly issueTs: number;
  readonly visibleEnd: number;
  readonly values: Map<string, Float64Array>;
}

/** What the digest covers: the values before `publishedEnd`, the upstreams' issues before `lastIssueTs` on the first `slots` slots. */
interface Coverage {
  readonly publishedEnd: number;
  readonly slots: number;
  readonly lastIssueTs: number;
}

/** The slot after the newest published value: issues whose horizon ends by then are settled. */
export function publishedEnd(values: Float64Array): number {
  for (let slot = values.length - 1; slot >= 0; slot--) {
    if (!Number.isNaN(values[slot]!)) return slot + 1;
  }
  return 0;
}

/** Whether every outcome an issue is scored on had its chance to be published. */
export const isSettled = (state: ZoneState, issueTs: number, end: number): boolean =>
  horizonEnd(state, issueTs) <= end;

/** Everything a state's forecasts and scores read, within `coverage`. */
function digestOf(state: ZoneState, coverage: Coverage): string {
  const hash = createHash('sha256');
  const bytes = (values: Float64Array, end: number) =>
    hash.update(new Uint8Array(values.buffer, values.byteOffset, Math.min(end, values.length) * 8));
  bytes(state.series.values, coverage.publishedEnd);
  if (state.inputs.generation) bytes(state.inputs.generation.values, coverage.publishedEnd);
  for (const [name, series] of Object.entries(state.inputs.upstream).sort(([a], [b]) =>
    a.localeCompare(b),
  )) {
    const { offsets, issued, values } = series.toData();
    const slots = Math.min(coverage.slots, offsets.length - 1);
    const entries = new Float64Array(3 * offsets[slots]!);
    let length = 0;
    for (let slot = 0; slot < slots; slot++) {
      for (let entry = offsets[slot]!; entry < offsets[slot + 1]!; entry++) {
        if (issued[entry]! > coverage.lastIssueTs) continue;
        entries[length++] = slot;
        entries[length++] = issued[entry]!;
        entries[length++] = values[entry]!;
      }
    }
    hash.update(name);
    bytes(entries, length);
  }
  return hash.digest('hex');
}

/**
 * `digestOf` a stored state's coverage, once per zone state: a run asks whether a zone-basis
 * resumes before it runs it (to pick where), and again as it does.
 */
const digests = new WeakMap<ZoneState, WeakMap<Coverage, string>>();

function coveredValuesDigest(state: ZoneState, coverage: Coverage): string {
  let byCoverage = digests.get(state);
  if (!byCoverage) digests.set(state, (byCoverage = new WeakMap()));
  let digest = byCoverage.get(coverage);
  if (digest === undefined) byCoverage.set(coverage, (digest = digestOf(state, coverage)));
  return digest;
}

export interface BacktestIdentity {
  readonly zone: string;
  readonly basis: ForecastBasis;
  readonly models: readonly string[];
  readonly issueTimes: readonly number[];
}

/** Why a zone and basis ran from its first issue rather than resuming (operators read it in the log). */
export type FallBackReason =
  | 'no state'
  | 'state format'
  | 'models'
  | 'grid'
  | 'publication lag'
  | 'first issue'
  | 'last issue'
  | 'values';

/**
 * The stored state to resume from, when it was made for the same zone, models, grid and first
 * issue, for issues that are a first part of those asked, on the same values; else why not.
 */
export function resumable(
  previous: ZoneBacktestState | undefined,
  state: ZoneState,
  asked: BacktestIdentity,
): { readonly state: ZoneBacktestState } | { readonly fellBack: FallBackReason } {
  const fellBack = fallBackReason(previous, state, asked);
  if (fellBack) return { fellBack };
  holdDepartureFits(state, previous!.departureFits);
  return { state: previous! };
}

/** Why a run over `asked` on `state` cannot resume from `previous`; null when it can. */
export function fallBackReason(
  previous: ZoneBacktestState | undefined,
  state: ZoneState,
  asked: BacktestIdentity,
): FallBackReason | null {
  if (!previous) return 'no state';
  if (previous.format !== STATE_FORMAT) return 'state format';
  if (
    previous.zone !== asked.zone ||
    previous.basis !== asked.basis ||
    previous.models.join(',') !== asked.models.join(',')
  )
    return 'models';
  if (previous.startTs !== state.series.startTs || previous.step !== state.series.step)
    return 'grid';
  if (previous.publicationLagSeconds !== state.inputs.publicationLagSeconds)
    return 'publication lag';
  if (previous.firstIssueTs !== asked.issueTimes[0]) return 'first issue';
  if (!asked.issueTimes.includes(previous.lastIssueTs)) return 'last issue';
  if (coveredValuesDigest(state, previous.coverage) !== previous.digest) return 'values';
  return null;
}

/** The state to store after a run over `asked`, resumed from `checkpoint` and `tail`. */
export function stateToKeep(
  state: ZoneState,
  asked: BacktestIdentity,
  checkpoint: WalkForwardData,
  tail: readonly StoredIssue[],
): ZoneBacktestState {
  const lastIssueTs = asked.issueTimes.at(-1)!;
  const coverage = {
    // The stored forecasts' issues saw no further: a gap before them filled later is a change.
    publishedEnd: Math.max(publishedEnd(state.series.values), state.visibleEndAt(lastIssueTs)),
    slots: state.series.values.length,
    lastIssueTs,
  };
  return {
    format: STATE_FORMAT,
    zone: asked.zone,
    basis: asked.basis,
    models: asked.models,
    startTs: state.series.startTs,
    step: state.series.step,
    publicationLagSeconds: state.inputs.publicationLagSeconds,
    firstIssueTs: asked.issueTimes[0]!,
    lastIssueTs,
    checkpoint,
    tail,
    coverage,
    digest: digestOf(state, coverage),
    // The newest week's fits: the next run's issues of that week reuse them.
    departureFits: departureFitsSince(state, lastIssueTs - WEEK_SECONDS),
  };
}
