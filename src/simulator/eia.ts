import { answerInterchange, EIA_INTERCHANGE_ROUTE } from './eia-interchange.js';
import { forecastError } from './forecast-model.js';
import { publishedMix } from './flow-model.js';
import { computeDemand, hourGap, isReported } from './mix-model.js';
import { NOISE_CHANNEL, unitNoise } from './noise.js';
import { jsonReply, type ReplyContext, type SourceReply } from './reply.js';
import {
  askedPeriods,
  EIA_DATE_FORMAT,
  eiaEnvelope,
  parseEiaRequest,
  type EiaRequest,
} from './eia-request.js';
import type { UsProfile } from './zone-profiles.js';

/**
 * EIA API v2, route `electricity/rto/fuel-type-data`, as apiVersion 2.1.8 answers it: values and
 * `total` as strings, `period` labelling the END of a UTC hour, the request echoed with its
 * api_key (docs/upstreams.md §2, test/fixtures/upstreams/us-agency).
 */

export interface EiaContext extends ReplyContext {
  /** When set, the only key accepted; otherwise any non-empty key is. */
  readonly apiKey?: string;
}

export const EIA_FUEL_TYPE_ROUTE = '/v2/electricity/rto/fuel-type-data/data/';
export const EIA_REGION_ROUTE = '/v2/electricity/rto/region-data/data/';
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const SIX_HOURS_MS = 6 * HOUR_MS;
// A published hour is revised every six hours during its first day, then stays final.
const REVISION_STAGES = 4;
export const EIA_FUEL_TYPE_DESCRIPTION =
  'Hourly net generation by balancing authority and energy source.  \n    Source: Form EIA-930\n    Product: Hourly Electric Grid Monitor';

export const EIA_TYPE_NAMES: Readonly<Record<string, string>> = {
  BAT: 'Battery storage',
  COL: 'Coal',
  GEO: 'Geothermal',
  NG: 'Natural Gas',
  NUC: 'Nuclear',
  OES: 'Other energy storage',
  OIL: 'Petroleum',
  OTH: 'Other',
  PS: 'Pumped storage',
  SNB: 'Solar with integrated battery storage',
  SUN: 'Solar',
  UES: 'Unknown energy storage',
  UNK: 'Unknown',
  WAT: 'Hydro',
  WNB: 'Wind with integrated battery storage',
  WND: 'Wind',
};

/** One record of a fuel-type-data reply, as the real API words it. */
export interface EiaRow {
  period: string;
  respondent: string;
  'respondent-name': string;
  fueltype: string;
  'type-name': string;
  value?: string;
  'value-units'?: string;
}

export function answerEia(
  pathname: string,
  query: URLSearchParams,
  context: EiaContext,
): SourceReply {
  // The api.data.gov gateway in front of EIA checks the key before looking at the route.
  const apiKey = query.get('api_key');
  if (!apiKey) {
    return gatewayError(
      'API_KEY_MISSING',
      'No api_key was supplied. Get one at https://api.data.gov:443/signup/',
    );
  }
  if (context.apiKey !== undefined && apiKey !== context.apiKey) {
    return gatewayError(
      'API_KEY_INVALID',
      'An invalid api_key was supplied. Get one at https://api.data.gov:443/signup/',
    );
  }
  const route = pathname.replace(/\/?$/, '/');
  if (route === EIA_INTERCHANGE_ROUTE) return answerInterchange(query, context.seed, context.nowMs);
  if (route !== EIA_FUEL_TYPE_ROUTE && route !== EIA_REGION_ROUTE) {
    return jsonReply(404, {
      error: `Invalid route ${pathname}: this simulator serves ${EIA_FUEL_TYPE_ROUTE}, ${EIA_REGION_ROUTE} and ${EIA_INTERCHANGE_ROUTE} only.`,
      code: 404,
    });
  }
  const facet = route === EIA_FUEL_TYPE_ROUTE ? 'fueltype' : 'type';
  const request = parseEiaRequest(query, facet);
  if (typeof request === 'string') return jsonReply(400, { error: request, code: 400 });
  return jsonReply(
    200,
    route === EIA_FUEL_TYPE_ROUTE ? page(request, context) : regionPage(request, context),
  );
}

