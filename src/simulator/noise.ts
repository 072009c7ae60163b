/**
 * Deterministic noise as pure functions of their inputs. The simulator keeps no generated state:
 * any window of any zone is computed from (seed, zone, time) alone, so a year-long backfill costs
 * the same whether it is asked in one request or in a thousand.
 */

/**
 * The third input of each kind of draw, apart from every other kind's, so that no two kinds of
 * noise move together. The actuals take CHANNELS_PER_FUEL channels a fuel from 0 (two wind fuels
 * never move together); the wind and solar forecast errors as many a fuel from their own base.
 */
export const CHANNELS_PER_FUEL = 8;
export const NOISE_CHANNEL = {
  /** Whether a zone's hour has a gap in its mix, and which fuel it lacks (+1). */
  mixGap: 1000,
  /** The demand's slow and fast movements (+1). */
  demand: 1500,
  /** EIA's revisions of a published hour, per fuel (+ fuel index). */
  eiaRevision: 2000,
  nesoForecast: 3000,
  nesoActual: 3001,
  /** ENTSO-E's wind and solar forecast errors, per fuel (+ CHANNELS_PER_FUEL x fuel index). */
  windSolarError: 4000,
  loadError: 4100,
  generationError: 4200,
  eiaDemandForecast: 4300,
  /** Whether an A11 link publishes an hour (per link), and which way its quarters swing (+1). */
  flowGap: 5000,
  /** The trade on each border of the flow graphs (per border). */
  trade: 6000,
  /** How much each node of a flow graph would rather import or export (per node). */
  position: 6100,
} as const;

export function hashString(text: string): number {
  // FNV-1a: enough to spread zone codes over 32 bits.
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  }
  return hash >>> 0;
}

function mix(hash: number, value: number): number {
  // murmur3's finaliser applied after folding in each input.
  let h = (hash ^ value) | 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** A uniform number in [0, 1) determined by four integers (values beyond 32 bits wrap). */
export function unitNoise(a: number, b: number, c: number, d: number): number {
  return (mix(mix(mix(mix(0x9e3779b9, a), b), c), d) >>> 0) / 4294967296;
}

/**
 * Value noise in [0, 1) that varies smoothly with `x`: random knots at every integer, eased
 * between. Scale `x` to choose how fast it moves (x in days: a new weather situation per day).
 */
export function smoothNoise(a: number, b: number, c: number, x: number): number {
  const knot = Math.floor(x);
  return eased(unitNoise(a, b, c, knot), unitNoise(a, b, c, knot + 1), x - knot);
}

function eased(low: number, high: number, fraction: number): number {
  const ease = (1 - Math.cos(Math.PI * fraction)) / 2;
  return low * (1 - ease) + high * ease;
}

/**
 * `smoothNoise(a, b, c, x)` for a series of `x`, drawing each knot once while `x` moves slowly
 * (a year of hours asks a noise of days per day, not per hour): the same values.
 */
export class SmoothNoiseTrack {
  private knot = Number.NaN;
  private low = 0;
  private high = 0;

  constructor(
    private readonly a: number,
    private readonly b: number,
    private readonly c: number,
  ) {}

  at(x: number): number {
    const knot = Math.floor(x);
    if (knot !== this.knot) {
      this.low = knot === this.knot + 1 ? this.high : unitNoise(this.a, this.b, this.c, knot);
      this.high = unitNoise(this.a, this.b, this.c, knot + 1);
      this.knot = knot;
    }
    return eased(this.low, this.high, x - knot);
  }
}

/** 32 lowercase hex digits, like the mRID of a real ENTSO-E document. */
export function noiseHex(a: number, b: number, c: number): string {
  let hex = '';
  for (let part = 0; part < 4; part++) {
    hex += Math.floor(unitNoise(a, b, c, part) * 4294967296)
      .toString(16)
      .padStart(8, '0');
  }
  return hex;
}
