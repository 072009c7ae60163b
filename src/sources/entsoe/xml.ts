/**
 * What every ENTSO-E document reader shares (docs/upstreams.md §1.2–1.5): the XML turned into plain
 * objects, the Acknowledgement, the TimeSeries merged per area, and one Period expanded into
 * intervals. Pure; never throws on a bad payload.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { toHourlySeries, type HourlySeries, type PowerInterval } from '../../core/generation.js';
import { isPlainObject, parseDecimal, type PlainObject } from '../../core/payload.js';
import { formatTs, parseInstant } from '../../core/time.js';
import type { PayloadFailure } from '../adapter.js';

/** An Acknowledgement: "no matching data" (not an error), or a refusal. */
export type AcknowledgementResult =
  { readonly kind: 'no-data'; readonly message: string } | PayloadFailure;

const REPEATABLE = new Set(['TimeSeries', 'Period', 'Point', 'Reason']);

const xmlParser = new XMLParser({
  // Any namespace prefix (`<ns2:GL_MarketDocument>`) reads like none.
  removeNSPrefix: true,
  ignoreAttributes: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  // Keep text as text: numbers are parsed here, strictly.
  parseTagValue: false,
  // No document we read needs entities; never expand a DOCTYPE's.
  processEntities: false,
  isArray: (name) => REPEATABLE.has(name),
  // Callbacks get the parser's path matcher, not its path as a string: building that string for
  // every element was most of the parse (isArray reads only the element's name).
  jPath: false,
});

/** The root element's name and content, or why the payload is not one XML document. */
function readXmlRoot(
  xml: string,
): { readonly root: string; readonly body: PlainObject } | { readonly invalid: string } {
  const validation = XMLValidator.validate(xml);
  if (validation !== true) {
    const { msg, line } = validation.err;
    return { invalid: `not well-formed XML (line ${line}): ${msg}` };
  }
  let document: unknown;
  try {
    document = xmlParser.parse(xml);
  } catch (error) {
    return { invalid: `XML could not be read: ${String(error)}` };
  }
  if (!isPlainObject(document)) return { invalid: 'no root element' };
  const roots = Object.keys(document);
  const [root] = roots;
  if (root === undefined || roots.length > 1) {
    return { invalid: `expected one root element, found ${roots.length}` };
  }
  const body = document[root];
  if (!isPlainObject(body)) return { invalid: `<${root}> is empty` };
  return { root, body };
}

/**
 * A reply read as a data document of root `documentRoot` (by `readDocument`) or as an
 * Acknowledgement; any other root is an invalid payload. Generation and load documents are
 * GL_MarketDocuments; flows (A11) come in a Publication_MarketDocument.
 */
export function readMarketDocument<Result>(
  xml: string,
  readDocument: (body: PlainObject) => Result,
  documentRoot: 'GL_MarketDocument' | 'Publication_MarketDocument' = 'GL_MarketDocument',
): Result | AcknowledgementResult {
  const read = readXmlRoot(xml);
  if ('invalid' in read) return { kind: 'invalid-payload', detail: read.invalid };
  const { root, body } = read;
  if (root === documentRoot) return readDocument(body);
  if (root === 'Acknowledgement_MarketDocument') return readAcknowledgement(body);
  return { kind: 'invalid-payload', detail: `unexpected root element <${root}>` };
}

/** docs/upstreams.md §1.5: "no data" and refusals both come as an Acknowledgement, often HTTP 200. */
function readAcknowledgement(body: PlainObject): AcknowledgementResult {
  const reasons = listOf(body, 'Reason').filter(isPlainObject);
  if (reasons.length === 0) {
    return { kind: 'invalid-payload', detail: 'Acknowledgement_MarketDocument without a Reason' };
  }
  const stated = reasons.map((reason) => ({
    code: textOf(reason, 'code') ?? '',
    text: textOf(reason, 'text') ?? '',
  }));
  // 999 is ENTSO-E's catch-all code, also used for refused requests: the text tells "no data" apart.
  const noData = stated.find(
    ({ code, text }) => code === '999' && /^no matching data found/i.test(text),
  );
  if (noData) return { kind: 'no-data', message: noData.text };
  return {
    kind: 'upstream-error',
    code: stated.map(({ code }) => code).join(', '),
    message: stated.map(({ text }) => text).join('; '),
  };
}

export type CurveType = 'A01' | 'A03';