/** A valid query that matches no rows: `total` 0 and no data (fixtures/us-agency empty result). */
export function emptyEiaReply(): SourceReply {
  return jsonReply(200, {
    response: {
      total: '0',
      dateFormat: EIA_DATE_FORMAT,
      frequency: 'hourly',
      data: [],
      description: EIA_FUEL_TYPE_DESCRIPTION,
    },
    request: { command: EIA_FUEL_TYPE_ROUTE, params: {} },
    apiVersion: '2.1.8',
  });
}

function gatewayError(code: string, message: string): SourceReply {
  return jsonReply(403, { error: { code, message } });
}

function page(request: EiaRequest, context: EiaContext): unknown {
  const publishedUntil = request.respondents.map(
    (profile) => Math.floor((context.nowMs - profile.publicationLagMs) / HOUR_MS) * HOUR_MS,
  );
  const lastPeriodMs = Math.min(request.lastPeriodMs, Math.max(...publishedUntil, 0));
  const wanted = request.respondents.map((profile) =>
    profile.fuels.map((fuel) => !request.fueltypes || request.fueltypes.has(fuel.code)),
  );
  const wantedCount = wanted.map((flags) => flags.filter(Boolean).length);
  const rows: EiaRow[] = [];
  let total = 0;
  // Counting every matching row is cheap (one hash per respondent-hour); values are computed for
  // the requested page only.
  for (const periodMs of askedPeriods(request, lastPeriodMs)) {
    const hour = periodMs / HOUR_MS - 1;
    for (let r = 0; r < request.respondents.length; r++) {
      if (periodMs > (publishedUntil[r] as number)) continue;
      const profile = request.respondents[r] as UsProfile;
      const flags = wanted[r] as boolean[];
      const gap = hourGap(profile, context.seed, hour);
      let count = wantedCount[r] as number;
      if (gap !== null) {
        count = 0;
        for (let f = 0; f < flags.length; f++) if (flags[f] && isReported(gap, f)) count++;
      }
      if (total + count > request.offset && rows.length < request.length) {
        const mix = publishedMix(profile, context.seed, periodMs - HOUR_MS, HOUR_MS, 1);
        const ageMs = context.nowMs - (periodMs + profile.publicationLagMs);
        const period = new Date(periodMs).toISOString().slice(0, 13);
        let position = total;
        profile.fuels.forEach((fuel, f) => {
          if (!flags[f] || !isReported(gap, f)) return;
          if (position++ < request.offset || rows.length >= request.length) return;
          const row: EiaRow = {
            period,
            respondent: profile.respondent,
            'respondent-name': profile.respondentName,
            fueltype: fuel.code,
            'type-name': EIA_TYPE_NAMES[fuel.code] ?? fuel.code,
          };
          if (request.withValues) {
            const value =
              (mix[f]?.[0] ?? 0) * revisionFactor(profile, context.seed, f, hour, ageMs);
            row.value = String(Math.round(value));
            row['value-units'] = 'megawatthours';
          }
          rows.push(row);
        });
      }
      total += count;
    }
  }
  return eiaEnvelope(request, rows, total, EIA_FUEL_TYPE_DESCRIPTION, EIA_FUEL_TYPE_ROUTE);
}

/**
 * Hourly EIA-930 data are preliminary: during its first day online a value moves by up to ±2 %
 * every six hours, so the same hour asked at two clock times can differ.
 */
function revisionFactor(
  profile: UsProfile,
  seed: number,
  fuelIndex: number,
  hour: number,
  ageMs: number,
): number {
  const stage = Math.floor(ageMs / SIX_HOURS_MS);
  if (stage >= REVISION_STAGES) return 1;
  const draw = unitNoise(
    seed,
    profile.zoneKey,
    NOISE_CHANNEL.eiaRevision + fuelIndex,
    hour * REVISION_STAGES + stage,
  );
  return 1 + 0.04 * (draw - 0.5);
}

// region-data (docs/upstreams.md §2.6): demand, day-ahead demand forecast, net generation and
// total interchange of the same synthetic grid.

const REGION_TYPES = ['D', 'DF', 'NG', 'TI'] as const;
type RegionType = (typeof REGION_TYPES)[number];
/** region-data's type names, as the real API words them (the replay of real history too). */
export const EIA_REGION_TYPE_NAMES: Readonly<Record<RegionType, string>> = {
  D: 'Demand',
  DF: 'Day-ahead demand forecast',
  NG: 'Net generation',
  TI: 'Total interchange',
};
export const EIA_REGION_DESCRIPTION =
  'Hourly demand, day-ahead demand forecast, net generation, and interchange by balancing authority.  \n    Source: Form EIA-930\n    Product: Hourly Electric Grid Monitor';
