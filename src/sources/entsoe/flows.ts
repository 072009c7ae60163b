import { directedFlows, sumLinks, type DirectedFlow, type LinkSeries } from '../../core/flows.js';
import type { HourlySeries } from '../../core/generation.js';
import type { EntsoeBorder } from '../../core/grid-graph/europe.js';
import { splitWindow, type TimeWindow } from '../../core/time.js';
import { payloadFailure } from '../adapter.js';
import { UpstreamError, type RequestLimits } from '../http.js';
import { fetchDocument, type EntsoeClient } from './index.js';
import { parseA11 } from './parse-flows.js';
import { ENTSOE_MAX_WINDOW_SECONDS, entsoeA11Url } from './request.js';

/**
 * The flows of one border of the European graph over `window` (whole hours), as stored flows
 * (src/core/flows.ts, graph `europe`): both directions of each of its links, one A11 request
 * per direction per at most a year (docs/upstreams.md §9.1), each direction summed over the
 * links and kept inside the window. "No matching data" is no flow, not a failure. A refusal, an
 * unusable document or one about another pair of areas rejects with an UpstreamError, and
 * nothing of the border is used.
 */
export async function fetchEntsoeBorder(
  client: EntsoeClient,
  border: EntsoeBorder,
  window: TimeWindow,
  limits: RequestLimits = {},
): Promise<DirectedFlow[]> {
  const where = `europe-tso: flows ${border.a}-${border.b}`;
  const aToB: Direction[] = [];
  const bToA: Direction[] = [];
  for (const { eicA, eicB } of border.links) {
    const there = { outEic: eicA, inEic: eicB };
    const back = { outEic: eicB, inEic: eicA };
    aToB.push({ ...there, series: await fetchDirection(client, there, window, limits, where) });
    bToA.push({ ...back, series: await fetchDirection(client, back, window, limits, where) });
  }
  const sum = async (directions: readonly Direction[]): Promise<HourlySeries> => {
    // No link with a flow in the window: no flow, whichever links exist.
    if (directions.every(({ series }) => series.size === 0)) return new Map();
    const links: LinkSeries[] = [];
    for (const direction of directions) {
      links.push({
        series: direction.series,
        since:
          directions.length > 1
            ? await linkSince(client, direction, window, limits, where)
            : window.fromTs,
      });
    }
    return sumLinks(links);
  };
  return [
    ...directedFlows(border.a, border.b, await sum(aToB), window),
    ...directedFlows(border.b, border.a, await sum(bToA), window),
  ];
}

/** One link of a border in one direction, and its flows over the window asked. */
interface Direction {
  readonly outEic: string;
  readonly inEic: string;
  readonly series: HourlySeries;
}

/**
 * How far back a link of a border of several links is looked for when it published nothing at
 * the start of the window: one request.
 */
const LINK_LOOKBACK_SECONDS = ENTSOE_MAX_WINDOW_SECONDS;

/**
 * Since when a link of a border of several links exists (src/core/flows.ts `sumLinks`): from the
 * window's start when it has a flow there, or any in the year before it (one request more, only
 * for a link silent at the window's start while another has flows in the window); else from its
 * first flow in the window, or not yet.
 */
async function linkSince(
  client: EntsoeClient,
  direction: Direction,
  window: TimeWindow,
  limits: RequestLimits,
  where: string,
): Promise<number | undefined> {
  const first = direction.series.size > 0 ? Math.min(...direction.series.keys()) : undefined;
  if (first === window.fromTs) return first;
  const before = { fromTs: window.fromTs - LINK_LOOKBACK_SECONDS, toTs: window.fromTs };
  const earlier = await fetchDirection(client, direction, before, limits, where);
  return earlier.size > 0 ? window.fromTs : first;
}

async function fetchDirection(
  client: EntsoeClient,
  direction: { readonly outEic: string; readonly inEic: string },
  window: TimeWindow,
  limits: RequestLimits,
  where: string,
): Promise<HourlySeries> {
  const hourly = new Map<number, number>();
  for (const chunk of splitWindow(window, ENTSOE_MAX_WINDOW_SECONDS)) {
    const url = entsoeA11Url(client.baseUrl, client.token, direction, chunk);
    const parsed = await fetchDocument(client, url, limits, parseA11);
    switch (parsed.kind) {
      case 'no-data':
        continue;
      case 'upstream-error':
      case 'invalid-payload':
        throw payloadFailure(parsed, where, { payload: 'A11 payload' });
      case 'flows': {
        if (parsed.dropped.length > 0) {
          client.logger?.warn(
            { ...direction, dropped: parsed.dropped.length, first: parsed.dropped.slice(0, 3) },
            'europe-tso: records dropped from an A11 document',
          );
        }
        const others = [...parsed.directions].flatMap(([outEic, byIn]) =>
          [...byIn.keys()]
            .filter((inEic) => outEic !== direction.outEic || inEic !== direction.inEic)
            .map((inEic) => `${outEic} -> ${inEic}`),
        );
        if (others.length > 0) {
          throw new UpstreamError(
            'invalid',
            `${where}: asked ${direction.outEic} -> ${direction.inEic}, answered ${others.join(', ')}`,
          );
        }
        const series = parsed.directions.get(direction.outEic)?.get(direction.inEic);
        for (const [ts, mw] of series ?? []) hourly.set(ts, mw);
      }
    }
  }
  return hourly;
}
