import { describe, expect, it } from 'vitest';
import { readFixture } from '../../../test/fixtures.js';
import { EUROPE_BORDERS, type EntsoeBorder } from '../../core/grid-graph/europe.js';
import { createUpstreamHttp, UpstreamError } from '../http.js';
import { fetchEntsoeBorder } from './flows.js';
import { parseA11 } from './parse-flows.js';
import type { EntsoeClient } from './index.js';

const T = (text: string) => Date.parse(text) / 1000;
const H = 3600;
const TOKEN = 'entsoe-token-flows';

const NO_DATA = readFixture('europe-tso', 'entsoe_acknowledgement_no-matching-data.xml');

/** What the fake platform answers a direction `out -> in` with: a body, or a body and a status. */
type Answer = string | { readonly status: number; readonly body: string };

/**
 * A client whose upstream answers each direction from `answers`, by `out -> in start-end` first,
 * then by `out -> in` (else "no matching data").
 */
function clientAnswering(answers: Readonly<Record<string, Answer>>) {
  const asked: string[] = [];
  const fakeFetch = async (input: string | URL | Request): Promise<Response> => {
    const query = new URL(String(input)).searchParams;
    expect(query.get('documentType')).toBe('A11');
    const direction = `${query.get('out_Domain')} -> ${query.get('in_Domain')}`;
    const request = `${direction} ${query.get('periodStart')}-${query.get('periodEnd')}`;
    asked.push(request);
    const answer = answers[request] ?? answers[direction] ?? NO_DATA;
    const { status, body } = typeof answer === 'string' ? { status: 200, body: answer } : answer;
    return new Response(body, { status, headers: { 'content-type': 'text/xml' } });
  };
  const client: EntsoeClient = {
    http: createUpstreamHttp({
      source: 'europe-tso',
      secrets: [TOKEN],
      fetch: fakeFetch as typeof fetch,
      retries: 0,
    }),
    baseUrl: 'http://entsoe.test/api',
    token: TOKEN,
  };
  return { client, asked };
}

const borderOf = (a: string, b: string): EntsoeBorder => {
  const border = EUROPE_BORDERS.find((found) => found.a === a && found.b === b);
  if (!border) throw new Error(`no border ${a}-${b}`);
  return border;
};

const DK1 = '10YDK-1--------W';
const GB = '10YGB----------A';
const SARD = '10Y1001A1001A74G';
const SACO_AC = '10Y1001A1001A885';
const SACO_DC = '10Y1001A1001A893';

const SACODC_TO_SARD = readFixture(
  'europe-tso',
  'entsoe_A11_IT-SACODC_to_IT-SARD_2023-12-27T1000Z_PT60M.xml',
);
const SARD_TO_SACOAC = readFixture(
  'europe-tso',
  'entsoe_A11_IT-SARD_to_IT-SACOAC_2023-12-27T1000Z_PT60M.xml',
);
/** The recorded SACOI flows into Sardinia as SARCO's, `days` later (or earlier). */
function sarcoIntoSardinia(days: number): string {
  const moved = (text: string) => new Date(Date.parse(text) + days * 24 * H * 1000);
  return SACODC_TO_SARD.replaceAll(SACO_DC, SACO_AC).replace(
    /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}Z/g,
    (text) => `${moved(text).toISOString().slice(0, 16)}Z`,
  );
}
/** The recorded document's flows, by hour. */
const flowsOf = (xml: string, outEic: string, inEic: string) => {
  const parsed = parseA11(xml);
  if (parsed.kind !== 'flows') throw new Error(parsed.kind);
  return parsed.directions.get(outEic)!.get(inEic)!;
};

const DK1_TO_GB = readFixture(
  'europe-tso',
  'entsoe_A11_DK-1_to_GB_2023-12-20T1700Z_PT60M_3-timeseries-with-gaps.xml',
);
const GB_TO_DK1 = readFixture(
  'europe-tso',
  'entsoe_A11_GB_to_DK-1_2023-12-20T1700Z_PT60M_3-timeseries-with-gaps.xml',
);

