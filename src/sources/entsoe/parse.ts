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
import type { GenerationByCode } from '../../core/generation.js';
import {
  checkedHeader,
  childOf,
  readHourlyDocument,
  textOf,
  type SeriesHeaderReader,
  type AcknowledgementResult,
} from './xml.js';

export type A75Result =
  | {
      readonly kind: 'generation';
      /** EIC of the area → hourly generation per psrType. */
      readonly areas: ReadonlyMap<string, GenerationByCode>;
      readonly dropped: readonly string[];
    }
  | AcknowledgementResult;

/** The header of a generation series, or undefined for a consumption series or an unusable one. */
const readSeriesHeader: SeriesHeaderReader = (series, label, dropped) => {
  const inArea = textOf(series, 'inBiddingZone_Domain.mRID');
  const outArea = textOf(series, 'outBiddingZone_Domain.mRID');
  // An out-series is consumption by the units of that type (pumping): never generation (§1.2).
  if (outArea !== undefined && inArea === undefined) return undefined;
  const psrType = textOf(childOf(series, 'MktPSRType'), 'psrType');
  const drop = (problem: string): undefined => {
    dropped.push(`${label}: ${problem}`);
  };
  if (inArea === undefined || outArea !== undefined) return drop('needs exactly one bidding zone');
  if (psrType === undefined) return drop('no psrType');
  return checkedHeader(series, { area: inArea, key: psrType }, label, dropped);
};

export function parseA75(xml: string): A75Result {
  const read = readHourlyDocument(xml, 'GL_MarketDocument', 'A75', readSeriesHeader);
  if (read.kind !== 'hourly') return read;
  return { kind: 'generation', areas: read.byArea, dropped: read.dropped };
}
