/**
 * Pure parser of ENTSO-E replies to document type A11, cross-border physical flows
 * (docs/upstreams.md §9.1-9.2).
 *
 *     parseA11(xml: string): A11Result
 *
 *   - `flows`: the hourly mean MW flowing out of one area into another, per direction: out EIC
 *     -> in EIC -> hour start -> MW, as published (>= 0). Every TimeSeries and Period of a
 *     direction merges on the time axis (a document splits at its gaps; an hour in no series is
 *     absent, never 0); PT15M (or any resolution dividing the hour) is averaged into hours, an
 *     hour with a missing interval left without a value; A03 curves are expanded first. Plus
 *     `dropped`, one line per record that could not be used.
 *   - `no-data`, `upstream-error`, `invalid-payload`: as for A75 (src/sources/entsoe/parse.ts).
 *     "No matching data" is also what a pair of codes the platform does not publish gets.
 *
 * A11 differs from A75 in its envelope: a Publication_MarketDocument, `in_Domain.mRID` and
 * `out_Domain.mRID` on every series (the quantity flows from out into in), no processType. The
 * parser never throws on a bad payload.
 */
import type { HourlySeries } from '../../core/generation.js';
import {
  checkedHeader,
  readHourlyDocument,
  textOf,
  type AcknowledgementResult,
  type SeriesHeaderReader,
} from './xml.js';

export type A11Result =
  | {
      readonly kind: 'flows';
      /** Out area (EIC) -> in area (EIC) -> hourly MW from out into in. */
      readonly directions: ReadonlyMap<string, ReadonlyMap<string, HourlySeries>>;
      readonly dropped: readonly string[];
    }
  | AcknowledgementResult;

/** A flow series is placed by its out area, and keyed by its in area. */
const readSeriesHeader: SeriesHeaderReader = (series, label, dropped) => {
  const inArea = textOf(series, 'in_Domain.mRID');
  const outArea = textOf(series, 'out_Domain.mRID');
  if (inArea === undefined || outArea === undefined || inArea === outArea) {
    dropped.push(`${label}: needs an in_Domain and another out_Domain`);
    return undefined;
  }
  return checkedHeader(series, { area: outArea, key: inArea }, label, dropped);
};

export function parseA11(xml: string): A11Result {
  const read = readHourlyDocument(xml, 'Publication_MarketDocument', 'A11', readSeriesHeader);
  if (read.kind !== 'hourly') return read;
  return { kind: 'flows', directions: read.byArea, dropped: read.dropped };
}