/** Where one TimeSeries belongs: its area (EIC), what it carries, and its curve type. */
export interface SeriesHeader {
  readonly area: string;
  /** What the series carries: its psrType, or the quantity of a document without one. */
  readonly key: string;
  readonly curveType: CurveType;
}

/**
 * A series' header once its quantity is checked: MW averaged over each interval (MAW), in a
 * curve of type A01 or A03 (absent: A01, the standard's default). Undefined, and the series
 * dropped and listed, otherwise.
 */
export function checkedHeader(
  series: PlainObject,
  place: { readonly area: string; readonly key: string },
  label: string,
  dropped: string[],
): SeriesHeader | undefined {
  const unit = textOf(series, 'quantity_Measure_Unit.name');
  const curveType = textOf(series, 'curveType') ?? 'A01';
  if (unit !== 'MAW') {
    dropped.push(`${label}: unit ${unit ?? '(none)'} is not MAW`);
    return undefined;
  }
  if (curveType !== 'A01' && curveType !== 'A03') {
    dropped.push(`${label}: curveType ${curveType}`);
    return undefined;
  }
  return { ...place, curveType };
}

/**
 * Places one TimeSeries of a document by its area and key; undefined for one it ignores, or one
 * it drops (listing why in `dropped`).
 */
export type SeriesHeaderReader = (
  series: PlainObject,
  label: string,
  dropped: string[],
) => SeriesHeader | undefined;

/**
 * A document of one type whose series are read as hourly means, by area and key (generation per
 * psrType, flows per direction): collectSeries, then `toHourlySeries`, so that a sub-hourly
 * series gives an hour only when every one of its intervals is there. `headerOf` places a series
 * (or drops it, listing why in `dropped`).
 */
export function readHourlyDocument(
  xml: string,
  documentRoot: 'GL_MarketDocument' | 'Publication_MarketDocument',
  documentType: string,
  headerOf: SeriesHeaderReader,
):
  | {
      readonly kind: 'hourly';
      readonly byArea: ReadonlyMap<string, ReadonlyMap<string, HourlySeries>>;
      readonly dropped: readonly string[];
    }
  | AcknowledgementResult {
  return readMarketDocument(
    xml,
    (body) => {
      const type = textOf(body, 'type');
      if (type !== documentType) {
        const detail = `${documentRoot} of type ${type ?? '(none)'}, not ${documentType}`;
        return { kind: 'invalid-payload', detail };
      }
      const dropped: string[] = [];
      const collected = collectSeries(
        body,
        dropped,
        (series, label) => headerOf(series, label, dropped),
        (period, curveType, label) => readPeriod(period, curveType, label, dropped),
      );
      const byArea = new Map(
        [...collected].map(([area, byKey]) => [
          area,
          new Map([...byKey].map(([key, intervals]) => [key, toHourlySeries(intervals)])),
        ]),
      );
      return { kind: 'hourly', byArea, dropped };
    },
    documentRoot,
  );
}

/**
 * The intervals of every TimeSeries of a document, by area and key: several TimeSeries and
 * Periods of one key merge on the time axis (docs/upstreams.md §1.3 step 1). Where two series
 * give one interval different values, neither can be trusted: the interval gets none (its hour
 * stays incomplete rather than publishing an arbitrary pick) and `dropped` lists the conflict.
 * `headerOf` places a series, or returns undefined for one it drops or ignores; `intervalsOf`
 * expands one of its Periods. Intervals come in the order first seen.
 */
export function collectSeries<Interval extends PowerInterval>(
  body: PlainObject,
  dropped: string[],
  headerOf: (series: PlainObject, label: string) => SeriesHeader | undefined,
  intervalsOf: (period: unknown, curveType: CurveType, label: string) => readonly Interval[],
): Map<string, Map<string, Interval[]>> {
  // area → key → interval start → interval, or null once two series conflict on it
  const collected = new Map<string, Map<string, Map<number, Interval | null>>>();
  listOf(body, 'TimeSeries').forEach((series, index) => {
    const label = `TimeSeries #${index + 1}`;
    if (!isPlainObject(series)) {
      dropped.push(`${label}: empty`);
      return;
    }
    const header = headerOf(series, label);
    if (header === undefined) return;
    const byKey = collected.get(header.area) ?? new Map<string, Map<number, Interval | null>>();
    collected.set(header.area, byKey);
    const byStart = byKey.get(header.key) ?? new Map<number, Interval | null>();
    byKey.set(header.key, byStart);
    for (const period of listOf(series, 'Period')) {
      for (const interval of intervalsOf(period, header.curveType, label)) {
        const earlier = byStart.get(interval.start);
        if (earlier === undefined) {
          byStart.set(interval.start, interval);
        } else if (earlier === null || earlier.mw !== interval.mw || earlier.end !== interval.end) {
          byStart.set(interval.start, null);
          dropped.push(
            `${label}: ${formatTs(interval.start)} conflicts with another ${header.key} series`,
          );
        }
      }
    }
  });
  return new Map(
    [...collected].map(([area, byKey]) => [
      area,
      new Map(
        [...byKey].map(([key, byStart]) => [
          key,
          [...byStart.values()].filter((interval) => interval !== null),
        ]),
      ),
    ]),
  );
}