/** A local day's demand forecast is published six hours before the day starts. */
const DF_PUBLISHED_BEFORE_DAY_MS = 6 * HOUR_MS;

/** One record of a region-data reply, as the real API words it. */
interface EiaRegionRow {
  period: string;
  respondent: string;
  'respondent-name': string;
  type: string;
  'type-name': string;
  value?: string;
  'value-units'?: string;
}

/** The respondent's standard-time offset from UTC in whole hours (its local day). */
function utcOffsetMs(profile: UsProfile): number {
  return Math.round(profile.longitude / 15) * HOUR_MS;
}

/** When the demand forecast of the hour starting `hourStartMs` is published, and its issue number. */
function demandForecastIssue(
  profile: UsProfile,
  hourStartMs: number,
): { readonly publishedMs: number; readonly issueIndex: number } {
  const offset = utcOffsetMs(profile);
  const localDay = Math.floor((hourStartMs + offset) / DAY_MS);
  return {
    publishedMs: localDay * DAY_MS - offset - DF_PUBLISHED_BEFORE_DAY_MS,
    issueIndex: localDay,
  };
}

/**
 * Each type has its own frontier, as recorded: NG and TI as fuel-type-data (the zone's lag), D one
 * to two hours behind the clock, DF to the end of the local day whose forecast is out (the next
 * local day's from 18:00 local time on).
 */
function isPublished(
  profile: UsProfile,
  type: RegionType,
  periodMs: number,
  nowMs: number,
): boolean {
  switch (type) {
    case 'NG':
    case 'TI':
      return periodMs <= Math.floor((nowMs - profile.publicationLagMs) / HOUR_MS) * HOUR_MS;
    case 'D':
      return (
        periodMs <= Math.floor((nowMs - (1 + (profile.zoneKey % 2)) * HOUR_MS) / HOUR_MS) * HOUR_MS
      );
    case 'DF':
      return demandForecastIssue(profile, periodMs - HOUR_MS).publishedMs <= nowMs;
  }
}

function regionValue(profile: UsProfile, type: RegionType, periodMs: number, seed: number): number {
  const startMs = periodMs - HOUR_MS;
  const demand = computeDemand(profile, seed, startMs, HOUR_MS, 1)[0] as number;
  if (type === 'D') return demand;
  if (type === 'DF') {
    const { publishedMs, issueIndex } = demandForecastIssue(profile, startMs);
    const error = forecastError(
      seed,
      profile.zoneKey,
      NOISE_CHANNEL.eiaDemandForecast,
      startMs + HOUR_MS / 2,
      publishedMs,
      issueIndex,
    );
    return demand * (1 + 0.05 * error);
  }
  const generation = publishedMix(profile, seed, startMs, HOUR_MS, 1).reduce(
    (sum, values) => sum + (values[0] ?? 0),
    0,
  );
  // TI is positive for net export (docs/upstreams.md §2.6): generation beyond the zone's load.
  return type === 'NG' ? generation : generation - demand;
}

function regionPage(request: EiaRequest, context: EiaContext): unknown {
  // Demand forecasts reach at most two local days ahead.
  const lastPeriodMs = Math.min(
    request.lastPeriodMs,
    Math.floor(context.nowMs / HOUR_MS) * HOUR_MS + 2 * DAY_MS,
  );
  const types = REGION_TYPES.filter((type) => !request.fueltypes || request.fueltypes.has(type));
  const rows: EiaRegionRow[] = [];
  let total = 0;
  for (const periodMs of askedPeriods(request, lastPeriodMs)) {
    const period = new Date(periodMs).toISOString().slice(0, 13);
    for (const profile of request.respondents) {
      for (const type of types) {
        if (!isPublished(profile, type, periodMs, context.nowMs)) continue;
        const position = total++;
        if (position < request.offset || rows.length >= request.length) continue;
        const row: EiaRegionRow = {
          period,
          respondent: profile.respondent,
          'respondent-name': profile.respondentName,
          type,
          'type-name': EIA_REGION_TYPE_NAMES[type],
        };
        if (request.withValues) {
          row.value = String(Math.round(regionValue(profile, type, periodMs, context.seed)));
          row['value-units'] = 'megawatthours';
        }
        rows.push(row);
      }
    }
  }
  return eiaEnvelope(request, rows, total, EIA_REGION_DESCRIPTION, EIA_REGION_ROUTE);
}
