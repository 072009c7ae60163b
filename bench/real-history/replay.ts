import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { findZone } from '../../src/core/zones.js';
import {
  EIA_FUEL_TYPE_DESCRIPTION,
  EIA_FUEL_TYPE_ROUTE,
  EIA_REGION_DESCRIPTION,
  EIA_REGION_ROUTE,
  EIA_REGION_TYPE_NAMES,
  EIA_TYPE_NAMES,
} from '../../src/simulator/eia.js';
import { eiaEnvelope, type EiaRequest, parseEiaRequest } from '../../src/simulator/eia-request.js';
import {
  AsciiSink,
  glDocumentHead,
  invalidRequest,
  noMatchingData,
  periodHead,
  requestedPeriod,
} from '../../src/simulator/entsoe-document.js';
import { timeSeriesHead } from '../../src/simulator/entsoe.js';
import { forecastSeriesHead } from '../../src/simulator/entsoe-forecast.js';
import { marketDayStart, nextMarketDayStart } from '../../src/simulator/forecast-model.js';
import { formatMinute, jsonReply, type SourceReply } from '../../src/simulator/reply.js';
import type { UsProfile } from '../../src/simulator/zone-profiles.js';
import {
  firstHourAtOrAfter,
  type ForecastColumn,
  type GenerationColumn,
  type ZoneHistory,
} from './history.js';

/**
 * A loopback upstream that answers like ENTSO-E and EIA at their real paths, from real history in
 * the files' format (bench/real-history; not the simulator's synthetic grids): A75 actual
 * generation, and where a file has them A69 day-ahead wind and solar and A65 day-ahead load; EIA
 * v2 fuel-type-data pages, and region-data pages with a file's day-ahead load as the demand
 * forecast DF. Documents are worded by the simulator's own formatters, so what gridco2's parsers
 * read is what they read from the simulator and the recorded payloads. Everything in the files
 * counts as published (a replay of history, as a backfill meets it); the issue time of a
 * day-ahead forecast is gridco2's own rule (src/core/forecast-issue.ts), since the documents
 * carry none.
 *
 * Not replayed: a US file's day-ahead wind and solar (US-CAISO's CAISO OASIS columns). gridco2
 * reads no US wind or solar forecast: EIA publishes none (region-data has the demand forecast DF).
 */

export interface Replay {
  /** ENTSOE_BASE_URL and EIA_BASE_URL for gridco2. */
  readonly baseUrls: { readonly 'europe-tso': string; readonly 'us-agency': string };
  /** Upstream requests answered. */
  requests(): number;
  close(): Promise<void>;
}

/** A75 psrType of each column (docs/method.md maps them back to the same categories). */
const PSR_OF: Readonly<Record<GenerationColumn, string>> = {
  coal: 'B05',
  gas: 'B04',
  oil: 'B06',
  biomass: 'B01',
  geothermal: 'B09',
  hydro: 'B12',
  nuclear: 'B14',
  solar: 'B16',
  // The files hold onshore and offshore together in wind_onshore (README.md).
  wind_onshore: 'B19',
  wind_offshore: 'B18',
  other: 'B20',
};

/** EIA fueltype of each column; EIA-930 has no biomass of its own (it is in OTH). */
const FUELTYPE_OF: Readonly<Record<GenerationColumn, string>> = {
  coal: 'COL',
  gas: 'NG',
  oil: 'OIL',
  biomass: 'OTH',
  geothermal: 'GEO',
  hydro: 'WAT',
  nuclear: 'NUC',
  solar: 'SUN',
  wind_onshore: 'WND',
  wind_offshore: 'WND',
  other: 'OTH',
};

/** A day-ahead column's TimeSeries, as the recorded documents word it. */
interface DayAheadSeries {
  readonly column: ForecastColumn;
  readonly businessType: string;
  readonly objectAggregation: string;
  readonly outArea: boolean;
  readonly psrType?: string;
}

