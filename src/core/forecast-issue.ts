/**
 * When an upstream forecast counts as issued (docs/upstreams.md §8.3). Pure: the fetch time is
 * passed in. A walk-forward backtest only lets a model see forecasts issued before its own issue
 * time, so every rule here errs late: a forecast is never said to be known earlier than the
 * upstream can have published it, and never later than we fetched it.
 *
 * The upstreams' own stamps cannot be used: ENTSO-E's `createdDateTime` is when the document was
 * assembled for the request (an archive of 2022 fetched in 2026 says 2026), EIA and NESO give none.
 */
import { HOUR } from './time.js';

const DAY = 24 * HOUR;

/**
 * ENTSO-E publishes day-ahead wind and solar forecasts by 18:00 market time (CET/CEST) the day
 * before, the load and scheduled generation forecasts earlier: every day-ahead product of a
 * market day is out six hours before the day starts.
 */
const ENTSOE_DAY_AHEAD_LEAD_SECONDS = 6 * HOUR;

/**
 * A point of an ENTSO-E day-ahead document counts as issued at `min(fetchedAt, start of its
 * market day − 6 h)`: the afternoon before, or when we fetched it if that was earlier.
 */
export function entsoeDayAheadIssuedAt(marketDayStart: number, fetchedAt: number): number {
  return Math.min(fetchedAt, marketDayStart - ENTSOE_DAY_AHEAD_LEAD_SECONDS);
}

/**
 * The start of the market day an ENTSO-E day-ahead point belongs to. Day-ahead documents carry
 * one Period per market day (local midnight to local midnight: 23, 24 or 25 hours), so it is the
 * Period's start. A Period longer than a day (an A03 curve compressed over weeks, upstreams
 * §1.3 item 10) names no day: the day is then counted on from the Period start in 24-hour steps,
 * and of the three alignments a daylight-saving change allows (the Period's hour, one earlier,
 * one later) the latest one that has started by `ts` is taken, so the day start (and with it the
 * issue time) is never placed too early.
 */
export function marketDayStartOf(periodStart: number, periodEnd: number, ts: number): number {
  if (periodEnd - periodStart <= 25 * HOUR) return periodStart;
  let latest = -Infinity;
  for (const shift of [-HOUR, 0, HOUR]) {
    const anchor = periodStart + shift;
    const dayStart = anchor + Math.floor((ts - anchor) / DAY) * DAY;
    latest = Math.max(latest, dayStart);
  }
  return Math.max(latest, periodStart);
}

/**
 * How far ahead of its hour an EIA day-ahead demand forecast (`DF`) is taken to be known. The
 * recording (region-data, 2025-04-21, fetched after 20:00Z since `D` reaches the hour ending
 * 20:00Z) holds DF only up to the end of each respondent's local day: to the hour starting
 * 03:00Z for PJM and NYIS, 04:00Z for MISO, ERCO, SWPP, SOCO, TVA, 06:00Z for US48, CISO, BPAT.
 * PJM's forecast of the hour starting 04:00Z was therefore not out at the fetch, at most 8 hours
 * before it: a 12-hour rule would claim it was. Six hours is the longest whole-hour lead that
 * no respondent of the recording contradicts for a fetch made up to 22:00Z.
 */
const EIA_DEMAND_FORECAST_LEAD_SECONDS = 6 * HOUR;

/** EIA `DF` for the hour starting `ts`: issued at `min(fetchedAt, ts − 6 h)`. */
export function eiaDemandForecastIssuedAt(ts: number, fetchedAt: number): number {
  return Math.min(fetchedAt, ts - EIA_DEMAND_FORECAST_LEAD_SECONDS);
}

/**
 * EIA `D` (demand) is an observation, kept beside the forecasts for the models: stamped with the
 * end of its hour, the earliest it can exist. It reaches EIA an hour or more later (the recording:
 * D an hour behind the fetch); a model that needs the real lag applies its own.
 */
export function eiaDemandIssuedAt(ts: number): number {
  return ts + HOUR;
}

/** NESO fw48h: issued at the fetch time floored to the half hour (the operator re-issues then). */
export function nesoForecastIssuedAt(fetchedAt: number): number {
  return Math.floor(fetchedAt / (HOUR / 2)) * (HOUR / 2);
}
