import {
  DAY_SHAPE_KEPT_SECONDS,
  dayShapeSums,
  IssueDays,
  type IssueDaysData,
  reshapeDay,
} from './day-shape.js';
import { ErrorPools, type ErrorPoolsData } from './error-pools.js';
import { blendHandOvers } from './hand-over.js';
import { IssueSlots } from './issue-slots.js';
import {
  type BucketLabel,
  bucketIndex,
  countBelow,
  HORIZON_BUCKETS,
  HORIZON_HOURS,
  HOUR_SECONDS,
  DAY_SECONDS,
  afterIssue,
  horizonHours,
  minutesAfterIssue,
  servedHours,
} from './series.js';
import type { ZoneState } from './zone-state.js';

export interface SkillRow {
  readonly bucket: BucketLabel;
  readonly model: string;
  /** Whether this model serves the bucket (the lowest RMSE there). */
  readonly served: boolean;
  readonly n: number;
  readonly mae: number;
  readonly rmse: number;
  /** Percent; intervals with a value of zero are left out. */
  readonly mape: number;
  readonly skill_vs_persistence: number;
  readonly skill_vs_climatology: number;
  /**
   * Against the hour-of-week mean of the last ten weeks plus the newest value's departure,
   * decaying with a 24-hour e-folding time (issue 19's yardstick). Not served by the API (yet).
   */
  readonly skill_vs_climatology_anomaly?: number;
  /** What the model read (`history`, upstream forecast kinds). Not served by the API (yet). */
  readonly inputs?: readonly string[];
  /** Mean per issue of the rank correlation of forecast and outcome within the bucket. */
  readonly spearman: number;
  /** Share of outcomes inside the P10-P90 band known at the issue (walk-forward). */
  readonly p10_p90_coverage: number;
  /**
   * Share of the banded outcomes whose band, as the error quantiles gave it, lay wholly above or
   * below the forecast (a biased point forecast), so that only widening it to contain the
   * forecast made it legal. The forecast as served only; not served by the API.
   */
  readonly band_clamped?: number;
  /**
   * For a 4-hour job placed in the next 24 hours by this forecast: reduction achieved against
   * starting at once, over the reduction of the best placement in hindsight (all buckets alike).
   */
  readonly savings_captured: number;
}

export interface IssueForecasts {
  readonly issueTs: number;
  readonly visibleEnd: number;
  /** One array per model id (candidates and baselines), slots from visibleEnd. */
  readonly values: Map<string, Float64Array>;
}

/**
 * The walk-forward after the models' forecasts (backtest.ts): each issue's forecasts scored
 * against what was published later, the candidates weighed by the earlier issues' errors, the
 * forecast so served and its band. A fold over the issues in order, whose state is plain data
 * (`WalkForwardData`): a daily rerun resumes it from the state stored with the previous run and
 * adds only the new issues, to the same numbers as a run over every issue.
 */

/** The key of the walk-forward served forecast among an issue's values and in `bands`. */
export const SERVED = 'served';

/** At least this many earlier errors (pooled over neighbouring hours) before coverage counts. */
const MIN_BAND_SAMPLES = 40;
/** The band used for the next issues is refreshed this often. */
const BAND_REFRESH_SECONDS = 7 * DAY_SECONDS;
const JOB_HOURS = 4;
const JOB_WINDOW_HOURS = 24;

/** How far back the walk-forward weights look: half a year ranks the candidates steadily. */
const WEIGHT_DAYS = 180;
/**
 * Candidates weighed per bucket: the best this many over WEIGHT_DAYS; the others weigh 0. The
 * candidates err much alike, and one a little behind the best three adds more of its error than
 * of its difference (docs/forecast.md: the combination).
 */
const WEIGHED_CANDIDATES = 3;
/**
 * Weights go with the inverse mean squared error to this power: above 1, a candidate clearly
 * worse than the others (persistence a day ahead) weighs little.
 */
const WEIGHT_POWER = 2;

/**
 * The band's edges by hour ahead, 1 to 72: quantiles of a model's out-of-sample errors (outcome -
 * forecast) at the levels the walk-forward adapted so that 80 % of outcomes fell inside.
 */
export interface ErrorBand {
  readonly q10: readonly number[];
  readonly q90: readonly number[];
}

