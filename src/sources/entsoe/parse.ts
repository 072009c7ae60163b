/**
 * Pure parser of ENTSO-E Transparency Platform replies to document type A75 (actual generation per
 * production type). Format and quirks: docs/upstreams.md §1.2–1.5.
 *
 * Stable contract for the fetching side (`index.ts`):
 *
 *     parseA75(xml: string): A75Result
 *
 *   - `generation`: hourly generation per psrType for every area (`inBiddingZone_Domain.mRID`,
 *     an EIC) in the document, values as published (storage codes included: the method excludes
 *     them), plus `dropped`, one line per record that could not be used.
 *   - `no-data`: the Acknowledgement "No matching data found" (reason 999). Not an error.
 *   - `upstream-error`: any other Acknowledgement; permanent, retrying the same request won't help.
 *   - `invalid-payload`: not well-formed XML (an HTML error page, a truncated body) or not an A75
 *     GL_MarketDocument.
 *
 * The parser never throws on a bad payload. XML is turned into plain objects first; the envelope is
 * checked strictly, single TimeSeries, Periods and Points are dropped and listed instead of failing
 * the document.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import {
  toHourlySeries,
  type GenerationByCode,
  type PowerInterval,
} from '../../core/generation.js';
import { isPlainObject, parseDecimal, type PlainObject } from '../../core/payload.js';
import { formatTs, parseInstant } from '../../core/time.js';

export type A75Result =
  | {
      readonly kind: 'generation';
      /** EIC of the area → hourly generation per psrType. */
      readonly areas: ReadonlyMap<string, GenerationByCode>;
      readonly dropped: readonly string[];
    }
  | { readonly kind: 'no-data'; readonly message: string }
  | { readonly kind: 'upstream-error'; readonly code: string; readonly message: string }
  | { readonly kind: 'invalid-payload'; readonly detail: string };

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
});

export function parseA75(xml: string): A75Result {
  const validation = XMLValidator.validate(xml);
  if (validation !== true) {
    const { msg, line } = validation.err;
    return invalidPayload(`not well-formed XML (line ${line}): ${msg}`);
  }
  let document: unknown;
  try {
    document = xmlParser.parse(xml);
  } catch (error) {
    return invalidPayload(`XML could not be read: ${String(error)}`);
  }
  if (!isPlainObject(document)) return invalidPayload('no root element');
  const roots = Object.keys(document);
  const [root] = roots;
  if (root === undefined || roots.length > 1) {
    return invalidPayload(`expected one root element, found ${roots.length}`);
  }
  const body = document[root];
  if (!isPlainObject(body)) return invalidPayload(`<${root}> is empty`);
  switch (root) {
    case 'GL_MarketDocument':
      return readGenerationDocument(body);
    case 'Acknowledgement_MarketDocument':
      return readAcknowledgement(body);
    default:
      return invalidPayload(`unexpected root element <${root}>`);
  }
}

function invalidPayload(detail: string): A75Result {
  return { kind: 'invalid-payload', detail };
}

