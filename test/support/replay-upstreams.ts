import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DirectedFlow, FlowGraphId } from '../../src/core/flows.js';
import { parseA11 } from '../../src/sources/entsoe/parse-flows.js';
import { readFixture } from '../fixtures.js';

/**
 * A local stand-in for the three upstreams, at their real paths (ENTSO-E `/api`, EIA `/v2/...`,
 * NESO `/intensity/{from}/{to}` and `/generation/{from}/{to}`), that replays the recorded payloads of test/fixtures/upstreams,
 * the cross-border flows included (ENTSO-E A11, EIA interchange-data).
 * It checks each request the way the upstream would (parameters, formats, credentials) and answers
 * 400/401/403 like it, so a test that passes here sends real-shaped requests.
 *
 * Recorded payloads are old; each is moved in time by whole hours so that its data end at
 * `anchorTs`, which lets the real clock of a CLI run meet them.
 */

const H = 3600;

export interface ReplayRequest {
  readonly source: 'europe-tso' | 'us-agency' | 'uk-operator';
  readonly url: URL;
}

/**
 * The flows the replayed A11 and interchange-data payloads hold, as a graph stores them, read by
 * the parser and placed on the graph's nodes here: DK-1/GB both ways; Corsica to Sardinia over
 * SACOI (DC) and back over SARCO (AC), the other link of each direction having no data; FPC's
 * reports with FPL and NSB (hour-ending labels to hour starts).
 */
export function replayedFlows(upstreams: ReplayUpstreams, graph: FlowGraphId): DirectedFlow[] {
  const direction = (outEic: string, inEic: string, from: string, to: string) => {
    const parsed = parseA11(upstreams.payloads.entsoeFlows.get(`${outEic} -> ${inEic}`) ?? '');
    if (parsed.kind !== 'flows') throw new Error(`${outEic} -> ${inEic}: ${parsed.kind}`);
    return [...(parsed.directions.get(outEic)?.get(inEic) ?? [])].map(([ts, mw]): DirectedFlow => ({
      from,
      to,
      ts,
      mw,
    }));
  };
  const [dk1, gb, sard, sacoAc, sacoDc] = [
    '10YDK-1--------W',
    '10YGB----------A',
    '10Y1001A1001A74G',
    '10Y1001A1001A885',
    '10Y1001A1001A893',
  ] as const;
  const flows =
    graph === 'europe'
      ? [
          ...direction(dk1, gb, 'DK-1', 'GB'),
          ...direction(gb, dk1, 'GB', 'DK-1'),
          ...direction(sacoDc, sard, 'FR-COR', 'IT-SARD'),
          ...direction(sard, sacoAc, 'IT-SARD', 'FR-COR'),
        ]
      : upstreams.payloads.interchangeRows.map((row): DirectedFlow => ({
          from: `US-${row.fromba}`,
          to: `US-${row.toba}`,
          ts: labelTs(row.period) - H,
          mw: row['value'] as number,
        }));
  return flows.sort(
    (a, b) => a.ts - b.ts || a.from.localeCompare(b.from) || a.to.localeCompare(b.to),
  );
}

