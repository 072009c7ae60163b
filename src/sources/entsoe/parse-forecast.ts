/**
 * Pure parser of ENTSO-E day-ahead forecast documents (docs/upstreams.md §1.7): A69 wind and
 * solar (psrType B16, B18, B19), A65 total load, A71 scheduled generation.
 *
 *     parseEntsoeForecast(xml: string): EntsoeForecastResult
 *
 *   - `forecast`: per area (EIC) and quantity, the intervals at the document's own resolution
 *     (never resampled), each with the start of the market day it belongs to (the issue-time rule
 *     of src/core/forecast-issue.ts needs it). Wind is B18 + B19 summed per interval over the types
 *     the area publishes; `ignored` lists series that are not the forecast (A71 and A65 series in
 *     the other direction), `dropped` what could not be used.
 *   - `not-day-ahead`: a well-formed forecast document of another processType (A18 "current",
 *     A40 intraday, A16 realised load): only day-ahead (A01) is stored.
 *   - `no-data`, `upstream-error`, `invalid-payload`: as for A75 (src/sources/entsoe/parse.ts).
 *
 * Quirks handled (upstreams §1.3 of the forecast notes): every market day the window touches comes
 * back (the caller filters to its window); one TimeSeries per day, merged; days of 23/25 points;
 * A03 curves, also with a resolution change inside one TimeSeries; gaps between Periods; A71's
 * out-series and A65's out domain; the document's revisionNumber is reported so that the latest
 * revision can be kept. Never throws on a bad payload.
 */
import type { PlainObject } from '../../core/payload.js';
import { marketDayStartOf } from '../../core/forecast-issue.js';
import { isEntsoeForecastDocument, type EntsoeForecastDocument } from '../../core/sources.js';
import { formatTs, parseInstant } from '../../core/time.js';
import {
  checkedHeader,
  childOf,
  collectSeries,
  periodBounds,
  readMarketDocument,
  readPeriod,
  textOf,
  type SeriesHeader,
  type AcknowledgementResult,
} from './xml.js';

export type EntsoeForecastQuantity = 'wind' | 'solar' | 'load' | 'generation';

/** One forecast interval `[start, end)`, epoch seconds, MW averaged over it. */
export interface ForecastInterval {
  readonly start: number;
  readonly end: number;
  readonly mw: number;
  /** Start of the market day (the day-ahead auction's delivery day) the interval belongs to. */
  readonly marketDayStart: number;
}

export type EntsoeForecastResult =
  | {
      readonly kind: 'forecast';
      readonly documentType: EntsoeForecastDocument;
      readonly revision: number;
      /** The document's createdDateTime (assembly time, not the issue time), epoch seconds. */
      readonly createdAt: number | undefined;
      /** EIC → quantity → intervals in time order. */
      readonly areas: ReadonlyMap<
        string,
        ReadonlyMap<EntsoeForecastQuantity, readonly ForecastInterval[]>
      >;
      readonly ignored: readonly string[];
      readonly dropped: readonly string[];
    }
  | {
      readonly kind: 'not-day-ahead';
      readonly documentType: string;
      readonly processType: string;
    }
  | AcknowledgementResult;

const SOLAR = 'B16';
const WIND: ReadonlySet<string> = new Set(['B18', 'B19']);

export function parseEntsoeForecast(xml: string): EntsoeForecastResult {
  return readMarketDocument(xml, readForecastDocument);
}

function invalidPayload(detail: string): EntsoeForecastResult {
  return { kind: 'invalid-payload', detail };
}

