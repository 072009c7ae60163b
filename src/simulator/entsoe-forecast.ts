import {
  AsciiSink,
  acknowledgement,
  glDocumentHead,
  invalidRequest,
  requestedPeriod,
  periodHead,
} from './entsoe-document.js';
import type { EntsoeForecastDocument } from '../core/sources.js';
import { forecastError, marketDayStart, nextMarketDayStart } from './forecast-model.js';
import { publishedMix } from './flow-model.js';
import { computeDemand } from './mix-model.js';
import { CHANNELS_PER_FUEL, hashString, NOISE_CHANNEL, noiseHex } from './noise.js';
import { formatMinute, type ReplyContext, type SourceReply } from './reply.js';
import { EUROPE_BY_EIC } from './node-profiles.js';
import { EUROPE_DATA_START_MS, type EuropeProfile } from './zone-profiles.js';

/**
 * ENTSO-E day-ahead forecast documents (docs/upstreams.md §1.7, the recordings of
 * test/fixtures/upstreams/europe-tso): A69 wind and solar (B16, B18, B19), A65 total load (area
 * as `outBiddingZone_Domain`), A71 scheduled generation (an in-series, and an out-series of
 * scheduled pumping where the zone publishes pumping as consumption), processType A01.
 *
 * As the real platform: every whole market day (CET/CEST, 23 to 25 hours) the window touches, one
 * TimeSeries per day and type, the zone's own resolution and curve type. A market day's forecast
 * is published six hours before the day starts; days not published yet are not in the reply.
 * Values are the synthetic actuals of the same model (publishedMix, computeDemand) plus the
 * persistent errors of forecast-model.ts, issued at the publication.
 */

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const PUBLISHED_BEFORE_DAY_MS = 6 * HOUR_MS;

const WIND_SOLAR = ['B16', 'B18', 'B19'];
const ITEMS: Readonly<Record<string, string>> = {
  A69: 'Generation Forecasts for Wind and Solar [14.1.D]',
  A65: 'Total Load Forecast - Day Ahead [6.1.B]',
  A71: 'Generation Forecast - Day ahead [14.1.C]',
};
const OTHER_PROCESSES: Readonly<Record<string, string>> = {
  A18: 'Current Generation Forecasts for Wind and Solar [14.1.D]',
  A40: 'Intraday Generation Forecasts for Wind and Solar [14.1.D]',
};

export function answerEntsoeForecast(
  documentType: EntsoeForecastDocument,
  query: URLSearchParams,
  context: ReplyContext,
): SourceReply {
  const processType = query.get('processType') as string;
  const domain = documentType === 'A65' ? 'outBiddingZone_Domain' : 'in_Domain';
  const eic = query.get(domain) as string;
  const profile = EUROPE_BY_EIC.get(eic);
  if (!profile) {
    return invalidRequest(context, `Input parameter ${domain}=${eic} is not valid.`);
  }
  const period = requestedPeriod(query, context);
  if ('status' in period) return period;
  const { start, end } = period;
  const window = `${formatMinute(start)}/${formatMinute(end)}`;
  if (processType !== 'A01') {
    // Like CZ 2016: a day-ahead forecast exists, the current and intraday ones do not.
    const item = documentType === 'A69' ? OTHER_PROCESSES[processType] : undefined;
    if (item === undefined) {
      return invalidRequest(
        context,
        `The combination of [documentType=${documentType}, processType=${processType}] is not ` +
          'valid or not served. Please check you request against dependency tables.',
      );
    }
    return noData(context, item, eic, window);
  }
  const psrType = query.get('psrType');
  const days: { start: number; end: number }[] = [];
  for (let day = marketDayStart(start); day < end; day = nextMarketDayStart(day)) {
    if (day < EUROPE_DATA_START_MS) continue;
    if (day - PUBLISHED_BEFORE_DAY_MS > context.nowMs) break;
    days.push({ start: day, end: nextMarketDayStart(day) });
  }
  const body =
    days.length === 0 ? undefined : forecastDocument(documentType, profile, days, psrType, context);
  if (body === undefined) return noData(context, ITEMS[documentType] as string, eic, window);
  return { status: 200, headers: { 'content-type': 'text/xml' }, body };
}

function noData(context: ReplyContext, item: string, eic: string, window: string): SourceReply {
  return acknowledgement(
    200,
    context,
    `No matching data found for Data item ${item} (${eic}) and interval ${window}.`,
  );
}

/** A forecast TimeSeries up to its Period, as the recorded A69, A65 and A71 documents word it. */
export function forecastSeriesHead(
  mRID: number,
  series: Pick<Series, 'businessType' | 'objectAggregation' | 'outArea' | 'psrType'>,
  profile: Pick<EuropeProfile, 'eic' | 'curveType'>,
): string {
  const domain = series.outArea ? 'outBiddingZone_Domain.mRID' : 'inBiddingZone_Domain.mRID';
  const head = `\t<TimeSeries>
\t\t<mRID>${mRID}</mRID>
\t\t<businessType>${series.businessType}</businessType>
\t\t<objectAggregation>${series.objectAggregation}</objectAggregation>
\t\t<${domain} codingScheme="A01">${profile.eic}</${domain}>
\t\t<quantity_Measure_Unit.name>MAW</quantity_Measure_Unit.name>
\t\t<curveType>${profile.curveType}</curveType>
`;
  return series.psrType === undefined
    ? head
    : `${head}\t\t<MktPSRType>\n\t\t\t<psrType>${series.psrType}</psrType>\n\t\t</MktPSRType>\n`;
}

