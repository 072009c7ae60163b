import {
  type Anchor,
  anchorOf,
  daysToPublishAll,
  forEachTrainingBlock,
  type ForecastModel,
  HISTORY_ONLY,
  type Issue,
  nanArray,
  type TrainingBlock,
  TRAINING_DAYS,
} from './forecast-model.js';
import { bucketIndex, DAY_SECONDS, HORIZON_BUCKETS, horizonHours, servedHours } from './series.js';
import { CLIMATOLOGY_WEEKS, type ZoneState } from './zone-state.js';

/**
 * The profile models: an hour-of-week or hour-of-day profile plus the newest value's departure
 * from it, decaying, the profile and the decay chosen per horizon bucket on past issues.
 */

/**
 * The hour-of-week profile plus the newest value's departure from it, decaying: per horizon
 * bucket, with the profile's window (the last 4 or 10 weeks) and the e-folding time (from an hour
 * to never) that did best on the issues of the previous 35 days at the same time of day. A zone
 * whose values drift slowly keeps its departure (the newest value carried along the profile's
 * shape), one ruled by its daily cycle drops it; one whose mix changed lately (a season, a plant)
 * follows the shorter window.
 */
export const CLIMATOLOGY: ForecastModel = profileModel('climatology@3', [
  { weeks: CLIMATOLOGY_WEEKS },
  { weeks: 4 },
  { weeks: CLIMATOLOGY_WEEKS, reshapeDays: 7 },
]);

/**
 * The recent days' hour-of-day profile (`ZoneState.dailyProfile`: six weeks, each day weighing
 * half as much a week further back) plus the newest value's departure from it, decaying with the
 * e-folding time chosen per bucket as the climatology's is. Blind to the day of the week, it
 * orders the hours of the next day by many recent days instead of ten weeks of one weekday: what
 * placing a job needs.
 */
export const DAILY_PROFILE: ForecastModel = profileModel('daily-profile@1', [{ daily: true }]);

/**
 * The daily profile with the day of the week's departures from it learned over a year
 * (`ZoneState.dailyWeeklyProfile`), plus the newest value's departure decaying as the daily
 * profile's does.
 */
export const DAILY_WEEKLY: ForecastModel = profileModel('daily-weekly@1', [
  { daily: true, weekly: true },
]);

/** The e-folding times a profile model chooses from, in hours; the first without training data. */
const DECAY_HOURS = [8, 1, 3, 24, 72, 240, Number.POSITIVE_INFINITY];

/**
 * A profile a model may follow: the last `weeks` weeks of the hour of the week, reshaped by the
 * recent days, or the recent days' hour of the day.
 */
type ProfileWindow =
  | { readonly weeks: number; readonly reshapeDays?: number; readonly daily?: undefined }
  | { readonly daily: true; readonly weekly?: true };

function windowProfile(
  zone: ZoneState,
  visibleEnd: number,
  window: ProfileWindow,
): Float64Array | null {
  if (window.daily) {
    return window.weekly ? zone.dailyWeeklyProfile(visibleEnd) : zone.dailyProfile(visibleEnd);
  }
  return window.reshapeDays
    ? zone.reshapedProfile(visibleEnd, window.reshapeDays)
    : zone.profile(visibleEnd, window.weeks);
}

/**
 * A profile plus the newest value's departure from it, decaying; per bucket, the profile among
 * `windows` (the first without training data) and the e-folding time that did best.
 */
