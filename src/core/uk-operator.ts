/**
 * The GB rule of docs/method.md ("`upstream:uk-operator:actual` and `:forecast`"): the
 * operator's figures are republished unchanged at 30-minute resolution, never recomputed.
 */
import { CATEGORIES, type Category } from './factors.js';
import { intensityOfMix, type ZoneReadings } from './method.js';
import { isExcluded, NESO_FUELS } from './production-types.js';
import type { Mix, StoredForecast, StoredMix, StoredReading } from './reading.js';

export const HALF_HOUR = 1800;

/** One operator half-hour `[start, start + 30 min)`, epoch seconds; figures in gCO2/kWh. */
export interface OperatorHalfHour {
  readonly start: number;
  readonly forecast: number | null;
  /** The settled figure; null until it is published. */
  readonly actual: number | null;
}

/**
 * Turns operator half-hours into GB readings as of `now` (epoch seconds):
 * - a half-hour with `actual` → `upstream:uk-operator:actual`;
 * - the half-hour in progress at `now`, if it has no `actual` → a forecast issued at `now`, kept
 *   apart from readings; it is served as the one `upstream:uk-operator:forecast` reading while no
 *   later half-hour is settled (docs/api.md, "Data rules");
 * - every other half-hour without `actual` (future ones, older unsettled ones) is neither.
 * When `halfHours` repeats a start (overlapping fetches), the later entry wins unless it would
 * replace a settled figure with an unsettled one.
 */
export function operatorReadings(
  zone: string,
  halfHours: readonly OperatorHalfHour[],
  now: number,
): ZoneReadings {
  const byStart = new Map<number, OperatorHalfHour>();
  for (const halfHour of halfHours) {
    const earlier = byStart.get(halfHour.start);
    if (earlier?.actual != null && halfHour.actual === null) continue;
    byStart.set(halfHour.start, halfHour);
  }
  const started = [...byStart.values()]
    .filter(({ start }) => start <= now)
    .sort((a, b) => a.start - b.start);
  // Only the half-hour in progress may be a forecast: an unsettled entry in an older answer
  // (a backfill, a lagging reply) is not the newest half-hour that has started.
  const inProgress = Math.floor(now / HALF_HOUR) * HALF_HOUR;

  const readings: StoredReading[] = [];
  const forecasts: StoredForecast[] = [];
  for (const halfHour of started) {
    if (halfHour.actual !== null) {
      readings.push({
        zone,
        ts: halfHour.start,
        value: halfHour.actual,
        method: 'upstream:uk-operator:actual',
        complete: true,
        mix: null,
        lifecycle: null,
        direct: null,
      });
    } else if (halfHour.start === inProgress && halfHour.forecast !== null) {
      forecasts.push({
        zone,
        ts: halfHour.start,
        kind: 'uk-operator:intensity',
        issuedAt: now,
        value: halfHour.forecast,
      });
    }
  }
  return {
    readings,
    forecasts,
    quality: {
      zone,
      pointsStored: readings.length,
      incompleteHours: 0,
      clampedNegatives: 0,
      unknownCodes: [],
    },
  };
}

/** One operator half-hour of the generation mix: percentage of GB generation per fuel. */
export interface OperatorMixHalfHour {
  readonly start: number;
  /** `fuel` → `perc`, as published (imports included, not summing to exactly 100). */
  readonly shares: ReadonlyMap<string, number>;
}

/** What one fetch of a zone's mix feed gives: the mixes, and fuels the table does not know. */
export interface ZoneMixes {
  readonly mixes: readonly StoredMix[];
  /** Booked as `other`, and logged (docs/method.md). */
  readonly unknownCodes: readonly string[];
}

/**
 * GB's mix half-hours as stored mixes (docs/method.md, "Great Britain"): fuels mapped to
 * categories, imports left out of both sums, intensity = sum(share x factor) / sum(shares) on
 * each basis. A half-hour whose included shares sum to 0 is stored unpublished (both values
 * null); an unknown fuel is booked as `other`, like an unknown production code.
 * When `halfHours` repeats a start, the later entry wins: NESO range replies start one half-hour
 * before `from` (docs/upstreams.md §3.4), so stitched windows repeat the half-hour
 * where they meet, and the later fetch carries the later revision (the current mix is provisional).
 * Mixes come out in time order.
 */
export function operatorMixes(zone: string, halfHours: readonly OperatorMixHalfHour[]): ZoneMixes {
  const byStart = new Map<number, OperatorMixHalfHour>();
  for (const halfHour of halfHours) byStart.set(halfHour.start, halfHour);
  const unknown = new Set<string>();
  const mixes = [...byStart.values()]
    .sort((a, b) => a.start - b.start)
    .map((halfHour): StoredMix => {
      const shares = new Map<Category, number>();
      for (const [fuel, perc] of halfHour.shares) {
        const codeClass = NESO_FUELS.get(fuel);
        if (codeClass === undefined) unknown.add(fuel);
        if (codeClass !== undefined && isExcluded(codeClass)) continue;
        const category = (codeClass as Category | undefined) ?? 'other';
        shares.set(category, (shares.get(category) ?? 0) + Math.max(perc, 0));
      }
      const mix: Record<string, number> = {};
      for (const category of CATEGORIES) {
        const share = shares.get(category);
        if (share !== undefined) mix[category] = share;
      }
      const lifecycle = intensityOfMix(mix as Mix);
      return {
        zone,
        ts: halfHour.start,
        mix,
        lifecycle,
        direct: lifecycle === null ? null : intensityOfMix(mix, 'direct'),
      };
    });
  return { mixes, unknownCodes: [...unknown].sort() };
}