interface Sums {
  n: number;
  abs: number;
  sq: number;
  pct: number;
  pctN: number;
  persistenceSq: number;
  climatologySq: number;
  anomalySq: number;
  inBand: number;
  banded: number;
  clamped: number;
  spearman: number;
  spearmanN: number;
}

const emptySums = (): Sums => ({
  n: 0,
  abs: 0,
  sq: 0,
  pct: 0,
  pctN: 0,
  persistenceSq: 0,
  climatologySq: 0,
  anomalySq: 0,
  inBand: 0,
  banded: 0,
  clamped: 0,
  spearman: 0,
  spearmanN: 0,
});

interface BucketMisses {
  below: number;
  above: number;
  banded: number;
}

/** Values per issue in `ScoreData.perIssue`: its time, when its outcomes were known, then per bucket the squared errors and their count. */
const PER_ISSUE = 2 + 2 * HORIZON_BUCKETS.length;

/** One model's scoring so far, as plain data. */
interface ScoreData {
  readonly banded: boolean;
  readonly sums: Sums[];
  readonly pools: ErrorPoolsData;
  poolsAt: number;
  /**
   * Per bucket, the quantile levels of the band's edges, adapted so that a tenth of the outcomes
   * falls below and a tenth above (adaptive conformal inference, Gibbs & Candes 2021). An issue's
   * misses adapt them only once its outcomes would have been published.
   */
  levels: [number, number][];
  readonly pendingMisses: { knownAt: number; misses: BucketMisses[] }[];
  /** Savings achieved and possible, summed over the issues that had both (`jobSaving`). */
  achieved: number;
  possible: number;
  /** The issues of the last WEIGHT_DAYS (what the weights read). */
  readonly perIssue: IssueWindow;
}

/**
 * Issues of `ScoreData.perIssue`, PER_ISSUE values each, oldest first, `values[start, end)` of
 * one buffer: appended, and the stale let go, by moving an index (not by shifting an array).
 */
class IssueWindow {
  values = new Float64Array(64 * PER_ISSUE);
  start = 0;
  end = 0;

  /** Appends an issue's PER_ISSUE values. */
  push(issue: Float64Array): void {
    if (this.end + PER_ISSUE > this.values.length) {
      // Full: the issues moved to the front, into a buffer twice the size when over half full.
      const held = this.values.slice(this.start, this.end);
      if (2 * (held.length + PER_ISSUE) > this.values.length) {
        this.values = new Float64Array(2 * this.values.length);
      }
      this.values.set(held);
      this.start = 0;
      this.end = held.length;
    }
    this.values.set(issue, this.end);
    this.end += PER_ISSUE;
  }

  /** Lets go of the issues before `keptFrom`. */
  dropBefore(keptFrom: number): void {
    while (this.start < this.end && this.values[this.start]! < keptFrom) this.start += PER_ISSUE;
  }
}

/** A model's scoring as stored: its arrays typed (a copy is a copy of bytes). */
type StoredScore = Omit<ScoreData, 'perIssue'> & { readonly perIssue: StoredPerIssue };

/**
 * `ScoreData.perIssue` as stored, in fewer bytes (a rerun's state holds half a year of it per
 * candidate): the issue times left out (the newest of the walk-forward's), when the outcomes were
 * known as minutes after the issue (its slots' ends: whole minutes, hours after it), the counts as
 * the small whole numbers they are (a bucket's slots: below 2^16 for any step over 2 s).
 */
interface StoredPerIssue {
  readonly knownAfterMinutes: Uint16Array;
  /** Per issue, each bucket's squared errors. */
  readonly squares: Float64Array;
  readonly counts: Uint16Array;
}

function storedPerIssue(window: IssueWindow): StoredPerIssue {
  const perIssue = window.values.subarray(window.start, window.end);
  const issues = perIssue.length / PER_ISSUE;
  const buckets = HORIZON_BUCKETS.length;
  const knownAfterMinutes = new Uint16Array(issues);
  const squares = new Float64Array(issues * buckets);
  const counts = new Uint16Array(issues * buckets);
  for (let k = 0; k < issues; k++) {
    knownAfterMinutes[k] = minutesAfterIssue(
      perIssue[k * PER_ISSUE + 1]!,
      perIssue[k * PER_ISSUE]!,
    );
    for (let bucket = 0; bucket < buckets; bucket++) {
      squares[k * buckets + bucket] = perIssue[k * PER_ISSUE + 2 + bucket]!;
      counts[k * buckets + bucket] = perIssue[k * PER_ISSUE + 2 + buckets + bucket]!;
    }
  }
  return { knownAfterMinutes, squares, counts };
}

