import { EUROPE_NODES } from '../core/grid-graph/europe.js';
import { isEntsoeForecastDocument } from '../core/sources.js';
import { publishedMix } from './flow-model.js';
import { hourGap, isReported, type HourGap } from './mix-model.js';
import { hashString, noiseHex } from './noise.js';
import { formatMinute, textReply, type ReplyContext, type SourceReply } from './reply.js';
import {
  AsciiSink,
  glDocumentHead,
  hourWindow,
  invalidRequest,
  noMatchingData,
  periodHead,
  requestedPeriod,
} from './entsoe-document.js';
import { answerEntsoeFlows } from './entsoe-flows.js';
import { answerEntsoeForecast } from './entsoe-forecast.js';
import { EUROPE_BY_EIC } from './node-profiles.js';
import { EUROPE_DATA_START_MS, type EuropeProfile } from './zone-profiles.js';

/**
 * The ENTSO-E Transparency Platform's `GET /api` for document A75 (actual generation per
 * production type), answering in the element names and layout of the recorded documents in
 * test/fixtures/upstreams/europe-tso (docs/upstreams.md §1).
 */

export interface EntsoeContext extends ReplyContext {
  /** When set, the only token accepted; otherwise any non-empty token is. */
  readonly securityToken?: string;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const PSR_TYPE = /^B(0[1-9]|1\d|2[0-5])$/;
const DEPENDENCY_TABLES = 'Please check you request against dependency tables.';
/**
 * Areas of the flow graph that the platform knows but publishes no generation for (boundary
 * nodes: docs/upstreams.md §9.3): their A75 is "No matching data".
 */
const WITHOUT_GENERATION: ReadonlySet<string> = new Set(
  EUROPE_NODES.flatMap((node) =>
    node.role === 'boundary' && node.upstreamId !== null ? [node.upstreamId] : [],
  ),
);

export function answerEntsoe(query: URLSearchParams, context: EntsoeContext): SourceReply {
  const token = query.get('securityToken');
  if (!token || (context.securityToken !== undefined && token !== context.securityToken)) {
    return textReply(401, 'text/html', '<html><body><h1>401 Unauthorized</h1></body></html>');
  }
  const documentType = query.get('documentType');
  // Load documents name the area as the consumer side (docs/upstreams.md §1.7); the real reply
  // to a missing one is recorded in test/fixtures/upstreams/europe-tso.
  if (documentType === 'A65' && !query.get('outBiddingZone_Domain')) {
    return invalidRequest(
      context,
      'Mandatory parameter OutBiddingZone_Domain is missing or is empty.',
    );
  }
  // Physical flows have no processType and name both areas (docs/upstreams.md §9.1).
  if (documentType === 'A11') return answerEntsoeFlows(query, context);
  const domain = documentType === 'A65' ? 'outBiddingZone_Domain' : 'in_Domain';
  for (const name of ['documentType', 'processType', domain, 'periodStart', 'periodEnd']) {
    if (!query.get(name)) return invalidRequest(context, `Mandatory parameter ${name} is missing.`);
  }
  const processType = query.get('processType');
  if (isEntsoeForecastDocument(documentType)) {
    return answerEntsoeForecast(documentType, query, context);
  }
  if (documentType !== 'A75' || processType !== 'A16') {
    return invalidRequest(
      context,
      `The combination of [documentType=${documentType}, processType=${processType}] is not ` +
        `valid or not served. ${DEPENDENCY_TABLES}`,
    );
  }
  const eic = query.get('in_Domain') as string;
  const profile = EUROPE_BY_EIC.get(eic);
  const period = requestedPeriod(query, context);
  if (!profile) {
    if (!WITHOUT_GENERATION.has(eic)) {
      return invalidRequest(
        context,
        `Input parameter in_Domain=${eic} is not valid. ${DEPENDENCY_TABLES}`,
      );
    }
    if ('status' in period) return period;
    return noMatchingData(context, eic, hourWindow(period).text);
  }
  if ('status' in period) return period;
  const { start, end } = period;
  const psrType = query.get('psrType');
  if (psrType !== null && !PSR_TYPE.test(psrType)) {
    return invalidRequest(context, `psrType ${psrType} is not valid for this area.`);
  }
  return generationDocument(profile, start, end, psrType, context);
}

function generationDocument(
  profile: EuropeProfile,
  requestedStart: number,
  requestedEnd: number,
  psrType: string | null,
  context: EntsoeContext,
): SourceReply {
  const stepMs = profile.resolution === 'PT15M' ? 15 * MINUTE_MS : HOUR_MS;
  const windowStart = Math.floor(requestedStart / stepMs) * stepMs;
  const windowEnd = Math.ceil(requestedEnd / stepMs) * stepMs;
  const publishedUntil = Math.floor((context.nowMs - profile.publicationLagMs) / stepMs) * stepMs;
  const dataStart = Math.max(windowStart, EUROPE_DATA_START_MS);
  const dataEnd = Math.min(windowEnd, publishedUntil);
  const fuelIndexes = profile.fuels
    .map((fuel, index) => (psrType === null || fuel.code === psrType ? index : -1))
    .filter((index) => index >= 0);
  const window = `${formatMinute(windowStart)}/${formatMinute(windowEnd)}`;
  if (dataEnd <= dataStart || fuelIndexes.length === 0) {
    return noMatchingData(context, profile.eic, window);
  }

  const count = (dataEnd - dataStart) / stepMs;
  const mix = publishedMix(profile, context.seed, dataStart, stepMs, count);
  const gaps = hourGaps(profile, context.seed, dataStart, dataEnd);
  const firstHour = Math.floor(dataStart / HOUR_MS);
  const decimals = profile.resolution === 'PT15M' ? 100 : 1;
  const id = noiseHex(context.seed, profile.zoneKey, hashString(`${window}@${context.nowMs}`));
  const sink = new AsciiSink(4096 + count * fuelIndexes.length * 90);
  sink.write(
    glDocumentHead({
      declaration: 'utf-8',
      mRID: id,
      type: 'A75',
      processType: 'A16',
      createdMs: context.nowMs,
      startMs: windowStart,
      endMs: windowEnd,
    }),
  );
  let seriesCount = 0;
  // Per sample of the fuel at hand: its quantity as published, and where it goes.
  const quantities = new Float64Array(count);
  const directions = new Uint8Array(count);

  for (const fuelIndex of fuelIndexes) {
    const fuel = profile.fuels[fuelIndex];
    const values = mix[fuelIndex];
    if (!fuel || !values) continue;
    const splitByDirection = fuel.code === 'B10' && profile.pumpingAsConsumption;
    for (let i = 0; i < count; i++) {
      const hour = Math.floor((dataStart + i * stepMs) / HOUR_MS) - firstHour;
      const value = values[i] as number;
      if (!isReported(gaps[hour] ?? null, fuelIndex)) {
        directions[i] = UNREPORTED;
        continue;
      }
      const pumping = splitByDirection && value < 0;
      directions[i] = pumping ? OUT_OF_AREA : INTO_AREA;
      // Pumping is published as a positive consumption; other small negatives are kept as sent.
      let published = value;
      if (fuel.code === 'B10') published = pumping ? -value : Math.max(value, 0);
      quantities[i] = Math.round(published * decimals) / decimals;
    }
    // Runs: maximal stretches of reported samples with one direction.
    const runs: { first: number; end: number; direction: number }[] = [];
    for (let i = 0; i < count; i++) {
      const direction = directions[i] as number;
      if (direction === UNREPORTED) continue;
      const last = runs.at(-1);
      if (last && last.end === i && last.direction === direction) last.end = i + 1;
      else runs.push({ first: i, end: i + 1, direction });
    }
    if (runs.length === 0) continue;

    const openSeries = (direction: number): void => {
      seriesCount++;
      sink.write(timeSeriesHead(seriesCount, profile, fuel.code, direction === OUT_OF_AREA));
    };
    const writePeriod = (first: number, end: number): void => {
      sink.write(
        periodHead(dataStart + first * stepMs, dataStart + end * stepMs, profile.resolution),
      );
      for (let i = first; i < end; i++) {
        if (directions[i] === UNREPORTED) continue;
        // A03 sends a Point only where the value changes (docs/upstreams.md §1.4); A01 sends all.
        if (profile.curveType === 'A03' && i > first && quantities[i] === quantities[i - 1])
          continue;
        sink.write(
          `\t\t\t<Point>\n\t\t\t\t<position>${i - first + 1}</position>\n\t\t\t\t<quantity>${quantities[i]}</quantity>\n\t\t\t</Point>\n`,
        );
      }
      sink.write('\t\t</Period>\n');
    };

    if (splitByDirection) {
      // Like the IT-CSUD recording: every stretch of generating or pumping is its own TimeSeries.
      for (const run of runs) {
        openSeries(run.direction);
        writePeriod(run.first, run.end);
        sink.write('\t</TimeSeries>\n');
      }
    } else if (profile.curveType === 'A03') {
      // An A03 Period cannot skip positions (a gap would read as "unchanged"), so gaps split it.
      openSeries(INTO_AREA);
      for (const run of runs) writePeriod(run.first, run.end);
      sink.write('\t</TimeSeries>\n');
    } else {
      // A01: one Period; an unreported position is simply absent, as in real documents.
      openSeries(INTO_AREA);
      writePeriod(
        (runs[0] as (typeof runs)[number]).first,
        (runs.at(-1) as (typeof runs)[number]).end,
      );
      sink.write('\t</TimeSeries>\n');
    }
  }
  if (seriesCount === 0) return noMatchingData(context, profile.eic, window);
  sink.write('</GL_MarketDocument>');
  return { status: 200, headers: { 'content-type': 'text/xml' }, body: sink.toBuffer() };
}

const UNREPORTED = 0;
const INTO_AREA = 1;
const OUT_OF_AREA = 2;

export function timeSeriesHead(
  mRID: number,
  profile: Pick<EuropeProfile, 'eic' | 'curveType'>,
  psrType: string,
  outOfArea: boolean,
): string {
  const domain = outOfArea ? 'outBiddingZone_Domain.mRID' : 'inBiddingZone_Domain.mRID';
  return `\t<TimeSeries>
\t\t<mRID>${mRID}</mRID>
\t\t<businessType>A01</businessType>
\t\t<objectAggregation>A08</objectAggregation>
\t\t<${domain} codingScheme="A01">${profile.eic}</${domain}>
\t\t<quantity_Measure_Unit.name>MAW</quantity_Measure_Unit.name>
\t\t<curveType>${profile.curveType}</curveType>
\t\t<MktPSRType>
\t\t\t<psrType>${psrType}</psrType>
\t\t</MktPSRType>
`;
}

function hourGaps(profile: EuropeProfile, seed: number, startMs: number, endMs: number): HourGap[] {
  const first = Math.floor(startMs / HOUR_MS);
  const last = Math.ceil(endMs / HOUR_MS);
  const gaps: HourGap[] = [];
  for (let hour = first; hour < last; hour++) gaps.push(hourGap(profile, seed, hour));
  return gaps;
}
