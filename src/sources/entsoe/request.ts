import type { TimeWindow } from '../../core/time.js';

/**
 * ENTSO-E requests (docs/upstreams.md §1.1): one zone (A75) or one direction of one link (A11)
 * per request, whole UTC hours, at most one year per request.
 */

/** A75 and A11 accept at most one year per request; 365 days stays inside it in leap years too. */
export const ENTSOE_MAX_WINDOW_SECONDS = 365 * 24 * 3600;

/**
 * Half of the guide's 400 requests per minute (per IP and per token; above it, a 10-minute ban):
 * an hourly pass of 33 zones goes out at once, a long backfill is held to this pace.
 */
export const ENTSOE_RATE_LIMIT = { requests: 200, perMs: 60_000 } as const;

export function entsoeA75Url(
  baseUrl: string,
  token: string,
  eic: string,
  window: TimeWindow,
): string {
  const query = new URLSearchParams({
    securityToken: token,
    documentType: 'A75',
    processType: 'A16',
    in_Domain: eic,
    periodStart: entsoePeriod(window.fromTs),
    periodEnd: entsoePeriod(window.toTs),
  });
  return `${baseUrl}?${query}`;
}

/**
 * Physical flows of one direction of one link (docs/upstreams.md §9.1): A11 of the power that
 * flows out of `outEic` into `inEic`. No processType; the same one-year limit as A75.
 */
export function entsoeA11Url(
  baseUrl: string,
  token: string,
  direction: { readonly outEic: string; readonly inEic: string },
  window: TimeWindow,
): string {
  const query = new URLSearchParams({
    securityToken: token,
    documentType: 'A11',
    in_Domain: direction.inEic,
    out_Domain: direction.outEic,
    periodStart: entsoePeriod(window.fromTs),
    periodEnd: entsoePeriod(window.toTs),
  });
  return `${baseUrl}?${query}`;
}

/**
 * A day-ahead forecast document (docs/upstreams.md §1.7): A69 wind and solar (every psrType in one
 * document), A65 total load (the area goes in `outBiddingZone_Domain`: `in_Domain` is refused with
 * HTTP 400), A71 scheduled generation; processType A01. The reply covers every whole market day
 * the window touches.
 */
export function entsoeForecastUrl(
  baseUrl: string,
  token: string,
  documentType: 'A69' | 'A65' | 'A71',
  eic: string,
  window: TimeWindow,
): string {
  const query = new URLSearchParams({
    securityToken: token,
    documentType,
    processType: 'A01',
    [documentType === 'A65' ? 'outBiddingZone_Domain' : 'in_Domain']: eic,
    periodStart: entsoePeriod(window.fromTs),
    periodEnd: entsoePeriod(window.toTs),
  });
  return `${baseUrl}?${query}`;
}

/** `YYYYMMDDHH00` in UTC; minutes are always 00 because only whole hours are sent. */
export function entsoePeriod(epochSeconds: number): string {
  if (epochSeconds % 3600 !== 0) throw new RangeError('ENTSO-E periods are whole UTC hours');
  return new Date(epochSeconds * 1000).toISOString().replace(/[-T:]/g, '').slice(0, 10) + '00';
}
