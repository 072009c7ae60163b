import { directedFlows, sumLinks, type DirectedFlow } from '../../core/flows.js';
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
  const aToB: HourlySeries[] = [];
  const bToA: HourlySeries[] = [];
  for (const { eicA, eicB } of border.links) {
    aToB.push(await fetchDirection(client, { outEic: eicA, inEic: eicB }, window, limits, where));
    bToA.push(await fetchDirection(client, { outEic: eicB, inEic: eicA }, window, limits, where));
  }
  return [
    ...directedFlows(border.a, border.b, sumLinks(aToB), window),
    ...directedFlows(border.b, border.a, sumLinks(bToA), window),
  ];
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