/** `stored` as `ScoreData.perIssue`, its issues the last of `issueTimes`. */
function livePerIssue(stored: StoredPerIssue, issueTimes: readonly number[]): IssueWindow {
  const issues = stored.knownAfterMinutes.length;
  const buckets = HORIZON_BUCKETS.length;
  const window = new IssueWindow();
  const issue = new Float64Array(PER_ISSUE);
  const first = issueTimes.length - issues;
  for (let k = 0; k < issues; k++) {
    issue[0] = issueTimes[first + k]!;
    issue[1] = afterIssue(stored.knownAfterMinutes[k]!, issue[0]);
    for (let bucket = 0; bucket < buckets; bucket++) {
      issue[2 + bucket] = stored.squares[k * buckets + bucket]!;
      issue[2 + buckets + bucket] = stored.counts[k * buckets + bucket]!;
    }
    window.push(issue);
  }
  return window;
}

/** The whole walk-forward so far, as plain data: what a daily rerun resumes from. */
export interface WalkForwardData {
  /** Every issue so far (an error pool's issue index points here). */
  readonly issueTimes: number[];
  readonly candidates: StoredScore[];
  readonly served: StoredScore;
  /** The issues of the last DAY_SHAPE_KEPT_SECONDS and their next day's shapes. */
  readonly days: IssueDaysData;
  /** Per bucket and candidate, the sum of the candidate's weight over the issues. */
  readonly weightSums: Float64Array;
}

const newScore = (banded: boolean): StoredScore => ({
  banded,
  sums: HORIZON_BUCKETS.map(emptySums),
  pools: new ErrorPools().data([]),
  poolsAt: Number.NEGATIVE_INFINITY,
  levels: HORIZON_BUCKETS.map(() => [TAIL, 1 - TAIL]),
  pendingMisses: [],
  achieved: 0,
  possible: 0,
  perIssue: storedPerIssue(new IssueWindow()),
});

const noDays = (): IssueDaysData => ({
  issueTs: new Float64Array(0),
  publishedAt: new Float64Array(0),
  sums: new Float64Array(0),
});

/** What the walk-forward gives after its last issue. */
export interface WalkForwardResult {
  /** Per candidate, its rows by bucket. */
  readonly rows: Omit<SkillRow, 'served' | 'inputs'>[][];
  /** The served forecast's rows by bucket and its band. */
  readonly servedRows: Omit<SkillRow, 'served' | 'inputs'>[];
  readonly band: ErrorBand;
  /** What serves next, per bucket and candidate (`bucket * candidates + k`). */
  readonly finalWeights: Float64Array;
  /** Per bucket, each candidate's mean weight over the issues. */
  readonly chosen: Record<string, number>[];
  /** The next day's shape weights after the last issue, when enough days were published. */
  readonly nextDayShape: Float64Array | null;
}

interface LiveData extends Omit<WalkForwardData, 'candidates' | 'served' | 'days'> {
  readonly candidates: ScoreData[];
  readonly served: ScoreData;
  readonly days: IssueDays;
}

const live = (score: StoredScore, issueTimes: readonly number[]): ScoreData => ({
  ...score,
  perIssue: livePerIssue(score.perIssue, issueTimes),
});
/** `pools`: the band's, for the served forecast (the candidates' stay empty, stored as read). */
const stored = (
  score: ScoreData,
  issueTimes: readonly number[],
  pools?: ErrorPools,
): StoredScore => ({
  ...score,
  ...(pools && { pools: pools.data(issueTimes) }),
  perIssue: storedPerIssue(score.perIssue),
});

export class WalkForward {
  private readonly data: LiveData;
  private readonly servedPools: ErrorPools;
  private readonly work = new ScoreWork();