function readForecastDocument(body: PlainObject): EntsoeForecastResult {
  const documentType = textOf(body, 'type') ?? null;
  if (!isEntsoeForecastDocument(documentType)) {
    return invalidPayload(
      `GL_MarketDocument of type ${documentType ?? '(none)'}, not A69, A65 or A71`,
    );
  }
  const processType = textOf(body, 'process.processType');
  if (processType === undefined) return invalidPayload(`${documentType} without a processType`);
  if (processType !== 'A01') return { kind: 'not-day-ahead', documentType, processType };
  const revisionText = textOf(body, 'revisionNumber') ?? '1';
  if (!/^\d+$/.test(revisionText)) return invalidPayload(`revisionNumber ${revisionText}`);
  const createdMs = parseInstant(textOf(body, 'createdDateTime') ?? '');

  const dropped: string[] = [];
  const ignored: string[] = [];
  const collected = collectSeries(
    body,
    dropped,
    (series, label) => readSeriesHeader(documentType, series, label, dropped, ignored),
    (period, curveType, label): ForecastInterval[] => {
      const bounds = periodBounds(period);
      const intervals = readPeriod(period, curveType, label, dropped);
      if (bounds === undefined) return [];
      return intervals.map((interval) => ({
        ...interval,
        marketDayStart: marketDayStartOf(bounds.start, bounds.end, interval.start),
      }));
    },
  );

  const areas = new Map<string, Map<EntsoeForecastQuantity, ForecastInterval[]>>();
  for (const [area, byKey] of collected) {
    const quantities = new Map<EntsoeForecastQuantity, ForecastInterval[]>();
    const usable = (key: string) => byKey.get(key) ?? [];
    if (documentType === 'A69') {
      const solar = usable(SOLAR);
      if (solar.length > 0) quantities.set('solar', sortByStart(solar));
      const windTypes = [...byKey.keys()].filter((key) => WIND.has(key));
      const wind = sumWind(windTypes.map(usable), dropped);
      if (wind.length > 0) quantities.set('wind', wind);
    } else {
      const quantity = documentType === 'A65' ? 'load' : 'generation';
      const intervals = usable(quantity);
      if (intervals.length > 0) quantities.set(quantity, sortByStart(intervals));
    }
    if (quantities.size > 0) areas.set(area, quantities);
  }
  return {
    kind: 'forecast',
    documentType,
    revision: Number(revisionText),
    createdAt: createdMs === undefined ? undefined : createdMs / 1000,
    areas,
    ignored,
    dropped,
  };
}

/**
 * Which series carry the forecast: A69 in-series of B16/B18/B19; A65 out-series (the load
 * documents name the area as `outBiddingZone_Domain`, §1.3 item 9); A71 in-series only (its
 * out-series is scheduled consumption, item 8).
 */
function readSeriesHeader(
  documentType: EntsoeForecastDocument,
  series: PlainObject,
  label: string,
  dropped: string[],
  ignored: string[],
): SeriesHeader | undefined {
  const inArea = textOf(series, 'inBiddingZone_Domain.mRID');
  const outArea = textOf(series, 'outBiddingZone_Domain.mRID');
  const drop = (problem: string): undefined => {
    dropped.push(`${label}: ${problem}`);
  };
  if ((inArea === undefined) === (outArea === undefined)) {
    return drop('needs exactly one bidding zone');
  }
  const wanted = documentType === 'A65' ? outArea : inArea;
  if (wanted === undefined) {
    ignored.push(
      `${label}: ${documentType === 'A65' ? 'in' : 'out'}BiddingZone series of ${inArea ?? outArea}`,
    );
    return undefined;
  }
  if (documentType !== 'A69') {
    const key = documentType === 'A65' ? 'load' : 'generation';
    return checkedHeader(series, { area: wanted, key }, label, dropped);
  }
  const psrType = textOf(childOf(series, 'MktPSRType'), 'psrType');
  if (psrType === undefined) return drop('no psrType');
  if (psrType !== SOLAR && !WIND.has(psrType))
    return drop(`psrType ${psrType} is not wind or solar`);
  return checkedHeader(series, { area: wanted, key: psrType }, label, dropped);
}

/**
 * Wind = offshore (B18) + onshore (B19), interval by interval, over the types the area publishes.
 * A type counts from its first interval on (NO-2 publishes B18 only from September 2025): an
 * interval where a type that has started has no value (a gap, or a type whose tail is not out
 * yet) has no sum, rather than a sum that is too low.
 */
function sumWind(
  types: readonly (readonly ForecastInterval[])[],
  dropped: string[],
): ForecastInterval[] {
  const present = types.filter((intervals) => intervals.length > 0);
  if (present.length === 0) return [];
  const byStart = present.map((intervals) => new Map(intervals.map((i) => [i.start, i])));
  const firstStart = present.map((intervals) => Math.min(...intervals.map((i) => i.start)));
  const starts = [...new Set(present.flatMap((intervals) => intervals.map((i) => i.start)))].sort(
    (a, b) => a - b,
  );
  const summed: ForecastInterval[] = [];
  for (const start of starts) {
    const parts: ForecastInterval[] = [];
    let complete = true;
    byStart.forEach((map, t) => {
      if ((firstStart[t] as number) > start) return;
      const part = map.get(start);
      if (part === undefined) complete = false;
      else parts.push(part);
    });
    const [first] = parts;
    if (!complete || first === undefined || parts.some((part) => part.end !== first.end)) {
      dropped.push(`wind ${formatTs(start)}: not every published wind type has a value`);
      continue;
    }
    summed.push({
      start,
      end: first.end,
      mw: parts.reduce((sum, part) => sum + part.mw, 0),
      marketDayStart: Math.max(...parts.map((part) => part.marketDayStart)),
    });
  }
  return summed;
}

function sortByStart(intervals: ForecastInterval[]): ForecastInterval[] {
  return intervals.sort((a, b) => a.start - b.start);
}