function profileModel(id: string, windows: readonly ProfileWindow[]): ForecastModel {
  return {
    id,
    inputsOf: HISTORY_ONLY,
    predict(zone, issue, end) {
      const out = nanArray(end - issue.visibleEnd);
      const anchor = anchorOf(zone, issue.visibleEnd);
      if (!anchor) return out;
      const fits = HORIZON_BUCKETS.map((_, bucket) => {
        const { window, decayHours } = fitProfile(zone, issue, bucket, windows);
        const profile = windowProfile(zone, issue.visibleEnd, window) ?? anchor.profile;
        return { profile, decay: zone.decay(decayHours) };
      });
      const step = zone.series.step;
      const latestWeek = zone.slotOfWeek(anchor.latestSlot);
      for (let i = 0; i < out.length; i++) {
        const slot = issue.visibleEnd + i;
        const hours = servedHours(horizonHours(zone.slotTs(slot), step, issue.issueTs));
        const { profile, decay } = fits[bucketIndex(hours)]!;
        out[i] =
          profile[zone.slotOfWeek(slot)]! +
          (anchor.latest - profile[latestWeek]!) * decay.at(slot - anchor.latestSlot);
      }
      return out;
    },
  };
}

function fitProfile(
  zone: ZoneState,
  issue: Issue,
  bucket: number,
  windows: readonly ProfileWindow[],
): { window: ProfileWindow; decayHours: number } {
  const decays = DECAY_HOURS.length;
  const carried = carriedErrors(zone, windows, issue.issueTs, bucket);
  // A day after the chain's last issue, the past issues older than its newest days are those it
  // held, their targets all published then: only the newest days are visited.
  const newestDays =
    carried.issueTs === issue.issueTs - DAY_SECONDS ? daysToPublishAll(zone) : TRAINING_DAYS;
  const wanted = new Map<number, PublishedErrors>();
  forEachTrainingBlock(
    windows,
    zone,
    issue,
    bucket,
    TRAINING_DAYS,
    (anchor, _pastTs, slots) => profileBlock(zone, windows, anchor, slots),
    (block, published, pastTs) => wanted.set(pastTs, { block, published }),
    newestDays,
  );
  if (newestDays < TRAINING_DAYS) {
    const from = issue.issueTs - TRAINING_DAYS * DAY_SECONDS;
    const before = issue.issueTs - newestDays * DAY_SECONDS;
    carried.held.forEach((held, pastTs) => {
      if (pastTs >= from && pastTs < before) wanted.set(pastTs, held);
    });
  }
  carried.moveTo(wanted);
  carried.issueTs = issue.issueTs;
  const errors = carried.errors;
  let best = 0;
  for (let k = 1; k < errors.length; k++) if (errors[k]! < errors[best]!) best = k;
  return { window: windows[Math.floor(best / decays)]!, decayHours: DECAY_HOURS[best % decays]! };
}

/** One past issue's block and how many of its targets are published. */
interface PublishedErrors {
  readonly block: ProfileBlock;
  readonly published: number;
}

/** By zone, per model (its windows), bucket and time of day: the errors carried. */
const carriedByZone = new WeakMap<
  ZoneState,
  Map<readonly ProfileWindow[], Map<number, CarriedErrors>>
>();