  /**
   * `candidateIds`: the candidates, in order; `reshaped`: whether the next day's shape is fitted
   * (not where the operator's forecast is republished as it is); `from`: the state to resume.
   */
  constructor(
    private readonly state: ZoneState,
    private readonly candidateIds: readonly string[],
    private readonly reshaped: boolean,
    from?: WalkForwardData,
  ) {
    const start = from ?? {
      issueTimes: [],
      candidates: candidateIds.map(() => newScore(false)),
      served: newScore(true),
      days: noDays(),
      weightSums: new Float64Array(HORIZON_BUCKETS.length * candidateIds.length),
    };
    this.data = {
      ...start,
      candidates: start.candidates.map((score) => live(score, start.issueTimes)),
      served: live(start.served, start.issueTimes),
      days: new IssueDays(candidateIds.length, start.days),
    };
    this.servedPools = new ErrorPools({
      data: this.data.served.pools,
      issueTimes: this.data.issueTimes,
    });
  }

  /** How many issues have been added. */
  get issues(): number {
    return this.data.issueTimes.length;
  }

  get firstIssueTs(): number | null {
    return this.data.issueTimes[0] ?? null;
  }

  get lastIssueTs(): number | null {
    return this.data.issueTimes.at(-1) ?? null;
  }

  /** A copy of the state so far, as plain data (what a later run resumes from). */
  snapshot(): WalkForwardData {
    const { candidates, served, days, ...rest } = this.data;
    return structuredClone({
      ...rest,
      candidates: candidates.map((score) => stored(score, rest.issueTimes)),
      served: stored(served, rest.issueTimes, this.servedPools),
      days: days.data(),
    });
  }

  /**
   * Scores one more issue (after every earlier one): each candidate's forecast, then the forecast
   * served at it (set on `issue.values` as SERVED), from the weights and day shape the earlier
   * issues' published outcomes give.
   */
  add(issue: IssueForecasts): void {
    const { data, state, candidateIds } = this;
    const index = data.issueTimes.length;
    data.issueTimes.push(issue.issueTs);
    const lag = state.inputs.publicationLagSeconds;
    candidateIds.forEach((id, k) => {
      scoreIssue(
        this.work,
        state,
        data.candidates[k]!,
        undefined,
        data.issueTimes,
        index,
        issue,
        id,
      );
    });
    const weights = this.weightsAt(issue.issueTs, lag);
    for (let e = 0; e < weights.length; e++) data.weightSums[e]! += weights[e]!;
    const sources = candidateIds.map((id) => issue.values.get(id)!);
    const combined = combine(state, issue, sources, weights);
    let served = combined;
    if (this.reshaped) {
      const dayShape = data.days.weightsAt(issue.issueTs);
      if (dayShape) served = reshapeDay(state, issue, combined, sources, dayShape);
      data.days.push(issue.issueTs, dayShapeSums(state, issue, sources));
      data.days.dropBefore(issue.issueTs - DAY_SHAPE_KEPT_SECONDS);
    }
    issue.values.set(SERVED, served);
    scoreIssue(
      this.work,
      state,
      data.served,
      this.servedPools,
      data.issueTimes,
      index,
      issue,
      SERVED,
    );
  }

  /** The rows, band and weights after the last issue added (the state is spent). */
  finish(): WalkForwardResult {
    const { data, state, candidateIds } = this;
    const lag = state.inputs.publicationLagSeconds;
    const count = data.issueTimes.length;
    const rows = candidateIds.map((id, k) => scoreRows(data.candidates[k]!, id));
    const servedRows = scoreRows(data.served, SERVED);
    // The band served next: every error known after the last issue, at the levels reached.
    const finalPools = this.servedPools.at(data.issueTimes, count, Number.POSITIVE_INFINITY);
    const levels = data.served.levels;
    const edge = (side: 0 | 1) =>
      Array.from({ length: HORIZON_HOURS }, (_, hour) => {
        const pool = finalPools[hour];
        if (!pool || pool.length < MIN_BAND_SAMPLES) return Number.NaN;
        const value = quantile(pool, levels[bucketIndex(hour + 1)]![side]);
        return side === 0 ? Math.min(0, value) : Math.max(0, value);
      });
    const chosen = HORIZON_BUCKETS.map((_, bucket) => {
      const means: Record<string, number> = {};
      candidateIds.forEach((id, k) => {
        const sum = data.weightSums[bucket * candidateIds.length + k]!;
        means[id] = count > 0 ? sum / count : 0;
      });
      return means;
    });
    return {
      rows,
      servedRows,
      band: { q10: edge(0), q90: edge(1) },
      finalWeights: this.weightsAt(Number.POSITIVE_INFINITY, lag),
      chosen,
      nextDayShape: this.reshaped ? data.days.weightsAt(Number.POSITIVE_INFINITY) : null,
    };
  }