/** A Period's time interval (epoch seconds), or undefined when unreadable. */
export function periodBounds(
  period: unknown,
): { readonly start: number; readonly end: number } | undefined {
  const timeInterval = childOf(period, 'timeInterval');
  const startMs = parseInstant(textOf(timeInterval, 'start') ?? '');
  const endMs = parseInstant(textOf(timeInterval, 'end') ?? '');
  if (startMs === undefined || endMs === undefined) return undefined;
  return { start: startMs / 1000, end: endMs / 1000 };
}

/**
 * Expands one Period into intervals. Positions count from 1 at THIS Period's start (§1.2).
 * A01: one Point per position, a missing position is missing data. A03: a Point's value lasts
 * until the next Point's position, the last one until the Period's end (§1.4).
 */
export function readPeriod(
  period: unknown,
  curveType: CurveType,
  label: string,
  dropped: string[],
): PowerInterval[] {
  const bounds = periodBounds(period);
  const resolutionText = textOf(period, 'resolution');
  const resolution = parseResolution(resolutionText ?? '');
  if (bounds === undefined || resolution === undefined) {
    dropped.push(`${label}: Period without a readable timeInterval or resolution`);
    return [];
  }
  const { start } = bounds;
  const slots = (bounds.end - start) / resolution;
  if (!Number.isInteger(slots) || slots <= 0) {
    dropped.push(`${label}: Period is not a whole number of ${resolutionText} steps`);
    return [];
  }

  // position → MW; undefined marks a Point whose quantity is unreadable (it still ends an A03 block)
  const points = new Map<number, number | undefined>();
  for (const point of listOf(period, 'Point')) {
    const positionText = textOf(point, 'position') ?? '';
    const position = /^\d+$/.test(positionText) ? Number(positionText) : 0;
    if (position < 1 || position > slots) {
      dropped.push(`${label}: Point position ${positionText || '(none)'} outside its Period`);
      continue;
    }
    if (points.has(position)) {
      dropped.push(`${label}: Point position ${position} repeated`);
      continue;
    }
    const quantity = parseDecimal(textOf(point, 'quantity'));
    if (quantity === undefined)
      dropped.push(`${label}: Point ${position} has no readable quantity`);
    points.set(position, quantity);
  }

  const positions = [...points.keys()].sort((a, b) => a - b);
  const intervals: PowerInterval[] = [];
  positions.forEach((position, index) => {
    const mw = points.get(position);
    if (mw === undefined) return;
    const lastPosition = curveType === 'A01' ? position : (positions[index + 1] ?? slots + 1) - 1;
    for (let p = position; p <= lastPosition; p += 1) {
      const intervalStart = start + (p - 1) * resolution;
      intervals.push({ start: intervalStart, end: intervalStart + resolution, mw });
    }
  });
  return intervals;
}

/** `PT15M`, `PT30M`, `PT60M` (also `PT1H`) → seconds. */
function parseResolution(text: string): number | undefined {
  const match = /^PT(\d+)([MH])$/.exec(text);
  if (!match) return undefined;
  const seconds = Number(match[1]) * (match[2] === 'H' ? 3600 : 60);
  return seconds > 0 ? seconds : undefined;
}

export function childOf(node: unknown, key: string): PlainObject | undefined {
  if (!isPlainObject(node)) return undefined;
  const child = node[key];
  return isPlainObject(child) ? child : undefined;
}

export function textOf(node: unknown, key: string): string | undefined {
  if (!isPlainObject(node)) return undefined;
  const value = node[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function listOf(node: unknown, key: string): unknown[] {
  if (!isPlainObject(node)) return [];
  const value = node[key];
  return Array.isArray(value) ? value : [];
}
