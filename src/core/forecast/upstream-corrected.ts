import {
  type Anchor,
  anchorOf,
  dailyBase,
  type ForecastModel,
  type Issue,
  nanArray,
} from './forecast-model.js';
import {
  departureFit,
  DepartureRow,
  DEPARTURE_REGRESSION,
  PLAIN_DEPARTURE,
  type RecentValues,
  recentValues,
} from './departure-regression.js';
import { blendHandOvers } from './hand-over.js';
import { bucketIndex, HORIZON_BUCKETS, HOUR_SECONDS, horizonHours, servedHours } from './series.js';
import {
  BASE_FEATURES,
  featureScale,
  featureSet,
  fillRow,
  fitCorrection,
  type MissedBase,
  upstreamInputNames,
} from './upstream-regression.js';
import type { ZoneState } from './zone-state.js';

/** Models corrected by the zone's upstream forecasts where they reach. */

/**
 * The recent days' hour-of-day profile plus the newest value's departure (24-hour e-folding
 * time), corrected where the zone's upstream forecasts reach by a per-bucket linear fit of what
 * that profile missed on the upstream features of the regression (wind and solar shares, load,
 * demand, operator). Two coefficients per feature at most, fitted on the issues of the previous
 * 35 days at the same time of day: the upstream forecasts reorder the next day's hours on the
 * profile that orders them best. Beyond their reach it is the profile alone, handed over with
 * the 3-hour blend. Only a candidate where the zone has upstream forecasts.
 */
export const DAILY_UPSTREAM: ForecastModel = upstreamCorrected('daily-upstream@1', {
  forecast(zone, issue, anchor, end) {
    const out = nanArray(end - issue.visibleEnd);
    for (let i = 0; i < out.length; i++) out[i] = dailyBase(zone, anchor, issue.visibleEnd + i);
    return out;
  },
  training: (zone) => ({
    key: () => null,
    at: (pastAnchor, _pastTs, slot) => dailyBase(zone, pastAnchor, slot),
  }),
});

/**
 * `departure-regression@1` corrected where the zone's upstream forecasts reach, as
 * `daily-upstream@1` corrects the daily profile: by a per-bucket linear fit, on the issues of the
 * previous 35 days at the same time of day, of what the regression missed on the upstream
 * features. The regression learns from a year what the zone's own history says (the day of the
 * week, how a departure fades); the correction adds what the day-ahead wind, solar, load or
 * demand say of the next day on top of it. The past issues' misses are those of the fit that
 * serves the issue (made at most a week before it, from what was published then).
 */
export const DEPARTURE_UPSTREAM: ForecastModel = upstreamCorrected('departure-upstream@1', {
  forecast: (zone, issue, _anchor, end) => DEPARTURE_REGRESSION.predict(zone, issue, end),
  training(zone, issue) {
    const fits = HORIZON_BUCKETS.map((_, bucket) =>
      departureFit(zone, PLAIN_DEPARTURE, issue.issueTs, bucket),
    );
    const row = new DepartureRow(PLAIN_DEPARTURE);
    let recentOf: Anchor | undefined;
    let recent: RecentValues | undefined;
    return {
      // A past issue's values change with the fit of its targets' bucket only.
      key: (bucket) => fits[bucket],
      at(pastAnchor, pastTs, slot) {
        const hours = servedHours(horizonHours(zone.slotTs(slot), zone.series.step, pastTs));
        const bucket = bucketIndex(hours);
        const fit = fits[bucket];
        if (!fit) return Number.NaN;
        if (pastAnchor !== recentOf) {
          recentOf = pastAnchor;
          recent = recentValues(zone, pastAnchor);
        }
        row.fill(zone, pastAnchor, recent!, slot, hours, bucket);
        return row.base + row.dot(fit.coefficients, fit.offsets[zone.slotOfWeek(slot)]!);
      },
    };
  },
});

/** What an upstream-corrected model corrects: its forecast, and its value at past issues. */
interface CorrectedBase {
  /** The base forecast of slots `issue.visibleEnd` to `end` (NaN where it has none). */
  forecast(zone: ZoneState, issue: Issue, anchor: Anchor, end: number): Float64Array;
  /** The base's values at the past issues the correction is fitted on, at `issue`. */
  training(zone: ZoneState, issue: Issue): MissedBase;
}

/**
 * A base forecast corrected where the zone's upstream forecasts reach by a per-bucket linear fit
 * (an intercept and the regression's upstream features) of what the base missed on the issues of
 * the previous 35 days at the same time of day; beyond their reach the base alone, handed over
 * with the 3-hour blend. Only a candidate where the zone has upstream forecasts.
 */
function upstreamCorrected(id: string, base: CorrectedBase): ForecastModel {
  return {
    id,
    inputsOf: (zone) => ['history', ...upstreamInputNames(zone)],
    appliesTo: (zone) => featureSet(zone.inputs.upstream).length > 0,
    predict(zone, issue, end) {
      const out = nanArray(end - issue.visibleEnd);
      const anchor = anchorOf(zone, issue.visibleEnd);
      const features = featureSet(zone.inputs.upstream);
      if (!anchor || features.length === 0) return out;
      const scale = featureScale(zone, features, issue);
      const buckets = HORIZON_BUCKETS.length;
      const missed = base.training(zone, issue);
      const fits = HORIZON_BUCKETS.map((_, bucket) =>
        fitCorrection(zone, features, scale, issue, bucket, id, missed),
      );
      const forecast = base.forecast(zone, issue, anchor, end);
      // Source b: bucket b's correction; source `buckets`: the base alone.
      const sources = Array.from({ length: buckets + 1 }, () => nanArray(out.length));
      const choice = new Uint8Array(out.length);
      const row = new Float64Array(BASE_FEATURES + features.length);
      for (let i = 0; i < out.length; i++) {
        const slot = issue.visibleEnd + i;
        sources[buckets]![i] = forecast[i]!;
        choice[i] = buckets;
        if (!fillRow(row, zone, features, scale, anchor, issue.issueTs, slot)) continue;
        const hours = servedHours(horizonHours(zone.slotTs(slot), zone.series.step, issue.issueTs));
        const bucket = bucketIndex(hours);
        const coefficients = fits[bucket];
        if (!coefficients) continue;
        sources[bucket]![i] = forecast[i]! + correction(coefficients, row);
        choice[i] = bucket;
      }
      out.set(blendHandOvers(sources, choice, HOUR_SECONDS / zone.series.step));
      return out;
    },
  };
}

/** Intercept and the upstream features (the regression's row from BASE_FEATURES on). */
function correction(coefficients: Float64Array, row: Float64Array): number {
  let value = coefficients[0]!;
  for (let c = 1; c < coefficients.length; c++) {
    value += coefficients[c]! * row[BASE_FEATURES + c - 1]!;
  }
  return value;
}