  /**
   * At `at` (infinite: after the last issue), per bucket and candidate (index
   * `bucket * candidates + k`), the candidate's weight: for the WEIGHED_CANDIDATES best, its
   * inverse mean squared error (to WEIGHT_POWER) over the earlier issues of the last WEIGHT_DAYS
   * whose outcomes were published by then, else 0; the weights of a bucket summing to 1. All on
   * the first candidate before any outcome is known.
   */
  private weightsAt(at: number, lagSeconds: number): Float64Array {
    const buckets = HORIZON_BUCKETS.length;
    const count = this.candidateIds.length;
    const lastIssueTs = Number.isFinite(at) ? at : (this.lastIssueTs ?? 0) + DAY_SECONDS;
    const since = lastIssueTs - WEIGHT_DAYS * DAY_SECONDS;
    const weights = new Float64Array(buckets * count);
    // Per candidate, one pass over the earlier issues sums every bucket's errors.
    const inverses = this.data.candidates.map(({ perIssue: { values: perIssue, start, end } }) => {
      const sq = new Float64Array(buckets);
      const n = new Float64Array(buckets);
      for (let at0 = end - PER_ISSUE; at0 >= start; at0 -= PER_ISSUE) {
        if (perIssue[at0]! < since) break;
        if (perIssue[at0 + 1]! + lagSeconds > at) continue;
        for (let bucket = 0; bucket < buckets; bucket++) {
          sq[bucket]! += perIssue[at0 + 2 + bucket]!;
          n[bucket]! += perIssue[at0 + 2 + buckets + bucket]!;
        }
      }
      return Array.from(n, (total, bucket) =>
        total > 0 ? (total / Math.max(sq[bucket]!, 1e-9)) ** WEIGHT_POWER : Number.NaN,
      );
    });
    for (let bucket = 0; bucket < buckets; bucket++) {
      const measured = inverses.map((byBucket) => byBucket[bucket]!);
      // Ties at the cut all weigh: no candidate is dropped for its place in the list.
      const cut = measured.filter((value) => !Number.isNaN(value)).sort((a, b) => b - a)[
        WEIGHED_CANDIDATES - 1
      ];
      const inverse = measured.map((value) => (cut !== undefined && value < cut ? 0 : value));
      const total = inverse.reduce((sum, value) => sum + (Number.isNaN(value) ? 0 : value), 0);
      inverse.forEach((value, k) => {
        weights[bucket * count + k] =
          total > 0 ? (Number.isNaN(value) ? 0 : value / total) : k === 0 ? 1 : 0;
      });
    }
    return weights;
  }
}

/**
 * Scores one issue of one model into `score` (its sums, its errors for the weights and, when
 * banded, its band's coverage and pooled errors in `bandPools`: the served forecast's; the
 * candidates are not banded, and have none).
 */