function carriedErrors(
  zone: ZoneState,
  windows: readonly ProfileWindow[],
  issueTs: number,
  bucket: number,
): CarriedErrors {
  let byModel = carriedByZone.get(zone);
  if (!byModel) carriedByZone.set(zone, (byModel = new Map()));
  let byChain = byModel.get(windows);
  if (!byChain) byModel.set(windows, (byChain = new Map()));
  const chain =
    (((issueTs % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS) * HORIZON_BUCKETS.length + bucket;
  let carried = byChain.get(chain);
  if (!carried)
    byChain.set(chain, (carried = new CarriedErrors(windows.length * DECAY_HOURS.length)));
  return carried;
}

/** Updates before the carried errors are summed anew from their past issues. */
const RESUM_EVERY = 16;

/**
 * A profile model's squared errors per window and e-folding time, summed over the past issues
 * of one bucket and time of day, carried from one issue to the next (issue 38): updated by the
 * past issues that enter, leave or have more targets published, summed anew every RESUM_EVERY
 * updates. They only choose the least: rounding cannot move a tie (equal errors take the same
 * steps), and anything nearer one is beyond what the choice can tell.
 */
class CarriedErrors {
  /** The issue the errors were last summed for (NaN before any). */
  issueTs = Number.NaN;
  /** The map `moveTo` was given, kept rather than copied (each issue builds a new one). */
  private included: ReadonlyMap<number, PublishedErrors> = new Map();
  /** The finite errors' sums, and per entry how many past issues summed an infinite one. */
  private readonly finite: Float64Array;
  private readonly infinite: Float64Array;
  private readonly sums: Float64Array;
  private updates = 0;

  constructor(private readonly width: number) {
    this.finite = new Float64Array(width);
    this.infinite = new Float64Array(width);
    this.sums = new Float64Array(width);
  }

  /** The past issues summed, newest first. */
  get held(): ReadonlyMap<number, PublishedErrors> {
    return this.included;
  }

  /** Per window and e-folding time, the summed errors (infinite where a window had no profile). */
  get errors(): Float64Array {
    for (let k = 0; k < this.width; k++) {
      this.sums[k] = this.infinite[k]! > 0 ? Number.POSITIVE_INFINITY : this.finite[k]!;
    }
    return this.sums;
  }

  moveTo(wanted: ReadonlyMap<number, PublishedErrors>): void {
    // The maps walked with forEach: a for-of loop allocates an entry per past issue, per issue.
    const included = this.included;
    if (++this.updates >= RESUM_EVERY) {
      this.updates = 0;
      this.finite.fill(0);
      this.infinite.fill(0);
      wanted.forEach((now) => this.apply(now, 1));
    } else {
      included.forEach((held, pastTs) => {
        if (!same(held, wanted.get(pastTs))) this.apply(held, -1);
      });
      wanted.forEach((now, pastTs) => {
        if (!same(included.get(pastTs), now)) this.apply(now, 1);
      });
    }
    this.included = wanted;
  }

  private apply({ block, published }: PublishedErrors, sign: 1 | -1): void {
    const at = published * this.width;
    for (let k = 0; k < this.width; k++) {
      const value = block.summed[at + k]!;
      if (value === Number.POSITIVE_INFINITY) this.infinite[k]! += sign;
      else this.finite[k]! += sign * value;
    }
  }
}

const same = (a: PublishedErrors | undefined, b: PublishedErrors | undefined): boolean =>
  a !== undefined && b !== undefined && a.block === b.block && a.published === b.published;

/**
 * One past issue's squared errors per window and e-folding time, summed over its first `p`
 * targets at `p` times their count (forecast-model.ts `forEachTrainingBlock`): an issue adds a
 * past issue's published targets at once. Infinite for a window without enough history then
 * (never chosen).
 */
interface ProfileBlock extends TrainingBlock {
  readonly summed: Float64Array;
}

function profileBlock(
  zone: ZoneState,
  windows: readonly ProfileWindow[],
  anchor: Anchor,
  slots: readonly number[],
): ProfileBlock {
  const decays = DECAY_HOURS.length;
  const width = windows.length * decays;
  const summed = new Float64Array((slots.length + 1) * width);
  const decay = new Float64Array(decays);
  const tables = DECAY_HOURS.map((hours) => zone.decay(hours));
  const profiles = windows.map((window) => windowProfile(zone, anchor.visibleEnd, window));
  const latestOfWeek = zone.slotOfWeek(anchor.latestSlot);
  slots.forEach((slot, row) => {
    const actual = zone.series.values[slot]!;
    for (let k = 0; k < decays; k++) decay[k] = tables[k]!.at(slot - anchor.latestSlot);
    const ofWeek = zone.slotOfWeek(slot);
    for (let w = 0; w < windows.length; w++) {
      const before = row * width + w * decays;
      const at = before + width;
      const profile = profiles[w];
      if (!profile) {
        summed.fill(Number.POSITIVE_INFINITY, at, at + decays);
        continue;
      }
      const value = profile[ofWeek]!;
      const anomaly = anchor.latest - profile[latestOfWeek]!;
      for (let k = 0; k < decays; k++) {
        const forecast = value + anomaly * decay[k]!;
        summed[at + k] = summed[before + k]! + (forecast - actual) ** 2;
      }
    }
  });
  return { slots: Int32Array.from(slots), summed };
}
