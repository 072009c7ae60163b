import { CLIMATOLOGY_ANOMALY, PERSISTENCE, WEEKLY_PROFILE } from './baselines.js';
import { bucketIndex, HORIZON_BUCKETS, horizonHours } from './series.js';
import type { ZoneState } from './zone-state.js';

/** What the slots are read from: an issue's forecasts (walk-forward.ts `IssueForecasts`). */
interface IssueValues {
  readonly issueTs: number;
  readonly visibleEnd: number;
  readonly values: ReadonlyMap<string, Float64Array>;
}

/**
 * What scoring an issue reads of each slot of its forecasts (from `visibleEnd`), the same for
 * every model scored at it (the candidates, then the forecast served): worked out once per issue
 * instead of once per model.
 */
export class IssueSlots {
  private issue: IssueValues | undefined;
  private length = 0;
  /** The slot's bucket; -1 where it is not scored (no outcome published, or past the horizon). */
  bucket = new Int8Array(0);
  hours = new Int32Array(0);
  actual = new Float64Array(0);
  /** When the slot's interval ends. */
  end = new Float64Array(0);
  /** The baselines' squared errors. */
  persistenceSq = new Float64Array(0);
  climatologySq = new Float64Array(0);
  anomalySq = new Float64Array(0);
  /** Per bucket, the slots scored: a model that forecast each is ranked against them all. */
  readonly outcomes = new Int32Array(HORIZON_BUCKETS.length);

  /** The slots of `issue`'s forecasts of `length` slots. */
  of(state: ZoneState, issue: IssueValues, length: number): this {
    if (issue === this.issue && length === this.length) return this;
    this.issue = issue;
    this.length = length;
    if (this.bucket.length < length) this.grow(length);
    const actual = state.series.values;
    const step = state.series.step;
    const persistence = issue.values.get(PERSISTENCE.id)!;
    const climatology = issue.values.get(WEEKLY_PROFILE.id)!;
    const anomaly = issue.values.get(CLIMATOLOGY_ANOMALY.id)!;
    this.outcomes.fill(0);
    for (let i = 0; i < length; i++) {
      this.bucket[i] = -1;
      const slot = issue.visibleEnd + i;
      const value = actual[slot];
      if (value === undefined || Number.isNaN(value)) continue;
      const slotTs = state.slotTs(slot);
      const hours = horizonHours(slotTs, step, issue.issueTs);
      if (hours < 1) continue;
      const bucket = bucketIndex(hours);
      if (bucket < 0) continue;
      this.outcomes[bucket]!++;
      this.bucket[i] = bucket;
      this.hours[i] = hours;
      this.actual[i] = value;
      this.end[i] = slotTs + step;
      this.persistenceSq[i] = (value - persistence[i]!) ** 2;
      this.climatologySq[i] = (value - climatology[i]!) ** 2;
      this.anomalySq[i] = (value - anomaly[i]!) ** 2;
    }
    return this;
  }

  private grow(length: number): void {
    this.bucket = new Int8Array(length);
    this.hours = new Int32Array(length);
    this.actual = new Float64Array(length);
    this.end = new Float64Array(length);
    this.persistenceSq = new Float64Array(length);
    this.climatologySq = new Float64Array(length);
    this.anomalySq = new Float64Array(length);
  }
}
