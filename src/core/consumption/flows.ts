/**
 * Borders and their net flow per hour (extensions §15, "Net flow" and "Missing flows";
 * docs/upstreams/flows.md §1.3 and §4.3): how the two directions (ENTSO-E A11) or the two reports
 * (EIA interchange-data) of a border make one net flow, and what an hour without one gets.
 */
import type { HourlySeries } from '../generation.js';
import { HOUR } from '../time.js';
import type { NetFlow } from './trace-hour.js';

/** How many hours back an unknown net flow takes the newest known one from. */
export const CARRY_HOURS = 6;

/** A border between two nodes, from the first hour any flow on it was published. */
export interface Border {
  readonly from: string;
  readonly to: string;
  /** Hour start -> net MWh from `from` to `to` (negative: the other way), where known. */
  readonly net: HourlySeries;
  /** The first hour any flow on it was published: before it, the border is not in the graph. */
  readonly since: number;
}

/**
 * An ENTSO-E border from the hourly means of its two directions (A11 with out_Domain `from` and
 * in_Domain `to`, and the reverse; `toHourlySeries` makes an hour only of complete sub-hours):
 * net = from->to minus to->from, known only in an hour where both directions have a value.
 * Undefined when neither direction ever had one.
 */
export function entsoeBorder(
  from: string,
  to: string,
  fromTo: HourlySeries,
  toFrom: HourlySeries,
): Border | undefined {
  const net = new Map<number, number>();
  for (const [hour, mwh] of fromTo) {
    const reverse = toFrom.get(hour);
    if (reverse !== undefined) net.set(hour, mwh - reverse);
  }
  return borderOf(from, to, sortedByHour(net), fromTo, toFrom);
}

/**
 * An EIA border from the two balancing authorities' reports of it, keyed by hour start (EIA's
 * `period` is the hour's end): `fromReport` is `from`'s row (fromba `from`, toba `to`), `toReport`
 * is `to`'s row (fromba `to`, toba `from`); a value above 0 means the reporter exports. Net = the
 * mean of `fromReport` and the negated `toReport` when both exist, else the one that exists.
 * Undefined when neither ever had a value.
 */
export function eiaBorder(
  from: string,
  to: string,
  fromReport: HourlySeries,
  toReport: HourlySeries,
): Border | undefined {
  const net = new Map<number, number>();
  for (const [hour, mwh] of fromReport) {
    const reverse = toReport.get(hour);
    net.set(hour, reverse === undefined ? mwh : (mwh - reverse) / 2);
  }
  for (const [hour, mwh] of toReport) if (!fromReport.has(hour)) net.set(hour, -mwh);
  return borderOf(from, to, sortedByHour(net), fromReport, toReport);
}

function borderOf(
  from: string,
  to: string,
  net: HourlySeries,
  ...published: readonly HourlySeries[]
): Border | undefined {
  let since = Infinity;
  for (const series of published) for (const hour of series.keys()) since = Math.min(since, hour);
  return since === Infinity ? undefined : { from, to, net, since };
}

function sortedByHour(series: Map<number, number>): HourlySeries {
  // Flows are read in the order of their hours: most series are sorted already.
  let previous = -Infinity;
  for (const hour of series.keys()) {
    if (hour < previous) return new Map([...series].sort(([a], [b]) => a - b));
    previous = hour;
  }
  return series;
}

/**
 * The border's flow in `hour`: its net flow where known; else the newest known net flow of
 * h-1 .. h-6, estimated; else 0, estimated. Undefined before the border's first published hour.
 */
export function flowAt(border: Border, hour: number): NetFlow | undefined {
  if (hour < border.since) return undefined;
  const { from, to } = border;
  const known = border.net.get(hour);
  if (known !== undefined) return { from, to, mwh: known, estimated: false };
  for (let back = 1; back <= CARRY_HOURS; back++) {
    const carried = border.net.get(hour - back * HOUR);
    if (carried !== undefined) return { from, to, mwh: carried, estimated: true };
  }
  return { from, to, mwh: 0, estimated: true };
}
