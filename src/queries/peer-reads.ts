import type { Basis } from '../core/factors.js';
import { EM_STEP_SECONDS, hourlyMixes, hourlyReadings } from '../core/hourly.js';
import type { Accounting, Mix, Reading } from '../core/reading.js';
import { SOURCE_INFO } from '../core/sources.js';
import { HOUR } from '../core/time.js';
import { hasConsumptionSeries, type Zone } from '../core/zones.js';
import type { ConsumptionMixPoint, MixPoint } from '../read/read-model.js';
import type { Reads } from '../read/reads.js';

/** An hourly mix, and where the zone's values are consumption-based, its traced mix (§15). */
export interface PeerMix {
  readonly ts: number;
  readonly mix: Mix;
  readonly traced?: ConsumptionMixPoint;
}

/**
 * What the compatibility APIs read, as readings and mixes in their shapes: the same published
 * series and mixes /v1 serves, through the one read layer, so a peer's client sees the values
 * /v1 serves. Each method is one answer's data, read with one call of the read model (a fallback
 * to older data, for a zone far behind, takes a second); routes only shape.
 *
 * A peer whose own source publishes consumption-based values (Electricity Maps) reads them with
 * `preferred: 'consumption'`: a zone's consumption value of each hour where it has one, else its
 * production value (GB, a server without flows, hours from before flows were ingested, or the
 * newest hour until its consumption value is traced).
 */
export class PeerReads {
  /** `maxPoints`: the most points one read hands out (the contract's MAX_POINTS). */
  constructor(
    private readonly reads: Reads,
    private readonly maxPoints: number,
    private readonly preferred: Accounting = 'production',
  ) {}

  /** Whether this peer reads a zone's consumption values where they exist (§15, Compat). */
  private readsConsumption(zone: Zone): boolean {
    return this.preferred === 'consumption' && hasConsumptionSeries(zone);
  }

  /** Published readings of a zone on `basis` with `from <= ts < to`: one read. */
  async readingsIn(zone: Zone, from: number, to: number, basis: Basis): Promise<Reading[]> {
    if (!this.readsConsumption(zone)) return this.windowOf(zone, from, to, basis);
    return this.reads.current().consumptionWhereTraced(zone.code, from, to, this.maxPoints, basis);
  }

  /** The newest published reading of a zone on `basis`, if any: one read. */
  async newestReading(zone: Zone, basis: Basis): Promise<Reading | undefined> {
    const model = this.reads.current();
    if (this.readsConsumption(zone)) return model.newestWhereTraced(zone.code, basis);
    return (await model.latest(basis)).find((reading) => reading.zone === zone.code);
  }

  private async windowOf(zone: Zone, from: number, to: number, basis: Basis): Promise<Reading[]> {
    const { series, start, end } = await this.reads
      .current()
      .window(zone.code, from, to, this.maxPoints, basis);
    const readings: Reading[] = [];
    for (let i = start; i < end; i++) {
      readings.push({ ts: series.ts(i), value: series.value(i), method: series.method(i) });
    }
    return readings;
  }

  /**
   * Readings of a zone in `[from, to)` as Electricity Maps serves them, hourly: a half-hourly
   * zone (GB) as the means of its whole hours.
   */
  async hourlyReadingsIn(zone: Zone, from: number, to: number, basis: Basis): Promise<Reading[]> {
    return hourlyReadings(await this.readingsIn(zone, from, to, basis), stepOf(zone));
  }

  /** The newest whole hour of a zone, if any. */
  async newestHourlyReading(zone: Zone, basis: Basis): Promise<Reading | undefined> {
    const newest = await this.newestReading(zone, basis);
    if (!newest || stepOf(zone) >= EM_STEP_SECONDS) return newest;
    const hour = newest.ts - (newest.ts % EM_STEP_SECONDS);
    const to = newest.ts + stepOf(zone);
    return (await this.hourlyReadingsIn(zone, hour - EM_STEP_SECONDS, to, basis)).at(-1);
  }

  /**
   * The hourly readings of the 24 hours up to `now`; for a zone more than 24 hours behind, the
   * 24 hours up to its newest reading, not an empty list (clients index history[0]).
   */
  async recentHourlyReadings(zone: Zone, basis: Basis, now: number): Promise<Reading[]> {
    const readings = await this.hourlyReadingsIn(zone, now - 24 * HOUR, now, basis);
    if (readings.length > 0) return readings;
    const newest = await this.newestReading(zone, basis);
    if (!newest) return [];
    const end = newest.ts + stepOf(zone);
    return this.hourlyReadingsIn(zone, end - 24 * HOUR, end, basis);
  }

  /**
   * Hourly mixes of a zone in `[from, to)`, each with its traced mix where the peer reads it:
   * one read.
   */
  async hourlyMixesIn(zone: Zone, from: number, to: number): Promise<PeerMix[]> {
    const hourly = (mixes: readonly MixPoint[]) =>
      hourlyMixes(mixes, stepOf(zone), SOURCE_INFO[zone.source].mixUnit);
    if (!this.readsConsumption(zone)) return hourly(await this.mixesIn(zone, from, to));
    const { mixes, traced } = await this.reads
      .current()
      .mixesWithTraced(zone.code, from, to, this.maxPoints);
    const tracedAt = new Map(traced.map((point) => [point.ts, point]));
    return hourly(mixes).map((point) => {
      const tracedPoint = tracedAt.get(point.ts);
      return tracedPoint ? { ...point, traced: tracedPoint } : point;
    });
  }

  /**
   * The hourly mixes of the 24 hours up to `now`; for a zone more than 24 hours behind, the 24
   * hours up to its newest mix (within 100 days), not an empty list.
   */
  async recentHourlyMixes(zone: Zone, now: number): Promise<PeerMix[]> {
    const mixes = await this.hourlyMixesIn(zone, now - 24 * HOUR, now);
    if (mixes.length > 0) return mixes;
    const newest = (await this.mixesIn(zone, now - 100 * 24 * HOUR, now)).at(-1);
    if (!newest) return [];
    const end = newest.ts + stepOf(zone);
    return this.hourlyMixesIn(zone, end - 24 * HOUR, end);
  }

  private mixesIn(zone: Zone, from: number, to: number): Promise<MixPoint[]> {
    return this.reads.current().mixes(zone.code, from, to, this.maxPoints);
  }
}

/** A zone's interval, seconds. */
export const stepOf = (zone: Zone): number => zone.resolutionMin * 60;
