import { EUROPE_BORDERS } from '../core/grid-graph/europe.js';
import {
  AsciiSink,
  formatSecond,
  hourWindow,
  invalidRequest,
  noMatchingItem,
  requestedPeriod,
} from './entsoe-document.js';
import { netFlows, simulatedBorders } from './flow-model.js';
import { hashString, NOISE_CHANNEL, noiseHex, unitNoise } from './noise.js';
import { formatMinute, type ReplyContext, type SourceReply } from './reply.js';
import { EUROPE_DATA_START_MS } from './zone-profiles.js';

/**
 * ENTSO-E document A11, cross-border physical flows (docs/upstreams.md §9.1-9.2), for every
 * (in, out) pair of EICs the European graph queries (src/core/grid-graph/europe.ts), from the
 * flow model: the quantity is what flows out of `out_Domain` into `in_Domain`, >= 0, so of the
 * two directions of a link at most one is above 0 in an hour, and a border of two links splits
 * its flow between them. Any other pair gets "No matching data", as on the platform.
 *
 * In the recordings' layout (test/fixtures/upstreams/europe-tso/*A11*): a
 * Publication_MarketDocument whose `period.timeInterval` echoes the request, one TimeSeries per
 * stretch without a gap (about one hour in a thousand is missing, in both directions, as in the
 * DK1/GB recording), PT60M A01 integers; the links of the DE node are PT15M A03 with decimals
 * from the 15-minute day-ahead market's start (1 October 2025), the quarters of an hour moving
 * around the hour's mean. Published one to two hours after the hour, fixed per link.
 */

interface LinkDirection {
  /** Index of the border in `simulatedBorders('europe')`. */
  readonly border: number;
  /** +1 when this direction is the border's a -> b, -1 for b -> a. */
  readonly sign: 1 | -1;
  /** The link's share of its border's flow. */
  readonly share: number;
  /** Hash of the link, the same for its two directions. */
  readonly linkKey: number;
  readonly quarterHourly: boolean;
  readonly publicationLagMs: number;
}

const PUBLICATION_NAMESPACE = 'urn:iec62325.351:tc57wg16:451-3:publicationdocument:7:0';
const PLATFORM_EIC = '10X1001A1001A450';
const DATA_ITEM = 'NET_CROSS_BORDER_PHYSICAL_FLOWS_R3 [12.1.G]';
const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
// The day-ahead market moved to 15-minute products for delivery on 1 October 2025 (CEST).
const QUARTER_HOURLY_FROM_MS = Date.UTC(2025, 8, 30, 22);
// DE-LU, Germany, Luxembourg: the areas of the DE node, whose borders went quarter-hourly.
const QUARTER_HOURLY_AREAS: ReadonlySet<string> = new Set([
  '10Y1001A1001A82H',
  '10Y1001A1001A83F',
  '10YLU-CEGEDEL-NQ',
]);
const GAP_RATE = 1 / 1000;
// Quarters of an hour around its mean: they add up to four times it.
const QUARTER_SWING = [-0.015, -0.005, 0.005, 0.015];

/** (out EIC, in EIC) -> what the direction carries. */
const DIRECTIONS: ReadonlyMap<string, LinkDirection> = (() => {
  const borderIndex = new Map(simulatedBorders('europe').map(({ a, b }, i) => [`${a} ${b}`, i]));
  const directions = new Map<string, LinkDirection>();
  for (const { a, b, links } of EUROPE_BORDERS) {
    const border = borderIndex.get(`${a} ${b}`);
    if (border === undefined) throw new Error(`A11: border ${a}-${b} is not simulated`);
    // Two links share a border 2:1 (the first listed carries more).
    const total = links.reduce((sum, _, k) => sum + 1 / (k + 1), 0);
    links.forEach(({ eicA, eicB }, k) => {
      const linkKey = hashString(`${eicA} ${eicB}`);
      const common = {
        border,
        share: 1 / (k + 1) / total,
        linkKey,
        quarterHourly: QUARTER_HOURLY_AREAS.has(eicA) || QUARTER_HOURLY_AREAS.has(eicB),
        publicationLagMs: (60 + 15 * (linkKey % 5)) * MINUTE_MS,
      };
      for (const [key, sign] of [
        [directionKey(eicA, eicB), 1],
        [directionKey(eicB, eicA), -1],
      ] as const) {
        if (directions.has(key)) throw new Error(`A11: ${key} queried for two links`);
        directions.set(key, { ...common, sign });
      }
    });
  }
  return directions;
})();

