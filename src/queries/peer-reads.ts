import type { Basis } from '../core/factors.js';
import { EM_STEP_SECONDS, hourlyMixes, hourlyReadings } from '../core/hourly.js';
import {
  type Accounting,
  CONSUMPTION_DEFAULT_BASIS,
  type Mix,
  type Reading,
} from '../core/reading.js';
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
 * /v1 serves. Each method is one answer's data, however many reads it takes; routes only shape.
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

  /** The accounting of a zone's values for this peer. */
  private async accountingOf(zone: Zone): Promise<Accounting> {
    if (this.preferred === 'production' || !hasConsumptionSeries(zone)) return 'production';
    const latest = await this.reads.current().latest(CONSUMPTION_DEFAULT_BASIS, 'consumption');
    return latest.some((reading) => reading.zone === zone.code) ? 'consumption' : 'production';
  }

  /** Published readings of a zone on `basis` with `from <= ts < to`. */
  async readingsIn(zone: Zone, from: number, to: number, basis: Basis): Promise<Reading[]> {
    const produced = await this.windowOf(zone, from, to, basis, 'production');
    if ((await this.accountingOf(zone)) === 'production') return produced;
    const consumed = new Map(
      (await this.windowOf(zone, from, to, basis, 'consumption')).map((reading) => [
        reading.ts,
        reading,
      ]),
    );
    return produced.map((reading) => consumed.get(reading.ts) ?? reading);
  }

  /** The newest published reading of a zone on `basis`, if any. */
  async newestReading(zone: Zone, basis: Basis): Promise<Reading | undefined> {
    const newestOf = async (accounting: Accounting) =>
      (await this.reads.current().latest(basis, accounting)).find(
        (reading) => reading.zone === zone.code,
      );
    const produced = await newestOf('production');
    if ((await this.accountingOf(zone)) === 'production') return produced;
    const consumed = await newestOf('consumption');
    return consumed && (!produced || consumed.ts >= produced.ts) ? consumed : produced;
  }

  private async windowOf(
    zone: Zone,
    from: number,
    to: number,
    basis: Basis,
    accounting: Accounting,
  ): Promise<Reading[]> {
    const { series, start, end } = await this.reads
      .current()
      .window(zone.code, from, to, this.maxPoints, basis, accounting);
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

  /** Hourly mixes of a zone in `[from, to)`, each with its traced mix where the peer reads it. */
  async hourlyMixesIn(zone: Zone, from: number, to: number): Promise<PeerMix[]> {
    const mixes = hourlyMixes(
      await this.mixesIn(zone, from, to),
      stepOf(zone),
      SOURCE_INFO[zone.source].mixUnit,
    );
    if ((await this.accountingOf(zone)) === 'production') return mixes;
    const traced = await this.reads.current().consumptionMixes(zone.code, from, to, this.maxPoints);
    const tracedAt = new Map(traced.map((point) => [point.ts, point]));
    return mixes.map((point) => {
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