function scoreIssue(
  work: ScoreWork,
  state: ZoneState,
  score: ScoreData,
  bandPools: ErrorPools | undefined,
  issueTimes: readonly number[],
  index: number,
  issue: IssueForecasts,
  modelId: string,
): void {
  const lag = state.inputs.publicationLagSeconds;
  const { sums } = score;
  const banded = bandPools !== undefined;
  // What was published by this issue time: errors of intervals over by then, misses known.
  const knownBy = issue.issueTs - lag;
  while (score.pendingMisses.length > 0 && score.pendingMisses[0]!.knownAt <= knownBy) {
    const { misses } = score.pendingMisses.shift()!;
    score.levels = score.levels.map((level, bucket) => {
      const { below, above, banded: count } = misses[bucket]!;
      return count > 0 ? adaptLevels(level, below / count, above / count) : level;
    });
  }
  if (banded && issue.issueTs - score.poolsAt >= BAND_REFRESH_SECONDS) {
    bandPools.at(issueTimes, index, knownBy);
    score.poolsAt = issue.issueTs;
  }
  const pools = banded && Number.isFinite(score.poolsAt) ? bandPools.current : [];
  const forecast = issue.values.get(modelId)!;
  const misses: BucketMisses[] = HORIZON_BUCKETS.map(() => ({ below: 0, above: 0, banded: 0 }));
  const buckets = HORIZON_BUCKETS.length;
  const length = forecast.length;
  const { pairedForecasts, pairedActuals, paired, issueErrors } = work.cleared(length);
  const slots = work.slots.of(state, issue, length);
  const { outcomes } = slots;
  issueErrors[0] = issue.issueTs;
  let lastEnd = issue.issueTs;
  for (let i = 0; i < length; i++) {
    const bucket = slots.bucket[i]!;
    if (bucket < 0) continue;
    const predicted = forecast[i]!;
    if (Number.isNaN(predicted)) continue;
    const value = slots.actual[i]!;
    const hours = slots.hours[i]!;
    const end = slots.end[i]!;
    const s = sums[bucket]!;
    const error = value - predicted;
    s.n++;
    s.abs += Math.abs(error);
    s.sq += error * error;
    issueErrors[2 + bucket]! += error * error;
    issueErrors[2 + buckets + bucket]! += 1;
    if (value !== 0) {
      s.pct += Math.abs(error / value);
      s.pctN++;
    }
    s.persistenceSq += slots.persistenceSq[i]!;
    s.climatologySq += slots.climatologySq[i]!;
    s.anomalySq += slots.anomalySq[i]!;
    const pool = pools[hours - 1];
    if (banded && pool && pool.length >= MIN_BAND_SAMPLES) {
      const [low, high] = score.levels[bucket]!;
      const miss = misses[bucket]!;
      miss.banded++;
      s.banded++;
      const lowEdge = quantile(pool, low);
      const highEdge = quantile(pool, high);
      if (lowEdge > 0 || highEdge < 0) s.clamped++;
      // The band always contains the forecast (prepare.ts serves it so).
      if (error < Math.min(0, lowEdge)) miss.below++;
      else if (error > Math.max(0, highEdge)) miss.above++;
      else s.inBand++;
    }
    const pair = bucket * length + paired[bucket]!++;
    pairedForecasts[pair] = predicted;
    pairedActuals[pair] = value;
    if (banded) bandPools.add(hours, index, end, error);
    lastEnd = Math.max(lastEnd, end);
  }
  if (misses.some((miss) => miss.banded > 0)) {
    score.pendingMisses.push({ knownAt: lastEnd, misses });
  }
  if (!banded) {
    issueErrors[1] = lastEnd;
    score.perIssue.push(issueErrors);
    // The weights look back WEIGHT_DAYS from a later issue: older issues weigh none.
    score.perIssue.dropBefore(issue.issueTs - WEIGHT_DAYS * DAY_SECONDS);
  }
  for (let bucket = 0; bucket < buckets; bucket++) {
    const from = bucket * length;
    const to = from + paired[bucket]!;
    const pairedOutcomes = pairedActuals.subarray(from, to);
    const rho = spearman(
      pairedForecasts.subarray(from, to),
      pairedOutcomes,
      paired[bucket] === outcomes[bucket] ? outcomeRanks(issue, bucket, pairedOutcomes) : undefined,
    );
    if (rho === null) continue;
    sums[bucket]!.spearman += rho;
    sums[bucket]!.spearmanN++;
  }
  const saving = jobSaving(state, issue, forecast);
  if (saving) {
    score.achieved += saving.achieved;
    score.possible += saving.possible;
  }
}

/** What `scoreIssue` works in, kept from one issue to the next (each would allocate its own). */
class ScoreWork {
  /** Per bucket, its forecasts and outcomes in slot order (bucket b's from b * length on). */
  pairedForecasts = new Float64Array(0);
  pairedActuals = new Float64Array(0);
  readonly paired = new Int32Array(HORIZON_BUCKETS.length);
  readonly issueErrors = new Float64Array(PER_ISSUE);
  readonly slots = new IssueSlots();

  /** The work space for forecasts of `length` slots, its counts and errors zero. */
  cleared(length: number): this {
    const size = HORIZON_BUCKETS.length * length;
    if (this.pairedForecasts.length < size) {
      this.pairedForecasts = new Float64Array(size);
      this.pairedActuals = new Float64Array(size);
    }
    this.paired.fill(0);
    this.issueErrors.fill(0);
    return this;
  }
}