function directionKey(outEic: string, inEic: string): string {
  return `${outEic} ${inEic}`;
}

export function answerEntsoeFlows(query: URLSearchParams, context: ReplyContext): SourceReply {
  for (const name of ['in_Domain', 'out_Domain', 'periodStart', 'periodEnd']) {
    if (!query.get(name)) return invalidRequest(context, `Mandatory parameter ${name} is missing.`);
  }
  const inEic = query.get('in_Domain') as string;
  const outEic = query.get('out_Domain') as string;
  const period = requestedPeriod(query, context);
  if ('status' in period) return period;
  const window = hourWindow(period);
  const noData = () => noMatchingItem(context, `${DATA_ITEM} (${inEic}, ${outEic})`, window.text);
  const direction = DIRECTIONS.get(directionKey(outEic, inEic));
  if (!direction) return noData();
  const publishedUntil =
    Math.floor((context.nowMs - direction.publicationLagMs) / HOUR_MS) * HOUR_MS;
  const dataStart = Math.max(window.startMs, EUROPE_DATA_START_MS);
  const dataEnd = Math.min(window.endMs, publishedUntil);
  if (dataEnd <= dataStart) return noData();

  const hours = (dataEnd - dataStart) / HOUR_MS;
  const values = new Float64Array(hours);
  const missing = new Uint8Array(hours);
  for (let i = 0; i < hours; i++) {
    const hourStart = dataStart + i * HOUR_MS;
    const hour = hourStart / HOUR_MS;
    if (unitNoise(context.seed, direction.linkKey, NOISE_CHANNEL.flowGap, hour) < GAP_RATE) {
      missing[i] = 1;
      continue;
    }
    const flow = netFlows('europe', context.seed, hourStart)[direction.border] as number;
    values[i] = Math.max(0, direction.sign * direction.share * flow);
  }

  const sink = new AsciiSink(2048 + hours * 200);
  sink.write(
    publicationDocumentHead(
      noiseHex(
        context.seed,
        hashString(directionKey(outEic, inEic)),
        hashString(`${window.text}@${context.nowMs}`),
      ),
      context.nowMs,
      window.startMs,
      window.endMs,
    ),
  );
  let seriesCount = 0;
  // One TimeSeries per stretch of hours without a gap and with one resolution.
  for (let first = 0; first < hours;) {
    if (missing[first]) {
      first++;
      continue;
    }
    const quarterHourly = isQuarterHourly(direction, dataStart + first * HOUR_MS);
    let end = first + 1;
    while (
      end < hours &&
      !missing[end] &&
      isQuarterHourly(direction, dataStart + end * HOUR_MS) === quarterHourly
    ) {
      end++;
    }
    seriesCount++;
    sink.write(seriesHead(seriesCount, inEic, outEic, quarterHourly ? 'A03' : 'A01'));
    const periodStart = dataStart + first * HOUR_MS;
    const periodEnd = dataStart + end * HOUR_MS;
    sink.write(periodHead(periodStart, periodEnd, quarterHourly ? 'PT15M' : 'PT60M'));
    if (quarterHourly) {
      writeQuarters(
        sink,
        values.subarray(first, end),
        direction.linkKey,
        context.seed,
        periodStart,
      );
    } else {
      for (let i = first; i < end; i++) {
        writePoint(sink, i - first + 1, Math.round(values[i] as number));
      }
    }
    sink.write('\t\t\t</Period>\n\t</TimeSeries>\n');
    first = end;
  }
  if (seriesCount === 0) return noData();
  sink.write('</Publication_MarketDocument>');
  return { status: 200, headers: { 'content-type': 'text/xml' }, body: sink.toBuffer() };
}

