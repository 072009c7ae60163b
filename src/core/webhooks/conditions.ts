import { createHash } from 'node:crypto';
import type { Level } from '../level.js';
import { LEVELS } from '../level.js';
import { formatTs } from '../time.js';

/**
 * Webhook conditions and the events they raise (extensions §13), as pure functions of what a
 * zone shows now and what the subscription saw before. Values are tenths of gCO2eq/kWh as served.
 */

export type Condition =
  | { readonly type: 'published' }
  | { readonly type: 'below'; readonly gco2eq_kwh: number }
  | { readonly type: 'above'; readonly gco2eq_kwh: number }
  | { readonly type: 'level'; readonly levels: readonly Level[] }
  | {
      readonly type: 'window';
      readonly within_hours: number;
      readonly duration_hours: number;
      readonly max_level?: Level;
      readonly max_gco2eq_kwh?: number;
    };

export type EventType = 'published' | 'crossed' | 'window';

/** An event body, exactly as delivered. */
export interface WebhookEvent {
  readonly id: string;
  readonly type: EventType;
  readonly subscription: string;
  readonly zone: string;
  readonly basis: string;
  readonly ts: string;
  readonly gco2eq_kwh: number;
  readonly level?: Level | null;
  readonly window?: { readonly start: string; readonly end: string; readonly gco2eq_kwh: number };
}

/** One published value of a zone, with its level (null without enough reference). */
export interface Observed {
  readonly ts: number;
  readonly tenths: number;
  readonly level: Level | null;
}

/** What one zone shows after a data change. */
export interface ZoneView {
  readonly zone: string;
  /** The newest published reading; undefined for a zone without one. */
  readonly newest: Observed | undefined;
  /** Readings newly published or revised by this change (for `published`). */
  readonly changed: readonly Observed[];
  /** The served forecast's intervals after the newest reading, ascending. */
  readonly forecast: readonly Observed[];
  /** The zone's resolution. */
  readonly stepSeconds: number;
}

/**
 * What a subscription remembers per zone: for a crossing condition 1 when it held at the newest
 * reading seen (else 0); for a window condition the end of the last window notified.
 */
export type ZoneMemory = Readonly<Record<string, number>>;

export interface SubscriptionView {
  readonly id: string;
  readonly basis: string;
  readonly condition: Condition;
}

/**
 * A stable event id: the same subscription, type, zone and instant (and value, for a revision)
 * give the same id on every instance and after every restart, so the queue keeps one.
 */
export function eventId(subscription: string, type: EventType, zone: string, key: string): string {
  const digest = createHash('sha256').update(`${subscription}|${type}|${zone}|${key}`).digest();
  return `evt_${digest.toString('base64url').slice(0, 27)}`;
}

/** Whether a reading meets a crossing condition (below / above / level). */
function holds(condition: Condition, observed: Observed): boolean {
  switch (condition.type) {
    case 'below':
      return observed.tenths < Math.round(condition.gco2eq_kwh * 10);
    case 'above':
      return observed.tenths > Math.round(condition.gco2eq_kwh * 10);
    case 'level':
      return observed.level !== null && condition.levels.includes(observed.level);
    default:
      return false;
  }
}

/** Whether a forecast interval is low enough for a window condition. */
function lowEnough(condition: Extract<Condition, { type: 'window' }>, observed: Observed): boolean {
  if (condition.max_gco2eq_kwh !== undefined) {
    return observed.tenths <= Math.round(condition.max_gco2eq_kwh * 10);
  }
  if (condition.max_level === undefined || observed.level === null) return false;
  return LEVELS.indexOf(observed.level) <= LEVELS.indexOf(condition.max_level);
}

/**
 * The first window of the forecast inside `[from, from + within_hours)` made of consecutive
 * intervals that are each low enough, at least `duration_hours` long: its start, its end (the
 * whole run, up to the horizon) and its mean in tenths; null when there is none.
 */
export function findWindow(
  condition: Extract<Condition, { type: 'window' }>,
  forecast: readonly Observed[],
  stepSeconds: number,
  from: number,
): { start: number; end: number; meanTenths: number } | null {
  const horizon = from + condition.within_hours * 3600;
  const needed = condition.duration_hours * 3600;
  let runStart = -1;
  let runSum = 0;
  let runCount = 0;
  let previousTs = Number.NaN;
  const finish = () =>
    runStart >= 0 && runCount * stepSeconds >= needed
      ? { start: runStart, end: runStart + runCount * stepSeconds, meanTenths: runSum / runCount }
      : null;
  for (const interval of forecast) {
    if (interval.ts < from) continue;
    if (interval.ts + stepSeconds > horizon) break;
    const contiguous = interval.ts === previousTs + stepSeconds;
    previousTs = interval.ts;
    if (!lowEnough(condition, interval) || !contiguous) {
      const found = finish();
      if (found) return found;
      runStart = -1;
      runSum = 0;
      runCount = 0;
      if (!lowEnough(condition, interval)) continue;
    }
    if (runStart < 0) runStart = interval.ts;
    runSum += interval.tenths;
    runCount++;
  }
  return finish();
}

/**
 * The events one zone's change raises for a subscription, and the crossing state after it.
 * `published`: one per new or revised reading. `crossed`: when the newest reading meets the
 * condition and the previous one seen did not (a zone never seen counts as not meeting it, so a
 * condition already met at creation fires at once). `window`: the first qualifying forecast
 * window, when it starts at or after the end of the last one notified (so a window that only
 * shortens as its first hours pass is not announced again).
 */
export function evaluate(
  subscription: SubscriptionView,
  view: ZoneView,
  state: ZoneMemory,
): { events: WebhookEvent[]; state: ZoneMemory } {
  const { condition } = subscription;
  const base = (type: EventType, key: string, observed: Observed) => ({
    id: eventId(subscription.id, type, view.zone, key),
    type,
    subscription: subscription.id,
    zone: view.zone,
    basis: subscription.basis,
    ts: formatTs(observed.ts),
    gco2eq_kwh: observed.tenths / 10,
    level: observed.level,
  });
  if (condition.type === 'published') {
    return {
      events: view.changed.map((observed) =>
        base('published', `${observed.ts}:${observed.tenths}`, observed),
      ),
      state,
    };
  }
  const newest = view.newest;
  if (!newest) return { events: [], state };
  if (condition.type === 'window') {
    const found = findWindow(
      condition,
      view.forecast,
      view.stepSeconds,
      newest.ts + view.stepSeconds,
    );
    if (!found || found.start < (state[view.zone] ?? -Infinity)) return { events: [], state };
    return {
      events: [
        {
          ...base('window', String(found.start), newest),
          window: {
            start: formatTs(found.start),
            end: formatTs(found.end),
            gco2eq_kwh: Math.round(found.meanTenths) / 10,
          },
        },
      ],
      state: { ...state, [view.zone]: found.end },
    };
  }
  const now = holds(condition, newest);
  const before = state[view.zone] === 1;
  const next = now === before ? state : { ...state, [view.zone]: now ? 1 : 0 };
  return {
    events: now && !before ? [base('crossed', String(newest.ts), newest)] : [],
    state: next,
  };
}
