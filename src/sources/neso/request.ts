import type { TimeWindow } from '../http.js';

/** NESO Carbon Intensity API requests (docs/upstreams.md §3.1): no auth, UTC paths. */

/** `/intensity/{from}/{to}` serves at most 14 days per request. */
export const NESO_MAX_WINDOW_SECONDS = 14 * 24 * 3600;

export const NESO_HEADERS = { accept: 'application/json' } as const;

export function nesoRangeUrl(baseUrl: string, window: TimeWindow): string {
  return `${baseUrl}/intensity/${nesoInstant(window.fromTs)}/${nesoInstant(window.toTs)}`;
}

/** `YYYY-MM-DDThh:mmZ` in UTC. */
export function nesoInstant(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().slice(0, 16) + 'Z';
}
