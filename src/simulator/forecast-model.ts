import { smoothNoise } from './noise.js';

/**
 * How the simulated upstreams' own forecasts miss: weather-like errors, not white noise. Every
 * error is a pure function of (seed, zone, channel, target time, issue): no state.
 *
 * - Smooth in target time: a bias that lasts a day or two (the weather model got a front wrong)
 *   with swings of a few hours on top, so consecutive intervals of one issue err together.
 * - Partly shared between issues: one part is common to every issue of a target time (what no
 *   model of the day could see), the rest belongs to the issue and is shared half with the
 *   issue before it (forecasts are revised, not redrawn).
 * - Growing with lead time: x0.6 at 6 hours ahead, x1 at a day, x1.5 at two days.
 *
 * `forecastError` is roughly within [-1, 1] (standard deviation about 0.35); each quantity scales
 * it (wind by its capacity, solar and load relative to the value, see entsoe-forecast.ts).
 */

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

const centered = (value: number) => 2 * value - 1;

/** `issueIndex` numbers the issues (a market day, a publication); fractions blend two. */
export function forecastError(
  seed: number,
  zoneKey: number,
  channel: number,
  targetMs: number,
  issueMs: number,
  issueIndex: number,
): number {
  const days = targetMs / DAY_MS;
  const shared =
    0.75 * centered(smoothNoise(seed, zoneKey, channel, days / 1.5)) +
    0.25 * centered(smoothNoise(seed, zoneKey, channel + 1, days * 4));
  const own = (issue: number) => {
    const key = (zoneKey + Math.imul(issue, 0x9e3779b1)) | 0;
    return centered(smoothNoise(seed, key, channel + 2, days / 0.8));
  };
  const ofIssue = (issue: number) => (own(issue) + own(issue - 1)) * Math.SQRT1_2;
  const first = Math.floor(issueIndex);
  const fraction = issueIndex - first;
  const issued =
    fraction === 0
      ? ofIssue(first)
      : (1 - fraction) * ofIssue(first) + fraction * ofIssue(first + 1);
  const leadHours = Math.max(0, (targetMs - issueMs) / HOUR_MS);
  const growth = 0.5 + 0.5 * (Math.min(leadHours, 48) / 24);
  return growth * (0.6 * shared + 0.55 * issued);
}

// Market days of the European day-ahead market: CET/CEST local days, whatever the zone
// (docs/upstreams.md §1.7: FI day-ahead days start at 23:00Z in winter too).

/** 01:00Z on the last Sunday of `month` (0-based) of `year`: when EU clocks change. */
function lastSundayOneUtc(year: number, month: number): number {
  const lastDay = new Date(Date.UTC(year, month + 1, 0));
  const day = lastDay.getUTCDate() - lastDay.getUTCDay();
  return Date.UTC(year, month, day, 1);
}

function isSummerTime(ms: number): boolean {
  const year = new Date(ms).getUTCFullYear();
  return ms >= lastSundayOneUtc(year, 2) && ms < lastSundayOneUtc(year, 9);
}

/** Start (UTC ms) of the CET/CEST market day containing `ms`: 23:00Z in winter, 22:00Z in summer. */
export function marketDayStart(ms: number): number {
  const local = ms + (isSummerTime(ms) ? 2 : 1) * HOUR_MS;
  const midnight = Math.floor(local / DAY_MS) * DAY_MS;
  const summer = midnight - 2 * HOUR_MS;
  return isSummerTime(summer) ? summer : midnight - HOUR_MS;
}

/** Start of the market day after the one starting at `dayStart` (days are 23 to 25 hours). */
export function nextMarketDayStart(dayStart: number): number {
  return marketDayStart(dayStart + 26 * HOUR_MS);
}