function isQuarterHourly(direction: LinkDirection, hourStartMs: number): boolean {
  return direction.quarterHourly && hourStartMs >= QUARTER_HOURLY_FROM_MS;
}

/**
 * Four quarters per hour around the hour's mean, with two decimals; A03 sends a Point only where
 * the value changes (docs/upstreams.md §1.4), so an hour without flow this way costs nothing.
 */
function writeQuarters(
  sink: AsciiSink,
  hourly: Float64Array,
  linkKey: number,
  seed: number,
  periodStartMs: number,
): void {
  let previous = Number.NaN;
  for (let i = 0; i < hourly.length; i++) {
    const hour = periodStartMs / HOUR_MS + i;
    const rising = unitNoise(seed, linkKey, NOISE_CHANNEL.flowGap + 1, hour) < 0.5 ? 1 : -1;
    for (let q = 0; q < 4; q++) {
      const swing = rising * (QUARTER_SWING[q] as number);
      const quantity = Math.round((hourly[i] as number) * (1 + swing) * 100) / 100;
      if (quantity !== previous) writePoint(sink, i * 4 + q + 1, quantity);
      previous = quantity;
    }
  }
}

function writePoint(sink: AsciiSink, position: number, quantity: number): void {
  sink.write(
    `\t\t\t\t\t<Point>\n\t\t\t\t\t\t<position>${position}</position>\n\t\t\t\t\t\t<quantity>${quantity}</quantity>\n\t\t\t\t\t</Point>\n`,
  );
}

/** Up to the first TimeSeries, as the recordings word and indent it. */
function publicationDocumentHead(
  mRID: string,
  createdMs: number,
  startMs: number,
  endMs: number,
): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<Publication_MarketDocument xmlns="${PUBLICATION_NAMESPACE}">
\t<mRID>${mRID}</mRID>
\t<revisionNumber>1</revisionNumber>
\t<type>A11</type>
\t<sender_MarketParticipant.mRID codingScheme="A01">${PLATFORM_EIC}</sender_MarketParticipant.mRID>
\t<sender_MarketParticipant.marketRole.type>A32</sender_MarketParticipant.marketRole.type>
\t<receiver_MarketParticipant.mRID codingScheme="A01">${PLATFORM_EIC}</receiver_MarketParticipant.mRID>
\t<receiver_MarketParticipant.marketRole.type>A33</receiver_MarketParticipant.marketRole.type>
\t<createdDateTime>${formatSecond(createdMs)}</createdDateTime>
\t<period.timeInterval>
\t\t<start>${formatMinute(startMs)}</start>
\t\t<end>${formatMinute(endMs)}</end>
\t</period.timeInterval>
`;
}

function seriesHead(mRID: number, inEic: string, outEic: string, curveType: string): string {
  return `\t<TimeSeries>
\t\t<mRID>${mRID}</mRID>
\t\t<businessType>A66</businessType>
\t\t<in_Domain.mRID codingScheme="A01">${inEic}</in_Domain.mRID>
\t\t<out_Domain.mRID codingScheme="A01">${outEic}</out_Domain.mRID>
\t\t<quantity_Measure_Unit.name>MAW</quantity_Measure_Unit.name>
\t\t<curveType>${curveType}</curveType>
`;
}

/** A Period indented one level deeper than in A75, as in the A11 recordings. */
function periodHead(startMs: number, endMs: number, resolution: string): string {
  return `\t\t\t<Period>
\t\t\t\t<timeInterval>
\t\t\t\t\t<start>${formatMinute(startMs)}</start>
\t\t\t\t\t<end>${formatMinute(endMs)}</end>
\t\t\t\t</timeInterval>
\t\t\t\t<resolution>${resolution}</resolution>
`;
}
