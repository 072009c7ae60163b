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
import {
  toHourlySeries,
  type GenerationByCode,
  type PowerInterval,
} from '../../core/generation.js';
import { isPlainObject, type PlainObject } from '../../core/payload.js';
import { formatTs } from '../../core/time.js';
import {
  childOf,
  listOf,
  readAcknowledgement,
  readPeriod,
  readXmlRoot,
  textOf,
  type CurveType,
} from './xml.js';

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

export function parseA75(xml: string): A75Result {
  const read = readXmlRoot(xml);
  if ('invalid' in read) return invalidPayload(read.invalid);
  const { root, body } = read;
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