/** docs/upstreams.md §1.5: "no data" and refusals both come as an Acknowledgement, often HTTP 200. */
function readAcknowledgement(body: PlainObject): A75Result {
  const reasons = listOf(body, 'Reason').filter(isPlainObject);
  if (reasons.length === 0) {
    return invalidPayload('Acknowledgement_MarketDocument without a Reason');
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

function readGenerationDocument(body: PlainObject): A75Result {
  const type = textOf(body, 'type');
  if (type !== 'A75') {
    return invalidPayload(`GL_MarketDocument of type ${type ?? '(none)'}, not A75`);
  }

  const dropped: string[] = [];
  // area → psrType → interval start → interval: several TimeSeries and Periods of one type merge
  // on the time axis (docs/upstreams.md §1.3 step 1).
  const collected = new Map<string, Map<string, Map<number, PowerInterval>>>();
  listOf(body, 'TimeSeries').forEach((series, index) => {
    const label = `TimeSeries #${index + 1}`;
    if (!isPlainObject(series)) {
      dropped.push(`${label}: empty`);
      return;
    }
    const generation = readSeriesHeader(series, label, dropped);
    if (generation === undefined) return;
    const byType = collected.get(generation.area) ?? new Map<string, Map<number, PowerInterval>>();
    collected.set(generation.area, byType);
    const byStart = byType.get(generation.psrType) ?? new Map<number, PowerInterval>();
    byType.set(generation.psrType, byStart);
    for (const period of listOf(series, 'Period')) {
      for (const interval of readPeriod(period, generation.curveType, label, dropped)) {
        const earlier = byStart.get(interval.start);
        if (earlier === undefined) {
          byStart.set(interval.start, interval);
        } else if (earlier.mw !== interval.mw || earlier.end !== interval.end) {
          // Two different values for one interval: neither can be trusted, so the interval gets
          // none and its hour stays incomplete rather than publishing an arbitrary pick.
          byStart.set(interval.start, CONFLICT);
          dropped.push(
            `${label}: ${formatTs(interval.start)} conflicts with another ${generation.psrType} series`,
          );
        }
      }
    }
  });

  const areas = new Map<string, GenerationByCode>();
  for (const [area, byType] of collected) {
    areas.set(
      area,
      new Map(
        [...byType].map(([psrType, byStart]) => [
          psrType,
          toHourlySeries([...byStart.values()].filter((interval) => interval !== CONFLICT)),
        ]),
      ),
    );
  }
  return { kind: 'generation', areas, dropped };
}

/** Marks an interval start that two series gave different values. */
const CONFLICT: PowerInterval = { start: NaN, end: NaN, mw: NaN };

type CurveType = 'A01' | 'A03';

interface GenerationSeriesHeader {
  readonly area: string;
  readonly psrType: string;
  readonly curveType: CurveType;
}

/** The header of a generation series, or undefined for a consumption series or an unusable one. */
function readSeriesHeader(
  series: PlainObject,
  label: string,
  dropped: string[],
): GenerationSeriesHeader | undefined {
  const inArea = textOf(series, 'inBiddingZone_Domain.mRID');
  const outArea = textOf(series, 'outBiddingZone_Domain.mRID');
  // An out-series is consumption by the units of that type (pumping): never generation (§1.2).
  if (outArea !== undefined && inArea === undefined) return undefined;
  const psrType = textOf(childOf(series, 'MktPSRType'), 'psrType');
  const unit = textOf(series, 'quantity_Measure_Unit.name');
  // Absent curveType: the standard's default, fixed-size blocks.
  const curveType = textOf(series, 'curveType') ?? 'A01';
  const drop = (problem: string): undefined => {
    dropped.push(`${label}: ${problem}`);
  };
  if (inArea === undefined || outArea !== undefined) return drop('needs exactly one bidding zone');
  if (psrType === undefined) return drop('no psrType');
  if (unit !== 'MAW') return drop(`unit ${unit ?? '(none)'} is not MAW`);
  if (curveType !== 'A01' && curveType !== 'A03') return drop(`curveType ${curveType}`);
  return { area: inArea, psrType, curveType };
}

/**
 * Expands one Period into intervals. Positions count from 1 at THIS Period's start (§1.2).
 * A01: one Point per position, a missing position is missing data. A03: a Point's value lasts
 * until the next Point's position, the last one until the Period's end (§1.4).
 */
function readPeriod(
  period: unknown,
  curveType: CurveType,
  label: string,
  dropped: string[],
): PowerInterval[] {
  const timeInterval = childOf(period, 'timeInterval');
  const startMs = parseInstant(textOf(timeInterval, 'start') ?? '');
  const endMs = parseInstant(textOf(timeInterval, 'end') ?? '');
  const resolutionText = textOf(period, 'resolution');
  const resolution = parseResolution(resolutionText ?? '');
  if (startMs === undefined || endMs === undefined || resolution === undefined) {
    dropped.push(`${label}: Period without a readable timeInterval or resolution`);
    return [];
  }
  const start = startMs / 1000;
  const slots = (endMs / 1000 - start) / resolution;
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

function childOf(node: unknown, key: string): PlainObject | undefined {
  if (!isPlainObject(node)) return undefined;
  const child = node[key];
  return isPlainObject(child) ? child : undefined;
}

function textOf(node: unknown, key: string): string | undefined {
  if (!isPlainObject(node)) return undefined;
  const value = node[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function listOf(node: unknown, key: string): unknown[] {
  if (!isPlainObject(node)) return [];
  const value = node[key];
  return Array.isArray(value) ? value : [];
}