/** A model's rows by bucket from its scoring. */
function scoreRows(score: ScoreData, modelId: string): Omit<SkillRow, 'served' | 'inputs'>[] {
  // Achieved over possible savings, summed over the issues that had both; NaN without any.
  const savingsCaptured = score.possible > 0 ? score.achieved / score.possible : Number.NaN;
  return HORIZON_BUCKETS.map(({ label }, bucket) => {
    const s = score.sums[bucket]!;
    const rmse = Math.sqrt(s.sq / s.n);
    return {
      bucket: label,
      model: modelId,
      n: s.n,
      mae: s.abs / s.n,
      rmse,
      mape: (100 * s.pct) / s.pctN,
      skill_vs_persistence: 1 - rmse / Math.sqrt(s.persistenceSq / s.n),
      skill_vs_climatology: 1 - rmse / Math.sqrt(s.climatologySq / s.n),
      skill_vs_climatology_anomaly: 1 - rmse / Math.sqrt(s.anomalySq / s.n),
      spearman: s.spearman / s.spearmanN,
      p10_p90_coverage: s.inBand / s.banded,
      ...(score.banded && { band_clamped: s.clamped / s.banded }),
      savings_captured: savingsCaptured,
    };
  });
}

/**
 * One forecast from several: per bucket the weighted mean of `sources` (weights as
 * `WalkForward.weightsAt` lays them out), the hand-overs from bucket to bucket blended
 * (hand-over.ts).
 */
export function combine(
  state: ZoneState,
  issue: { readonly issueTs: number; readonly visibleEnd: number },
  sources: readonly Float64Array[],
  weights: Float64Array,
): Float64Array {
  const length = sources[0]!.length;
  const count = sources.length;
  const buckets = HORIZON_BUCKETS.length;
  const mixed = Array.from({ length: buckets }, () => new Float64Array(length));
  const choice = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    const hours = horizonHours(
      state.slotTs(issue.visibleEnd + i),
      state.series.step,
      issue.issueTs,
    );
    choice[i] = bucketIndex(servedHours(hours));
    for (let bucket = 0; bucket < buckets; bucket++) {
      let value = 0;
      for (let k = 0; k < count; k++) {
        const weight = weights[bucket * count + k]!;
        if (weight > 0) value += weight * sources[k]![i]!;
      }
      mixed[bucket]![i] = value;
    }
  }
  return blendHandOvers(mixed, choice, HOUR_SECONDS / state.series.step);
}

/** The share of outcomes each edge of the band aims to leave outside. */
const TAIL = 0.1;
/**
 * How far one issue's misses move a level. Small: an issue's misses are known only once its 72
 * hours are published (a dozen issues later at one every 6 hours), and a level adapted on stale
 * news swings past its mark, more often to the narrow side (a quantile widens slower than it
 * narrows in the tails): coverage then falls below target.
 */
const ADAPT_RATE = 0.005;

function adaptLevels(
  [low, high]: [number, number],
  belowShare: number,
  aboveShare: number,
): [number, number] {
  const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));
  return [
    clamp(low + ADAPT_RATE * (TAIL - belowShare), 0.005, 0.3),
    clamp(high + ADAPT_RATE * (aboveShare - TAIL), 0.7, 0.995),
  ];
}

/** Linear interpolation between order statistics of a sorted array. */
export function quantile(sorted: ArrayLike<number>, p: number): number {
  const position = (sorted.length - 1) * p;
  const below = Math.floor(position);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (position - below);
}

/**
 * By issue, per bucket, the ranks of all its published outcomes: every model that forecast each
 * of them (most do) is ranked against the same.
 */
const outcomeRanksByIssue = new WeakMap<IssueForecasts, Float64Array[]>();

function outcomeRanks(issue: IssueForecasts, bucket: number, outcomes: Float64Array): Float64Array {
  let byBucket = outcomeRanksByIssue.get(issue);
  if (!byBucket) outcomeRanksByIssue.set(issue, (byBucket = []));
  return (byBucket[bucket] ??= ranks(
    outcomes,
    new Float64Array(outcomes.length),
    new Float64Array(outcomes.length),
  ));
}