/** The day-ahead columns each ENTSO-E forecast document holds. */
const DAY_AHEAD_SERIES: Readonly<Record<'A69' | 'A65', readonly DayAheadSeries[]>> = {
  A69: [
    {
      column: 'solar_da_forecast_mw',
      businessType: 'A94',
      objectAggregation: 'A08',
      outArea: false,
      psrType: 'B16',
    },
    {
      column: 'wind_da_forecast_mw',
      businessType: 'A93',
      objectAggregation: 'A08',
      outArea: false,
      psrType: 'B19',
    },
  ],
  A65: [
    { column: 'load_da_forecast_mw', businessType: 'A04', objectAggregation: 'A01', outArea: true },
  ],
};

const HOUR = 3600;
const HOUR_MS = 3_600_000;
const CURVE = { curveType: 'A01' } as const;

export async function startReplay(histories: readonly ZoneHistory[]): Promise<Replay> {
  const byUpstreamId = new Map<string, ZoneHistory>();
  for (const history of histories) {
    const zone = findZone(history.zone);
    if (!zone) throw new Error(`no gridco2 zone ${history.zone}`);
    byUpstreamId.set(zone.upstreamId, history);
  }
  let requests = 0;
  const eiaMatches = new Map<string, EiaMatch[]>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests++;
    try {
      if (url.pathname === '/api') send(res, answerEntsoe(url.searchParams, byUpstreamId));
      else if (url.pathname.startsWith('/v2/'))
        send(res, answerEia(url.pathname, url.searchParams, byUpstreamId, eiaMatches));
      else send(res, jsonReply(404, { error: `nothing replayed at ${url.pathname}` }));
    } catch (error) {
      send(res, jsonReply(500, { error: `replay failure: ${String(error)}` }));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  return {
    baseUrls: { 'europe-tso': `${base}/api`, 'us-agency': `${base}/v2` },
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function send(res: ServerResponse, reply: SourceReply): void {
  const body = Buffer.isBuffer(reply.body) ? reply.body : Buffer.from(reply.body);
  res.writeHead(reply.status, { ...reply.headers, 'content-length': body.length });
  res.end(body);
}

// ---- ENTSO-E ----------------------------------------------------------------------------------

function answerEntsoe(
  query: URLSearchParams,
  byUpstreamId: ReadonlyMap<string, ZoneHistory>,
): SourceReply {
  const context = { seed: 1, nowMs: Date.now() };
  const documentType = query.get('documentType');
  const eic = query.get(documentType === 'A65' ? 'outBiddingZone_Domain' : 'in_Domain') ?? '';
  const period = requestedPeriod(query, context);
  if ('status' in period) return period;
  const window = `${formatMinute(period.start)}/${formatMinute(period.end)}`;
  const history = byUpstreamId.get(eic);
  let body: Buffer | undefined;
  if (documentType === 'A75' && query.get('processType') === 'A16') {
    body = history && generationDocument(history, eic, period.start, period.end, context.nowMs);
  } else if (
    (documentType === 'A69' || documentType === 'A65') &&
    query.get('processType') === 'A01'
  ) {
    body =
      history &&
      dayAheadDocument(history, eic, documentType, period.start, period.end, context.nowMs);
  } else if (documentType !== 'A71' || query.get('processType') !== 'A01') {
    return invalidRequest(
      context,
      `The combination of [documentType=${documentType}, processType=${query.get('processType')}] is not valid or not served.`,
    );
  }
  // The files hold no scheduled generation (A71) forecast.
  return body
    ? { status: 200, headers: { 'content-type': 'text/xml' }, body }
    : noMatchingData(context, eic, window);
}

/** One TimeSeries per reported column, one PT60M Period over the hours present. */
function generationDocument(
  history: ZoneHistory,
  eic: string,
  startMs: number,
  endMs: number,
  nowMs: number,
): Buffer | undefined {
  const first = firstHourAtOrAfter(history, Math.ceil(startMs / HOUR_MS) * HOUR);
  const end = firstHourAtOrAfter(history, Math.ceil(endMs / HOUR_MS) * HOUR);
  if (end <= first) return undefined;
  const periodStart = history.hours[first]!;
  const periodEnd = history.hours[end - 1]! + HOUR;
  const sink = new AsciiSink(4096 + (end - first) * history.generation.size * 80);
  sink.write(
    glDocumentHead({
      declaration: 'utf-8',
      mRID: `replay-${eic}-${periodStart}`,
      type: 'A75',
      processType: 'A16',
      createdMs: nowMs,
      startMs,
      endMs,
    }),
  );
  let mRID = 0;
  for (const [column, values] of history.generation) {
    sink.write(timeSeriesHead(++mRID, { eic, ...CURVE }, PSR_OF[column], false));
    sink.write(periodHead(periodStart * 1000, periodEnd * 1000, 'PT60M'));
    for (let i = first; i < end; i++) {
      const value = values[i]!;
      if (Number.isNaN(value)) continue;
      const position = (history.hours[i]! - periodStart) / HOUR + 1;
      sink.write(
        `\t\t\t<Point>\n\t\t\t\t<position>${position}</position>\n\t\t\t\t<quantity>${value}</quantity>\n\t\t\t</Point>\n`,
      );
    }
    sink.write('\t\t</Period>\n\t</TimeSeries>\n');
  }
  sink.write('</GL_MarketDocument>');
  return sink.toBuffer();
}

/**
 * Every market day the window touches, one TimeSeries per day and day-ahead column of the
 * document (A69 wind and solar, A65 load).
 */
function dayAheadDocument(
  history: ZoneHistory,
  eic: string,
  type: 'A69' | 'A65',
  startMs: number,
  endMs: number,
  nowMs: number,
): Buffer | undefined {
  const series = DAY_AHEAD_SERIES[type].filter(({ column }) => history.forecasts.has(column));
  if (series.length === 0) return undefined;
  const days: { start: number; end: number }[] = [];
  for (let day = marketDayStart(startMs); day < endMs; day = nextMarketDayStart(day)) {
    days.push({ start: day, end: nextMarketDayStart(day) });
  }
  const sink = new AsciiSink(8192 + days.length * 24 * 2 * 80);
  sink.write(
    glDocumentHead({
      declaration: 'UTF-8',
      mRID: `replay-${type}-${eic}-${days[0]!.start}`,
      type,
      processType: 'A01',
      createdMs: nowMs,
      startMs: days[0]!.start,
      endMs: days.at(-1)!.end,
    }),
  );
  let mRID = 0;
  for (const day of days) {
    const first = firstHourAtOrAfter(history, day.start / 1000);
    const end = firstHourAtOrAfter(history, day.end / 1000);
    for (const { column, ...head } of series) {
      const values = history.forecasts.get(column)!;
      const present: number[] = [];
      for (let i = first; i < end; i++) if (!Number.isNaN(values[i]!)) present.push(i);
      if (present.length === 0) continue;
      sink.write(forecastSeriesHead(++mRID, head, { eic, ...CURVE }));
      sink.write(periodHead(day.start, day.end, 'PT60M'));
      for (const i of present) {
        const position = (history.hours[i]! * 1000 - day.start) / HOUR_MS + 1;
        sink.write(
          `\t\t\t<Point>\n\t\t\t\t<position>${position}</position>\n\t\t\t\t<quantity>${Math.round(values[i]! * 100) / 100}</quantity>\n\t\t\t</Point>\n`,
        );
      }
      sink.write('\t\t</Period>\n\t</TimeSeries>\n');
    }
  }
  if (mRID === 0) return undefined;
  sink.write('</GL_MarketDocument>');
  return sink.toBuffer();
}

// ---- EIA ------------------------------------------------------------------------------------

/** A row an EIA query matches, before its page is cut. */
interface EiaMatch {
  readonly periodMs: number;
  readonly profile: UsProfile;
  readonly code: string;
  readonly value: number;
}

/** Every row an EIA query matches, in order, before its page is cut. */
function eiaMatches(
  request: EiaRequest,
  region: boolean,
  byUpstreamId: ReadonlyMap<string, ZoneHistory>,
): EiaMatch[] {
  const respondents = request.respondents.flatMap((profile) => {
    const history = byUpstreamId.get(profile.respondent);
    if (!history) return [];
    // Per code, the columns summed into its value (fuel-type-data's OTH: biomass and other).
    const codes = new Map<string, Float64Array[]>();
    const add = (code: string, values: Float64Array) =>
      codes.set(code, [...(codes.get(code) ?? []), values]);
    if (region) {
      // The files' only region-data: the day-ahead load, as the demand forecast.
      const load = history.forecasts.get('load_da_forecast_mw');
      if (load) add('DF', load);
    } else {
      for (const [column, values] of history.generation) add(FUELTYPE_OF[column], values);
    }
    for (const code of codes.keys()) {
      if (request.fueltypes && !request.fueltypes.has(code)) codes.delete(code);
    }
    const index = new Map<number, number>();
    history.hours.forEach((ts, i) => index.set(ts, i));
    return [{ profile, history, codes: [...codes], index }];
  });
  const lastDataMs = Math.max(
    0,
    ...respondents.map(({ history }) => (history.hours.at(-1)! + HOUR) * 1000),
  );
  const firstMs = request.firstPeriodMs;
  const lastMs = Math.min(request.lastPeriodMs, lastDataMs);
  const hourCount = Math.max(0, (lastMs - firstMs) / HOUR_MS + 1);
  const matches: EiaMatch[] = [];
  for (let step = 0; step < hourCount; step++) {
    const periodMs = request.descending ? lastMs - step * HOUR_MS : firstMs + step * HOUR_MS;
    for (const { profile, codes, index } of respondents) {
      // EIA labels the hour's end; the files its start.
      const i = index.get(periodMs / 1000 - HOUR);
      if (i === undefined) continue;
      for (const [code, columns] of codes) {
        const value = columns.reduce((sum, values) => sum + (values[i] ?? 0), 0);
        if (!Number.isNaN(value)) matches.push({ periodMs, profile, code, value });
      }
    }
  }
  return matches;
}

function answerEia(
  pathname: string,
  query: URLSearchParams,
  byUpstreamId: ReadonlyMap<string, ZoneHistory>,
  matchesByQuery: Map<string, EiaMatch[]>,
): SourceReply {
  if (!query.get('api_key')) return jsonReply(403, { error: { code: 'API_KEY_MISSING' } });
  const route = pathname.replace(/\/?$/, '/');
  const region = route === EIA_REGION_ROUTE;
  if (!region && route !== EIA_FUEL_TYPE_ROUTE) {
    return jsonReply(404, { error: `Invalid route ${pathname}` });
  }
  const codeFacet = region ? 'type' : 'fueltype';
  const request = parseEiaRequest(query, codeFacet);
  if (typeof request === 'string') return jsonReply(400, { error: request, code: 400 });
  // Every row the query matches, counted once for all its pages: each page counted them all
  // anew, seconds of this process's CPU beside the backfills it answers.
  const pageless = new URLSearchParams(query);
  pageless.delete('offset');
  pageless.delete('length');
  const key = `${route}?${pageless.toString()}`;
  let matches = matchesByQuery.get(key);
  if (!matches) matchesByQuery.set(key, (matches = eiaMatches(request, region, byUpstreamId)));
  const total = matches.length;
  const rows = matches
    .slice(request.offset, request.offset + request.length)
    .map(({ periodMs, profile, code, value }) => {
      const row: Record<string, string> = {
        period: new Date(periodMs).toISOString().slice(0, 13),
        respondent: profile.respondent,
        'respondent-name': profile.respondentName,
        [codeFacet]: code,
        'type-name': region
          ? EIA_REGION_TYPE_NAMES[code as keyof typeof EIA_REGION_TYPE_NAMES]
          : (EIA_TYPE_NAMES[code] ?? code),
      };
      if (request.withValues) {
        row.value = String(Math.round(value));
        row['value-units'] = 'megawatthours';
      }
      return row;
    });
  const description = region ? EIA_REGION_DESCRIPTION : EIA_FUEL_TYPE_DESCRIPTION;
  return jsonReply(200, eiaEnvelope(request, rows, total, description, route));
}
