/**
 * Flows between the nodes of the two flow graphs (extensions §15), as the feeds hand them to the
 * store and the store to the consumption solver. Formats and quirks of the upstreams:
 * docs/upstreams.md §9.
 */
import type { HourlySeries } from './generation.js';
import { isInWindow, type TimeWindow } from './time.js';

/** Europe (ENTSO-E A11) and the US (EIA interchange-data): two graphs, never joined. */
export type FlowGraphId = 'europe' | 'us';

/**
 * One direction of one border in one hour, as its upstream reports it. Node codes are those of
 * src/core/grid-graph/; `ts` is the hour's START (epoch seconds); `mw` the mean MW over the hour
 * (= MWh in the hour).
 *
 * - `europe`: the physical flow from `from` into `to` (A11 with out = `from`, in = `to`), >= 0 as
 *   published, summed over the border's links. The border's net flow is `from->to` minus
 *   `to->from`, known when both directions are.
 * - `us`: the net interchange of `from` with `to` as `from` reports it (EIA `fromba` = `from`),
 *   positive when `from` exports. Both balancing authorities report a pair and each report is
 *   kept: `A->B` is A's, `B->A` is B's; the net flow A to B is the mean of A's value and the
 *   negated B's where both exist, else the one that exists.
 */
export interface DirectedFlow {
  readonly from: string;
  readonly to: string;
  readonly ts: number;
  readonly mw: number;
}

/** A direction of a border the store holds flows of, from its first stored hour on. */
export interface FlowBorder {
  readonly from: string;
  readonly to: string;
  readonly firstTs: number;
}

/** One link's flows in one direction, and since when the link exists. */
export interface LinkSeries {
  readonly series: HourlySeries;
  /**
   * The first hour the link exists: its first published flow (earlier than the series when it
   * published before it). Undefined while it has published none: it does not exist yet.
   */
  readonly since: number | undefined;
}

/**
 * The hourly flow of a border made of several links (the Corsica links, BE's borders with DE and
 * LU), summed per hour, strictly: an hour is known only when every link that exists in it (from
 * its first published flow on, like a border) has a value in it, so that a gap in one link never
 * shows as a drop in the border's flow. An hour where no link exists yet has no flow.
 */
export function sumLinks(links: readonly LinkSeries[]): HourlySeries {
  const hours = [...new Set(links.flatMap(({ series }) => [...series.keys()]))].sort(
    (a, b) => a - b,
  );
  const summed = new Map<number, number>();
  for (const ts of hours) {
    const existing = links.filter(({ since }) => since !== undefined && since <= ts);
    const values = existing.map(({ series }) => series.get(ts));
    if (values.every((value): value is number => value !== undefined)) {
      summed.set(
        ts,
        values.reduce((total, value) => total + value, 0),
      );
    }
  }
  return summed;
}

/** One direction's hourly series as flows, keeping the hours inside `window`. */
export function directedFlows(
  from: string,
  to: string,
  series: HourlySeries,
  window: TimeWindow,
): DirectedFlow[] {
  const flows: DirectedFlow[] = [];
  for (const [ts, mw] of series) {
    if (isInWindow(ts, window)) flows.push({ from, to, ts, mw });
  }
  return flows;
}
