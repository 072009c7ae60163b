import type { TimeWindow } from '../../core/time.js';

/** NESO Carbon Intensity API requests (docs/upstreams.md §3.1): no auth, UTC paths. */

/**
 * `/intensity/{from}/{to}` serves at most 14 days per request; `/generation/{from}/{to}` is asked
 * in the same pieces (its limit is not documented; 14 days keeps one rule for both feeds).
 */
export const NESO_MAX_WINDOW_SECONDS = 14 * 24 * 3600;

export const NESO_HEADERS = { accept: 'application/json' } as const;

export function nesoRangeUrl(baseUrl: string, window: TimeWindow): string {
  return `${baseUrl}/intensity/${nesoInstant(window.fromTs)}/${nesoInstant(window.toTs)}`;
}

/**
 * The generation mix of every half-hour in the window (docs/upstreams.md §3.4). The reply also
 * holds the half-hour ending at `from`, like the intensity range.
 */
export function nesoGenerationUrl(baseUrl: string, window: TimeWindow): string {
  return `${baseUrl}/generation/${nesoInstant(window.fromTs)}/${nesoInstant(window.toTs)}`;
}

/**
 * The operator's national forecast for the 48 hours from the half hour containing `fromTs`
 * (docs/upstreams.md §3.1). A `{from}` exactly on a half-hour boundary makes the reply start one
 * half hour earlier, so callers ask one minute past it, as the recordings were made.
 */
export function nesoForecastUrl(baseUrl: string, fromTs: number): string {
  return `${baseUrl}/intensity/${nesoInstant(fromTs)}/fw48h`;
}

/** `YYYY-MM-DDThh:mmZ` in UTC. */
function nesoInstant(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().slice(0, 16) + 'Z';
}