/**
 * Spearman's rank correlation; null for fewer than 3 pairs or a constant side. `ranksOfB`: the
 * ranks of `b`, when known.
 */
export function spearman(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  ranksOfB?: Float64Array,
): number | null {
  if (a.length < 3) return null;
  const { sorted, ofA, ofB } = rankWork(a.length);
  const ra = ranks(a, sorted, ofA);
  const rb = ranksOfB ?? ranks(b, sorted, ofB);
  const mean = (ra.length + 1) / 2;
  let cov = 0;
  let va = 0;
  let vb = 0;
  for (let i = 0; i < ra.length; i++) {
    cov += (ra[i]! - mean) * (rb[i]! - mean);
    va += (ra[i]! - mean) ** 2;
    vb += (rb[i]! - mean) ** 2;
  }
  return va === 0 || vb === 0 ? null : cov / Math.sqrt(va * vb);
}

/** Work space of `spearman` (the walk-forward ranks millions of small sets), grown as needed. */
let rankBuffers = {
  sorted: new Float64Array(0),
  ofA: new Float64Array(0),
  ofB: new Float64Array(0),
};

/** Views of the work space of `length` numbers: to sort, and the ranks of either side. */
function rankWork(length: number): typeof rankBuffers {
  if (rankBuffers.sorted.length < length) {
    rankBuffers = {
      sorted: new Float64Array(length),
      ofA: new Float64Array(length),
      ofB: new Float64Array(length),
    };
  }
  const { sorted, ofA, ofB } = rankBuffers;
  return {
    sorted: sorted.subarray(0, length),
    ofA: ofA.subarray(0, length),
    ofB: ofB.subarray(0, length),
  };
}

/**
 * Ranks from 1 into `result`, ties sharing their mean rank (-0 and 0 tie); `sorted` is work space
 * of the values' length. The walk-forward ranks millions of small sets: sorted as numbers (no
 * comparator to call), each value's run of ties then found by bisection.
 */
function ranks(
  values: ArrayLike<number>,
  sorted: Float64Array,
  result: Float64Array,
): Float64Array {
  sorted.set(values);
  sorted.sort();
  for (let index = 0; index < values.length; index++) {
    const value = values[index]!;
    // The value's run of ties among the sorted: from the first not below it to the last not above.
    const first = countBelow(sorted, value);
    const last = countBelow(sorted, value, true) - 1;
    result[index] = (first + last) / 2 + 1;
  }
  return result;
}

/**
 * A 4-hour job placed in the 24 hours after the issue where `forecast` is lowest: what it saved
 * against starting at once, and what the best placement in hindsight would have saved. Null when
 * the forecast or the outcome is incomplete there.
 */
function jobSaving(
  state: ZoneState,
  issue: IssueForecasts,
  forecast: Float64Array,
): { achieved: number; possible: number } | null {
  const step = state.series.step;
  const actual = state.series.values;
  const jobSlots = Math.ceil((JOB_HOURS * HOUR_SECONDS) / step);
  const windowSlots = Math.ceil((JOB_WINDOW_HOURS * HOUR_SECONDS) / step);
  // The first slot that starts at or after the issue time.
  const first = Math.ceil((issue.issueTs - state.series.startTs) / step);
  if (first < issue.visibleEnd) return null;
  const offset = first - issue.visibleEnd;
  if (offset + windowSlots > forecast.length || first + windowSlots > actual.length) return null;
  const starts = windowSlots - jobSlots + 1;
  let bestForecast = Number.POSITIVE_INFINITY;
  let chosen = 0;
  let oracle = Number.POSITIVE_INFINITY;
  let atOnce = 0;
  for (let start = 0; start < starts; start++) {
    let predicted = 0;
    let outcome = 0;
    for (let k = 0; k < jobSlots; k++) {
      predicted += forecast[offset + start + k]!;
      outcome += actual[first + start + k]!;
    }
    if (Number.isNaN(predicted) || Number.isNaN(outcome)) return null;
    if (start === 0) atOnce = outcome;
    if (predicted < bestForecast) {
      bestForecast = predicted;
      chosen = outcome;
    }
    oracle = Math.min(oracle, outcome);
  }
  return { achieved: (atOnce - chosen) / jobSlots, possible: (atOnce - oracle) / jobSlots };
}
