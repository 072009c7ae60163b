import type { Basis } from '../factors.js';
import {
  countSlotsBelow,
  DAY_SECONDS,
  HORIZON_BUCKETS,
  HORIZON_HOURS,
  HOUR_SECONDS,
} from './series.js';
import type { ZoneState } from './zone-state.js';

/** The basis a forecast is on: a basis, or GB's own operator figure (GB asked without a basis). */
export type ForecastBasis = Basis | 'operator';

/**
 * What every model is and shares: the model's contract, its anchor at an issue (the profile and
 * the newest value), the daily base, and the past issues a model is fitted on.
 */

/** One issue: the time it is made and the first slot it cannot see (its actuals end there). */
export interface Issue {
  readonly issueTs: number;
  /** Slots before this one may hold published values; this one and later are forecast. */
  readonly visibleEnd: number;
}

export interface ForecastModel {
  readonly id: string;
  /**
   * Values for slots `issue.visibleEnd` up to (excluding) `end`; NaN where the model has nothing
   * to say (the caller falls back to another model there).
   */
  predict(zone: ZoneState, issue: Issue, end: number): Float64Array;
  /** What the model reads of the zone's inputs (the skill table records it). */
  inputsOf(zone: ZoneState): readonly string[];
  /** Whether the model has anything to say of the zone (default: yes); else it is no candidate. */
  appliesTo?(zone: ZoneState): boolean;
}

export const HISTORY_ONLY = (): readonly string[] => ['history'];

/** Days of earlier issues a regression is fitted on. */
export const TRAINING_DAYS = 35;

/** What every model starts from at one issue: the profile, the newest value and its anomaly. */
export interface Anchor {
  /** The first slot the issue could not see. */
  readonly visibleEnd: number;
  readonly profile: Float64Array;
  readonly latestSlot: number;
  readonly latest: number;
  readonly anomaly: number;
  /** The hour-of-week mean generation, where the inputs carry the generation. */
  readonly generationProfile: Float64Array | null;
  /** The recent days' hour-of-day profile (`ZoneState.dailyProfile`), else the profile. */
  readonly dailyProfile: Float64Array;
}

/** By zone, the anchors made so far by visible end: the training issues ask for each many times. */
const anchors = new WeakMap<ZoneState, Map<number, Anchor | null>>();

export function anchorOf(zone: ZoneState, visibleEnd: number): Anchor | null {
  let byEnd = anchors.get(zone);
  if (!byEnd) anchors.set(zone, (byEnd = new Map()));
  let anchor = byEnd.get(visibleEnd);
  if (anchor === undefined) byEnd.set(visibleEnd, (anchor = makeAnchor(zone, visibleEnd)));
  return anchor;
}

function makeAnchor(zone: ZoneState, visibleEnd: number): Anchor | null {
  const profile = zone.profile(visibleEnd);
  const latestSlot = zone.latestSlot(visibleEnd);
  if (!profile || latestSlot < 0) return null;
  const latest = zone.series.values[latestSlot]!;
  return {
    visibleEnd,
    profile,
    latestSlot,
    latest,
    anomaly: latest - profile[zone.slotOfWeek(latestSlot)]!,
    generationProfile: zone.generationProfile(visibleEnd),
    dailyProfile: zone.dailyProfile(visibleEnd) ?? profile,
  };
}

export const nanArray = (length: number): Float64Array =>
  new Float64Array(Math.max(0, length)).fill(Number.NaN);

/** The daily profile plus the newest value's departure from it, decaying over a day. */
export function dailyBase(zone: ZoneState, anchor: Anchor, slot: number): number {
  const latestOfWeek = zone.slotOfWeek(anchor.latestSlot);
  return (
    anchor.dailyProfile[zone.slotOfWeek(slot)]! +
    (anchor.latest - anchor.dailyProfile[latestOfWeek]!) *
      zone.decay(DAY_HOURS).at(slot - anchor.latestSlot)
  );
}

const DAY_HOURS = 24;

/** One past issue a model is fitted on, and the slots of one bucket it forecast. */
interface TrainingIssue extends Issue {
  /** The bucket's slots: `[firstSlot, bucketEnd)`, those before `lastSlot` published by now. */
  readonly firstSlot: number;
  readonly bucketEnd: number;
  readonly lastSlot: number;
}

/**
 * The daily issues of the previous `days` days (at the issue's time of day), in order, and the
 * slots of `bucket` each forecast. Nowcasts count with the first bucket. `visit` is given one
 * object, rewritten for each past issue (the backtest visits millions).
 */