describe('fetchEntsoeBorder', () => {
  const window = { fromTs: T('2023-12-20T17:00Z'), toTs: T('2023-12-23T17:00Z') };

  it('asks both directions and stores each as published, inside the window', async () => {
    const { client, asked } = clientAnswering({
      [`${DK1} -> ${GB}`]: DK1_TO_GB,
      [`${GB} -> ${DK1}`]: GB_TO_DK1,
    });
    const flows = await fetchEntsoeBorder(client, borderOf('DK-1', 'GB'), {
      fromTs: T('2023-12-20T18:00Z'),
      toTs: T('2023-12-22T14:00Z'),
    });
    expect(asked).toEqual([
      `${DK1} -> ${GB} 202312201800-202312221400`,
      `${GB} -> ${DK1} 202312201800-202312221400`,
    ]);
    const outbound = flows.filter((flow) => flow.from === 'DK-1');
    const inbound = flows.filter((flow) => flow.from === 'GB');
    // 44 published hours less the first one and the last two, outside the window.
    expect(outbound).toHaveLength(41);
    expect(inbound).toHaveLength(41);
    expect(outbound[0]).toEqual({ from: 'DK-1', to: 'GB', ts: T('2023-12-20T18:00Z'), mw: 102 });
    expect(inbound.at(-1)).toEqual({ from: 'GB', to: 'DK-1', ts: T('2023-12-22T13:00Z'), mw: 2 });
    expect(flows.some((flow) => flow.ts === T('2023-12-22T08:00Z'))).toBe(false);
  });

  it('sums the links of a border: Corsica and Sardinia over SACOI and SARCO', async () => {
    // The two halves recorded; the platform's other two are answered "no matching data".
    const { client, asked } = clientAnswering({
      [`${SACO_DC} -> ${SARD}`]: SACODC_TO_SARD,
      [`${SARD} -> ${SACO_AC}`]: SARD_TO_SACOAC,
    });
    const at10 = T('2023-12-27T10:00Z');
    const flows = await fetchEntsoeBorder(client, borderOf('FR-COR', 'IT-SARD'), {
      fromTs: at10,
      toTs: at10 + 72 * H,
    });
    // Each link silent at the window's start is looked for in the year before: it published
    // nothing, so it does not exist yet.
    expect(asked).toEqual([
      `${SACO_AC} -> ${SARD} 202312271000-202312301000`,
      `${SARD} -> ${SACO_AC} 202312271000-202312301000`,
      `${SACO_DC} -> ${SARD} 202312271000-202312301000`,
      `${SARD} -> ${SACO_DC} 202312271000-202312301000`,
      `${SACO_AC} -> ${SARD} 202212271000-202312271000`,
      `${SARD} -> ${SACO_DC} 202212271000-202312271000`,
    ]);
    const at = (from: string, ts: number) =>
      flows.find((flow) => flow.from === from && flow.ts === ts)?.mw;
    expect(at('FR-COR', at10)).toBe(47);
    expect(at('IT-SARD', at10)).toBe(10);
    // Electricity Maps' aggregated net FR-COR -> IT-SAR at 10:00Z.
    expect(at('FR-COR', at10)! - at('IT-SARD', at10)!).toBe(37);
    expect(flows).toHaveLength(2 * 47);
  });

  it('knows no flow of a direction where a link that published before is silent (BE-DE, FR-COR-IT-SARD)', async () => {
    const at10 = T('2023-12-27T10:00Z');
    // SARCO published into Sardinia a month before the window, and nothing in it.
    const { client } = clientAnswering({
      [`${SACO_DC} -> ${SARD}`]: SACODC_TO_SARD,
      [`${SACO_AC} -> ${SARD} 202212271000-202312271000`]: sarcoIntoSardinia(-30),
      [`${SARD} -> ${SACO_AC}`]: SARD_TO_SACOAC,
    });
    const flows = await fetchEntsoeBorder(client, borderOf('FR-COR', 'IT-SARD'), {
      fromTs: at10,
      toTs: at10 + 72 * H,
    });
    // Not SACOI's flow alone, which would show as a drop: no flow into Sardinia at all.
    expect(flows.filter((flow) => flow.from === 'FR-COR')).toEqual([]);
    // The other direction: SARCO alone, SACOI never having published out of Sardinia.
    const out = flows.filter((flow) => flow.from === 'IT-SARD');
    expect(new Map(out.map((flow) => [flow.ts, flow.mw]))).toEqual(
      flowsOf(SARD_TO_SACOAC, SARD, SACO_AC),
    );
  });

  it('counts a link from its first published flow on, and knows no hour one link lacks', async () => {
    const at10 = T('2023-12-27T10:00Z');
    // SARCO's first flow ever a day into the window; both links then run for 47 hours each.
    const { client } = clientAnswering({
      [`${SACO_DC} -> ${SARD}`]: SACODC_TO_SARD,
      [`${SACO_AC} -> ${SARD}`]: sarcoIntoSardinia(1),
      [`${SACO_AC} -> ${SARD} 202212271000-202312271000`]: NO_DATA,
    });
    const flows = await fetchEntsoeBorder(client, borderOf('FR-COR', 'IT-SARD'), {
      fromTs: at10,
      toTs: at10 + 72 * H,
    });
    const sacoi = flowsOf(SACODC_TO_SARD, SACO_DC, SARD);
    const sarco = flowsOf(sarcoIntoSardinia(1), SACO_AC, SARD);
    const into = new Map(
      flows.filter((flow) => flow.from === 'FR-COR').map((flow) => [flow.ts, flow.mw]),
    );
    // SACOI alone for the first day, then both; SACOI's last hour is 09:00Z on the 29th, so
    // from 10:00Z on SARCO's flows are no border flow.
    const expected = new Map<number, number>();
    for (let ts = at10; ts < at10 + 47 * H; ts += H) {
      expected.set(ts, sacoi.get(ts)! + (ts >= at10 + 24 * H ? sarco.get(ts)! : 0));
    }
    expect(into).toEqual(expected);
    expect(sarco.has(at10 + 47 * H)).toBe(true);
  });

  it('reads "no matching data" as no flow, also when it comes with HTTP 400', async () => {
    const { client } = clientAnswering({
      [`${DK1} -> ${GB}`]: { status: 400, body: NO_DATA },
    });
    expect(await fetchEntsoeBorder(client, borderOf('DK-1', 'GB'), window)).toEqual([]);
  });

  it.each([
    ['an HTML page', '<html><body>maintenance</body></html>', /unusable A11 payload/],
    [
      'a generation document',
      '<GL_MarketDocument><type>A75</type></GL_MarketDocument>',
      /<GL_MarketDocument>/,
    ],
    [
      'the flow of another pair of areas',
      GB_TO_DK1,
      /asked .* answered 10YGB----------A -> 10YDK-1--------W/,
    ],
    [
      'an Acknowledgement refusing the request',
      NO_DATA.replace('No matching data found', 'Unauthorized'),
      /flows DK-1-GB: request refused: Unauthorized/,
    ],
  ])('rejects %s as invalid, never a value', async (_name, body, message) => {
    const { client } = clientAnswering({ [`${DK1} -> ${GB}`]: body });
    const error = await fetchEntsoeBorder(client, borderOf('DK-1', 'GB'), window).catch(
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).kind).toBe('invalid');
    expect((error as UpstreamError).message).toMatch(message);
  });
});