export interface Series {
  readonly businessType: string;
  readonly objectAggregation: string;
  readonly outArea: boolean;
  readonly psrType?: string;
  readonly values: Float64Array;
}

function forecastDocument(
  documentType: EntsoeForecastDocument,
  profile: EuropeProfile,
  days: readonly { start: number; end: number }[],
  psrType: string | null,
  context: ReplyContext,
): Buffer | undefined {
  const stepMs = profile.resolution === 'PT15M' ? 15 * MINUTE_MS : HOUR_MS;
  const decimals = profile.resolution === 'PT15M' ? 100 : 1;
  const first = days[0] as { start: number };
  const last = days.at(-1) as { end: number };
  const id = noiseHex(
    context.seed,
    profile.zoneKey,
    hashString(`${documentType}@${first.start}@${context.nowMs}`),
  );
  const sink = new AsciiSink(8192 + days.length * 24 * 4 * 90);
  sink.write(
    glDocumentHead({
      declaration: 'UTF-8',
      mRID: id,
      type: documentType,
      processType: 'A01',
      createdMs: context.nowMs,
      startMs: first.start,
      endMs: last.end,
    }),
  );
  let mRID = 0;
  for (const day of days) {
    const count = (day.end - day.start) / stepMs;
    const issueMs = day.start - PUBLISHED_BEFORE_DAY_MS;
    const issueIndex = Math.round(day.start / DAY_MS);
    const error = (channel: number, i: number) =>
      forecastError(
        context.seed,
        profile.zoneKey,
        channel,
        day.start + (i + 0.5) * stepMs,
        issueMs,
        issueIndex,
      );
    for (const series of seriesOfDay(
      documentType,
      profile,
      day.start,
      stepMs,
      count,
      psrType,
      context.seed,
      error,
    )) {
      mRID++;
      sink.write(forecastSeriesHead(mRID, series, profile));
      sink.write(periodHead(day.start, day.end, profile.resolution));
      let previous = NaN;
      for (let i = 0; i < count; i++) {
        const quantity = Math.round((series.values[i] as number) * decimals) / decimals;
        // A03 sends a Point only where the value changes (docs/upstreams.md §1.4).
        if (profile.curveType === 'A03' && quantity === previous) continue;
        previous = quantity;
        sink.write(
          `\t\t\t<Point>\n\t\t\t\t<position>${i + 1}</position>\n\t\t\t\t<quantity>${quantity}</quantity>\n\t\t\t</Point>\n`,
        );
      }
      sink.write('\t\t</Period>\n\t</TimeSeries>\n');
    }
  }
  if (mRID === 0) return undefined;
  sink.write('</GL_MarketDocument>');
  return sink.toBuffer();
}

/**
 * The forecast series of one market day: the synthetic actuals of the same instants with the
 * forecast error applied. Wind misses by a share of its capacity (about 5 % standard deviation),
 * solar by about a tenth of its value, load and scheduled generation by about 2 %.
 */
function seriesOfDay(
  documentType: EntsoeForecastDocument,
  profile: EuropeProfile,
  startMs: number,
  stepMs: number,
  count: number,
  psrType: string | null,
  seed: number,
  error: (channel: number, i: number) => number,
): Series[] {
  const mix = documentType === 'A65' ? [] : publishedMix(profile, seed, startMs, stepMs, count);
  if (documentType === 'A65') {
    const load = computeDemand(profile, seed, startMs, stepMs, count);
    const values = load.map((mw, i) => mw * (1 + 0.05 * error(NOISE_CHANNEL.loadError, i)));
    return [{ businessType: 'A04', objectAggregation: 'A01', outArea: true, values }];
  }
  if (documentType === 'A71') {
    const generation = new Float64Array(count);
    const pumping = new Float64Array(count);
    profile.fuels.forEach((fuel, f) => {
      const values = mix[f] as Float64Array;
      for (let i = 0; i < count; i++) {
        const mw = values[i] as number;
        if (mw > 0) generation[i] = (generation[i] as number) + mw;
        else if (fuel.code === 'B10') pumping[i] = (pumping[i] as number) - mw;
      }
    });
    const series: Series[] = [
      {
        businessType: 'A01',
        objectAggregation: 'A01',
        outArea: false,
        values: generation.map(
          (mw, i) => mw * (1 + 0.06 * error(NOISE_CHANNEL.generationError, i)),
        ),
      },
    ];
    // Like the CZ recording: scheduled consumption as an out-series, which is not generation.
    if (profile.pumpingAsConsumption && profile.fuels.some((fuel) => fuel.code === 'B10')) {
      series.push({
        businessType: 'A01',
        objectAggregation: 'A01',
        outArea: true,
        values: pumping,
      });
    }
    return series;
  }
  const series: Series[] = [];
  profile.fuels.forEach((fuel, f) => {
    if (!WIND_SOLAR.includes(fuel.code) || (psrType !== null && psrType !== fuel.code)) return;
    const actual = mix[f] as Float64Array;
    const channel = NOISE_CHANNEL.windSolarError + CHANNELS_PER_FUEL * f;
    const values = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      const truth = Math.max(actual[i] as number, 0);
      values[i] =
        fuel.code === 'B16'
          ? truth * Math.max(0, 1 + 0.25 * error(channel, i))
          : Math.min(
              0.95 * fuel.capacityMw,
              Math.max(0, truth + 0.12 * fuel.capacityMw * error(channel, i)),
            );
    }
    series.push({
      businessType: fuel.code === 'B16' ? 'A94' : 'A93',
      objectAggregation: 'A08',
      outArea: false,
      psrType: fuel.code,
      values,
    });
  });
  return series;
}