/** A canned answer that replaces the normal one (fault injection). */
export interface ReplayFault {
  readonly status: number;
  readonly body?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface ReplayOptions {
  /** Epoch seconds, a whole hour: where the recorded data end once moved. */
  readonly anchorTs: number;
  readonly entsoeToken: string;
  readonly eiaApiKey: string;
  /**
   * EIA: repeat the ten complete recorded hours over any requested window, for backfills longer
   * than the recording. The values are recorded ones; only their hours are reused.
   */
  readonly tileEia?: boolean;
  /** EIA: fewer rows per page than the 5000 it allows, to exercise paging. */
  readonly eiaMaxRows?: number;
  /** Delay before every answer. */
  readonly delayMs?: number;
  /** Answers a request differently; undefined lets the replay answer. */
  readonly fault?: (request: ReplayRequest) => ReplayFault | undefined;
}

export interface ReplayUpstreams {
  readonly entsoeBaseUrl: string;
  readonly eiaBaseUrl: string;
  readonly nesoBaseUrl: string;
  /** Every request received, in order. */
  readonly requests: ReplayRequest[];
  /** The recorded payloads as served (moved in time), for expectations. */
  readonly payloads: {
    readonly entsoe: ReadonlyMap<string, string>;
    /** A11 documents by direction, `<out EIC> -> <in EIC>`. */
    readonly entsoeFlows: ReadonlyMap<string, string>;
    readonly eiaRows: readonly EiaRow[];
    readonly interchangeRows: readonly InterchangeRow[];
    readonly nesoEntries: readonly NesoEntry[];
    readonly nesoMixEntries: readonly NesoMixEntry[];
  };
  close(): Promise<void>;
}

interface EiaRow {
  readonly period: string;
  readonly respondent: string;
  readonly fueltype?: string;
  readonly [field: string]: unknown;
}

interface InterchangeRow {
  readonly period: string;
  readonly fromba: string;
  readonly toba: string;
  readonly [field: string]: unknown;
}

interface NesoEntry {
  readonly from: string;
  readonly to: string;
  readonly intensity: { forecast: number | null; actual: number | null; index: string };
}

interface NesoMixEntry {
  readonly from: string;
  readonly to: string;
  readonly generationmix: readonly { fuel: string; perc: number }[];
}

/** The replayed ENTSO-E documents: EIC → recorded A75 file. */
const ENTSOE_FIXTURES: Readonly<Record<string, string>> = {
  '10YFI-1--------U': 'entsoe_A75_FI_2025-10-21T1200Z_PT15M_A03.xml',
  '10Y1001A1001A48H': 'entsoe_A75_NO-5_2023-05-09T0900Z_PT60M_A01.xml',
  '10Y1001A1001A71M': 'entsoe_A75_IT-CSUD_2023-01-17_PT60M_in-and-out-B10.xml',
};
/**
 * The replayed A11 documents, by direction `<out EIC> -> <in EIC>`: both directions of DK-1/GB,
 * and one link of Corsica/Sardinia each way; every other direction has no matching data.
 */
const ENTSOE_FLOW_FIXTURES: Readonly<Record<string, string>> = {
  '10YDK-1--------W -> 10YGB----------A':
    'entsoe_A11_DK-1_to_GB_2023-12-20T1700Z_PT60M_3-timeseries-with-gaps.xml',
  '10YGB----------A -> 10YDK-1--------W':
    'entsoe_A11_GB_to_DK-1_2023-12-20T1700Z_PT60M_3-timeseries-with-gaps.xml',
  '10Y1001A1001A893 -> 10Y1001A1001A74G':
    'entsoe_A11_IT-SACODC_to_IT-SARD_2023-12-27T1000Z_PT60M.xml',
  '10Y1001A1001A74G -> 10Y1001A1001A885':
    'entsoe_A11_IT-SARD_to_IT-SACOAC_2023-12-27T1000Z_PT60M.xml',
};
const ENTSOE_NO_DATA = readFixture('europe-tso', 'entsoe_acknowledgement_no-matching-data.xml');
const EIA_FIXTURE = 'eia_fuel-type-data_all-respondents_2025-04-20T17_to_2025-04-21T03_hourly.json';
// Recorded in the same download run: its NG/TI rows end at the same label as the fuel-type rows,
// so one shift moves both (its D and DF rows run 17 and 25-28 hours further).
const EIA_REGION_FIXTURE =
  'eia_region-data_all-respondents_2025-04-20T20_to_2025-04-22T07_hourly_D-DF-NG-TI.json';
// The oldest recorded hour is cut by the 5000-row limit; tiling reuses the ten complete ones.
const EIA_COMPLETE_LABELS = 10;
/** FPC's reports with FPL (negative: FPC imports) and NSB (positive), over the same day. */
const EIA_INTERCHANGE_FIXTURES = [
  'eia_interchange-data_FPC-to-FPL_2020-01-06T06_to_2020-01-07T06_hourly.json',
  'eia_interchange-data_FPC-to-NSB_2020-01-06T06_to_2020-01-07T06_hourly.json',
];

export async function startReplayUpstreams(options: ReplayOptions): Promise<ReplayUpstreams> {
  const { anchorTs } = options;
  // Each document moved so that its interval ends at anchorTs (the data end before it).
  const movedDocuments = (files: Readonly<Record<string, string>>) =>
    new Map(
      Object.entries(files).map(([key, file]) => {
        const recorded = readFixture('europe-tso', file);
        const interval = documentInterval(recorded);
        if (!interval) throw new Error(`${file}: no document interval`);
        return [key, shiftInstants(recorded, anchorTs - interval.end)];
      }),
    );
  const entsoe = movedDocuments(ENTSOE_FIXTURES);
  const entsoeFlows = movedDocuments(ENTSOE_FLOW_FIXTURES);
  const eiaRecorded = (
    JSON.parse(readFixture('us-agency', EIA_FIXTURE)) as { response: { data: EiaRow[] } }
  ).response.data;
  const eiaLastLabel = eiaRecorded
    .map((row) => labelTs(row.period))
    .reduce((a, b) => Math.max(a, b));
  const eiaRows = eiaRecorded.map((row) => ({
    ...row,
    period: formatLabel(labelTs(row.period) + anchorTs - eiaLastLabel),
  }));
  const regionRows = (
    JSON.parse(readFixture('us-agency', EIA_REGION_FIXTURE)) as { response: { data: EiaRow[] } }
  ).response.data.map((row) => ({
    ...row,
    period: formatLabel(labelTs(row.period) + anchorTs - eiaLastLabel),
  }));
  const interchangeRecorded = EIA_INTERCHANGE_FIXTURES.flatMap(
    (file) =>
      (JSON.parse(readFixture('us-agency', file)) as { response: { data: InterchangeRow[] } })
        .response.data,
  );
  const interchangeLastLabel = Math.max(...interchangeRecorded.map((row) => labelTs(row.period)));
  const interchangeRows = interchangeRecorded.map((row) => ({
    ...row,
    period: formatLabel(labelTs(row.period) + anchorTs - interchangeLastLabel),
  }));
  const nesoEntries = nesoTimeline(anchorTs);
  const nesoMixEntries = nesoMixTimeline(anchorTs);
  const requests: ReplayRequest[] = [];

  const answer = (source: ReplayRequest['source'], url: URL, request: IncomingMessage) => {
    const replayRequest = { source, url };
    requests.push(replayRequest);
    const fault = options.fault?.(replayRequest);
    if (fault) return { headers: {}, body: '', ...fault };
    switch (source) {
      case 'europe-tso':
        return answerEntsoe(url, options.entsoeToken, entsoe, entsoeFlows);
      case 'us-agency':
        return answerEia(
          url,
          options,
          {
            'fuel-type-data': eiaRows,
            'region-data': regionRows,
            'interchange-data': interchangeRows,
          },
          anchorTs,
        );
      case 'uk-operator':
        return answerNeso(url, request, nesoEntries, nesoMixEntries);
    }
  };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://replay');
    const source = url.pathname.startsWith('/api')
      ? 'europe-tso'
      : url.pathname.startsWith('/v2/')
        ? 'us-agency'
        : url.pathname.startsWith('/intensity/') || url.pathname.startsWith('/generation/')
          ? 'uk-operator'
          : undefined;
    setTimeout(() => {
      if (!source) {
        response.writeHead(404).end('not found');
        return;
      }
      const { status, headers, body } = answer(source, url, request);
      response.writeHead(status, headers).end(body);
    }, options.delayMs ?? 0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    entsoeBaseUrl: `${base}/api`,
    eiaBaseUrl: `${base}/v2`,
    nesoBaseUrl: base,
    requests,
    payloads: { entsoe, entsoeFlows, eiaRows, interchangeRows, nesoEntries, nesoMixEntries },
    close: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

const xml = (body: string): Answer => ({
  status: 200,
  headers: { 'content-type': 'text/xml' },
  body,
});
const json = (status: number, body: unknown): Answer => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** docs/upstreams.md §1.1, §1.5, §9.1. */
function answerEntsoe(
  url: URL,
  token: string,
  documents: ReadonlyMap<string, string>,
  flows: ReadonlyMap<string, string>,
): Answer {
  const query = url.searchParams;
  if (query.get('securityToken') !== token) {
    return {
      status: 401,
      headers: { 'content-type': 'text/html' },
      body: '<html>Unauthorized</html>',
    };
  }
  const start = parsePeriod(query.get('periodStart'));
  const end = parsePeriod(query.get('periodEnd'));
  const documentType = query.get('documentType') ?? '';
  // Day-ahead forecasts (docs/upstreams.md §1.7): no recording of our zones at a replayable
  // date, so every valid request is answered "no matching data", as for an area without them.
  const forecast = ['A69', 'A65', 'A71'].includes(documentType);
  // A11: one direction of one link, out_Domain -> in_Domain, and no processType.
  const flow = documentType === 'A11';
  const eic = query.get(documentType === 'A65' ? 'outBiddingZone_Domain' : 'in_Domain') ?? '';
  const outEic = query.get('out_Domain') ?? '';
  const valid =
    url.pathname === '/api' &&
    ((documentType === 'A75' && query.get('processType') === 'A16') ||
      (forecast && query.get('processType') === 'A01') ||
      (flow && !query.has('processType') && /^[0-9A-Z-]{16}$/.test(outEic))) &&
    /^[0-9A-Z-]{16}$/.test(eic) &&
    start !== undefined &&
    end !== undefined &&
    start < end &&
    end - start <= 366 * 24 * H;
  if (!valid) return { status: 400, headers: {}, body: `bad request: ${url.search}` };
  if (forecast) return xml(ENTSOE_NO_DATA);
  const document = flow ? flows.get(`${outEic} -> ${eic}`) : documents.get(eic);
  const interval = document && documentInterval(document);
  if (!document || !interval || interval.end <= start || interval.start >= end) {
    return xml(ENTSOE_NO_DATA);
  }
  return xml(document);
}

/** The replayed rows of each EIA route. */
interface EiaRoutes {
  readonly 'fuel-type-data': readonly EiaRow[];
  readonly 'region-data': readonly EiaRow[];
  readonly 'interchange-data': readonly InterchangeRow[];
}

/**
 * docs/upstreams.md §2.1, §2.2, §9.4: inclusive hour-ending labels, offset paging, echoed key;
 * who reports is the `respondent` facet, or `fromba` for interchange-data.
 */
function answerEia(url: URL, options: ReplayOptions, routes: EiaRoutes, anchorTs: number) {
  const query = url.searchParams;
  const params = Object.fromEntries(query);
  if (query.get('api_key') !== options.eiaApiKey) {
    return json(403, { error: { code: 'API_KEY_INVALID', message: 'invalid api_key' } });
  }
  const route = /^\/v2\/electricity\/rto\/([a-z-]+)\/data\/$/.exec(url.pathname)?.[1] ?? '';
  const reporter = route === 'interchange-data' ? 'fromba' : 'respondent';
  const reporters = query.getAll(`facets[${reporter}][]`);
  const start = query.get('start') ?? '';
  const end = query.get('end') ?? '';
  const offset = Number(query.get('offset') ?? '0');
  const length = Math.min(Number(query.get('length') ?? '5000'), options.eiaMaxRows ?? 5000);
  const types = query.getAll('facets[type][]');
  const valid =
    route in routes &&
    query.get('frequency') === 'hourly' &&
    query.get('data[0]') === 'value' &&
    query.get('sort[0][column]') === 'period' &&
    query.get('sort[0][direction]') === 'asc' &&
    /^\d{4}-\d{2}-\d{2}T\d{2}$/.test(start) &&
    /^\d{4}-\d{2}-\d{2}T\d{2}$/.test(end) &&
    reporters.length > 0 &&
    Number.isInteger(offset) &&
    length > 0;
  if (!valid) return json(400, { error: `invalid parameters: ${url.search}`, code: 400 });

  const rows: readonly (EiaRow | InterchangeRow)[] =
    options.tileEia && route === 'fuel-type-data'
      ? tiledRows(routes[route], reporters, start, end, anchorTs)
      : routes[route as keyof EiaRoutes];
  // What orders the rows of one reporter and period: fuel type, type, or neighbour.
  const detailOf = (row: EiaRow | InterchangeRow) =>
    String(row['fueltype'] ?? row['type'] ?? row['toba']);
  const matching = rows.filter(
    (row) =>
      reporters.includes(String(row[reporter])) &&
      row.period >= start &&
      row.period <= end &&
      (route !== 'region-data' || types.length === 0 || types.includes(String(row['type']))),
  );
  matching.sort(
    (a, b) =>
      a.period.localeCompare(b.period) ||
      String(a[reporter]).localeCompare(String(b[reporter])) ||
      detailOf(a).localeCompare(detailOf(b)),
  );
  const page = matching.slice(offset, offset + length);
  const truncated = offset + page.length < matching.length;
  return json(200, {
    response: {
      ...(truncated && {
        warnings: [
          {
            warning: 'incomplete return',
            description: `The API can only return ${length} rows in JSON format.`,
          },
        ],
      }),
      total: String(matching.length),
      dateFormat: 'YYYY-MM-DD"T"HH24',
      frequency: 'hourly',
      data: page,
      description: 'Hourly net generation by balancing authority and energy source.',
    },
    // Like EIA, the key comes back in the body.
    request: { command: url.pathname, params },
    apiVersion: '2.1.8',
  });
}

/** Rows for every label of [start, end], cycling through the complete recorded hours. */
function tiledRows(
  rows: readonly EiaRow[],
  respondents: readonly string[],
  start: string,
  end: string,
  anchorTs: number,
): EiaRow[] {
  const byLabel = new Map<number, EiaRow[]>();
  for (const row of rows) {
    if (!respondents.includes(row.respondent)) continue;
    const ts = labelTs(row.period);
    byLabel.set(ts, [...(byLabel.get(ts) ?? []), row]);
  }
  const tiled: EiaRow[] = [];
  for (let ts = labelTs(start); ts <= labelTs(end); ts += H) {
    const hoursBack =
      ((((anchorTs - ts) / H) % EIA_COMPLETE_LABELS) + EIA_COMPLETE_LABELS) % EIA_COMPLETE_LABELS;
    const period = formatLabel(ts);
    for (const row of byLabel.get(anchorTs - hoursBack * H) ?? []) tiled.push({ ...row, period });
  }
  return tiled;
}

/** docs/upstreams.md §3.1, §3.2, §3.4. */
function answerNeso(
  url: URL,
  request: IncomingMessage,
  entries: readonly NesoEntry[],
  mixEntries: readonly NesoMixEntry[],
): Answer {
  const match = /^\/(intensity|generation)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
  const from = match && parseNesoInstant(decodeURIComponent(match[2] ?? ''));
  // fw48h: the 96 half hours from the one containing `from` (a boundary `from`: one earlier).
  const forward = match?.[1] === 'intensity' && match[3] === 'fw48h';
  const first = from ? Math.floor((from - (from % 1800 === 0 ? 1 : 0)) / 1800) * 1800 : 0;
  const to = forward
    ? first + 48 * H
    : match && parseNesoInstant(decodeURIComponent(match[3] ?? ''));
  if (!from || !to || to <= from || to - from > 14 * 24 * H) {
    return json(400, { error: { code: '400 Bad Request', message: `bad path ${url.pathname}` } });
  }
  if (!/application\/json/.test(request.headers.accept ?? '')) {
    return json(400, { error: { code: '400 Bad Request', message: 'Accept: application/json' } });
  }
  // A `from` on a half-hour boundary also brings the half hour before it (docs/upstreams.md §3.1).
  const data = (match?.[1] === 'generation' ? mixEntries : entries).filter((entry) => {
    const start = Date.parse(entry.from) / 1000;
    if (forward) return start >= first && start < to;
    return start >= from - 1800 && start < to;
  });
  return json(200, { data });
}

/** The recorded past 24 h (settled) then the recorded 48 h forecast, moved to meet at anchorTs. */
function nesoTimeline(anchorTs: number): NesoEntry[] {
  const read = (file: string) =>
    (JSON.parse(readFixture('uk-operator', file)) as { data: NesoEntry[] }).data;
  const past = read('neso_national_pt24h_2023-03-13T1200Z_to_2023-03-14T1200Z.json');
  const ahead = read('neso_national_fw48h_2023-03-14T1200Z_to_2023-03-16T1200Z.json');
  const shift = anchorTs - Date.parse('2023-03-14T12:00Z') / 1000;
  return [...past, ...ahead].map((entry) => ({
    ...entry,
    from: shiftInstants(entry.from, shift),
    to: shiftInstants(entry.to, shift),
  }));
}

/** The recorded 7-day generation range (one half-hour more), moved to end at anchorTs. */
function nesoMixTimeline(anchorTs: number): NesoMixEntry[] {
  const recorded = (
    JSON.parse(
      readFixture(
        'uk-operator',
        'neso_generation_range_2026-06-25T2330Z_to_2026-07-03T0000Z_7days.json',
      ),
    ) as { data: NesoMixEntry[] }
  ).data;
  const shift = anchorTs - Date.parse('2026-07-03T00:00Z') / 1000;
  return recorded.map((entry) => ({
    ...entry,
    from: shiftInstants(entry.from, shift),
    to: shiftInstants(entry.to, shift),
  }));
}

/** Moves every `YYYY-MM-DDThh:mm[:ss]Z` instant of a text by whole seconds. */
function shiftInstants(text: string, seconds: number): string {
  return text.replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?Z/g, (instant, withSeconds) => {
    const moved = new Date(Date.parse(instant) + seconds * 1000).toISOString();
    return withSeconds ? moved.slice(0, 19) + 'Z' : moved.slice(0, 16) + 'Z';
  });
}

/** The document interval: `time_Period.timeInterval` (A75), `period.timeInterval` (A11). */
function documentInterval(document: string): { start: number; end: number } | undefined {
  const match =
    /<(?:time_Period|period)\.timeInterval>\s*<start>([^<]+)<\/start>\s*<end>([^<]+)<\/end>/.exec(
      document,
    );
  if (!match) return undefined;
  return { start: Date.parse(match[1] ?? '') / 1000, end: Date.parse(match[2] ?? '') / 1000 };
}

function parsePeriod(value: string | null): number | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(value ?? '');
  if (!match) return undefined;
  const [, y, mo, d, h, mi] = match;
  return Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi)) / 1000;
}

function parseNesoInstant(value: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}Z$/.test(value)) return undefined;
  return Date.parse(value) / 1000;
}

/** EIA `YYYY-MM-DDTHH` label → epoch seconds. */
function labelTs(label: string): number {
  return Date.parse(`${label}:00Z`) / 1000;
}

function formatLabel(ts: number): string {
  return new Date(ts * 1000).toISOString().slice(0, 13);
}