function forEachTrainingIssue(
  zone: ZoneState,
  issue: Issue,
  bucket: number,
  days: number,
  visit: (past: TrainingIssue) => void,
): void {
  const { first, last } = HORIZON_BUCKETS[bucket]!;
  const { startTs, step } = zone.series;
  const past = { issueTs: 0, visibleEnd: 0, firstSlot: 0, bucketEnd: 0, lastSlot: 0 };
  for (let day = 1; day <= days; day++) {
    const pastTs = issue.issueTs - day * DAY_SECONDS;
    const pastEnd = Math.min(zone.visibleEndAt(pastTs), issue.visibleEnd);
    // horizonHours(ts) = ceil((ts + step - issueTs) / 1 h) lies in [first, last]: the first slot
    // past `hours` hours is floor((issueTs + hours h - step - startTs) / step) + 1.
    const base = pastTs - step - startTs;
    const bucketFirst = Math.floor((base + (first - 1) * HOUR_SECONDS) / step) + 1;
    const bucketEnd = Math.floor((base + last * HOUR_SECONDS) / step) + 1;
    past.issueTs = pastTs;
    past.visibleEnd = pastEnd;
    past.firstSlot = bucket === 0 ? pastEnd : Math.max(bucketFirst, pastEnd);
    past.bucketEnd = bucketEnd;
    past.lastSlot = Math.min(bucketEnd, issue.visibleEnd);
    visit(past);
  }
}

/**
 * Days after which every target of a past issue is published (72 hours, the publication lag and
 * the interval): a walk-forward's fits a few days apart share the older past issues whole.
 */
export function daysToPublishAll(zone: ZoneState): number {
  const hoursSeconds = HORIZON_HOURS * HOUR_SECONDS;
  return Math.ceil(
    (hoursSeconds + zone.inputs.publicationLagSeconds + zone.series.step) / DAY_SECONDS,
  );
}

/** What a model keeps of one past issue's targets: their slots, ascending, and its own rows. */
export interface TrainingBlock {
  readonly slots: Int32Array;
}

/**
 * By zone, then by model (its key object) and past issue time (seconds after the zone's first
 * slot: a small integer, which a Map hashes fastest), then by what the past issue saw and
 * bucket: the blocks built so far.
 */
const trainingBlockCache = new WeakMap<ZoneState, Map<object, TrainingBlocks>>();

interface TrainingBlocks {
  readonly byIssue: Map<number, Map<number, TrainingBlock>>;
  /** Blocks of past issues before this time have been dropped. */
  droppedBefore: number;
}

/**
 * The targets of `bucket` of the daily issues of the previous `days` days (at the issue's time of
 * day), with what each past issue knew (its anchor and time), a past issue at a time: calls
 * `visit` with each past issue's block and how many of its targets are published by the present
 * issue. A block holds every target of the
 * bucket (what a later issue sees of them too), built by `build` from the past issue's anchor the
 * first time any issue of the zone asks: a past issue's targets are the same for every issue that
 * trains on it, only fewer are published to the nearest ones. `model` keys the blocks (one object
 * per model, the same for every call). `newestDays`: only the past issues of the newest so many
 * days are visited (the blocks of the others are kept all the same).
 */
export function forEachTrainingBlock<B extends TrainingBlock>(
  model: object,
  zone: ZoneState,
  issue: Issue,
  bucket: number,
  days: number,
  build: (anchor: Anchor, pastTs: number, slots: readonly number[]) => B,
  visit: (block: B, published: number, pastTs: number) => void,
  newestDays = days,
): void {
  let byZone = trainingBlockCache.get(zone);
  if (!byZone) trainingBlockCache.set(zone, (byZone = new Map()));
  let cached = byZone.get(model);
  if (!cached) {
    cached = { byIssue: new Map(), droppedBefore: Number.NEGATIVE_INFINITY };
    byZone.set(model, cached);
  }
  const blocks = cached.byIssue;
  // Past issues older than the oldest this one trains on are no later issue's either (the
  // backtest walks forward): dropped a day's worth at a time, or a long backtest would hold
  // every past issue's rows.
  const oldest = issue.issueTs - days * DAY_SECONDS;
  if (oldest - cached.droppedBefore >= DAY_SECONDS) {
    const oldestKey = oldest - zone.series.startTs;
    for (const pastKey of blocks.keys()) if (pastKey < oldestKey) blocks.delete(pastKey);
    cached.droppedBefore = oldest;
  }
  const values = zone.series.values;
  const buckets = HORIZON_BUCKETS.length;
  forEachTrainingIssue(zone, issue, bucket, newestDays, (past) => {
    const pastKey = past.issueTs - zone.series.startTs;
    let ofIssue = blocks.get(pastKey);
    if (!ofIssue) blocks.set(pastKey, (ofIssue = new Map()));
    const key = past.visibleEnd * buckets + bucket;
    let block = ofIssue.get(key) as B | undefined;
    if (!block) {
      const anchor = anchorOf(zone, past.visibleEnd);
      if (!anchor) return;
      const slots: number[] = [];
      const end = Math.min(past.bucketEnd, values.length);
      for (let slot = past.firstSlot; slot < end; slot++) {
        if (!Number.isNaN(values[slot]!)) slots.push(slot);
      }
      block = build(anchor, past.issueTs, slots);
      ofIssue.set(key, block);
    }
    // Every slot of a block is before its bucket's end: published whole without a bisection.
    const published =
      past.lastSlot >= past.bucketEnd
        ? block.slots.length
        : countSlotsBelow(block.slots, past.lastSlot);
    visit(block, published, past.issueTs);
  });
}

/** The last slot (exclusive) a forecast issued at `issueTs` reaches, `hours` ahead. */
export function horizonEnd(zone: ZoneState, issueTs: number, hours = HORIZON_HOURS): number {
  const { startTs, step } = zone.series;
  return Math.ceil((issueTs + hours * HOUR_SECONDS - startTs) / step);
}
