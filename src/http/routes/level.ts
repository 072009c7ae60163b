import type { FastifyInstance } from 'fastify';
import {
  LEVEL_THRESHOLDS,
  LevelReference,
  levelOf,
  MIN_REFERENCE_DAYS,
  REFERENCE_DAYS,
  referenceIsEnough,
  referenceWindow,
} from '../../core/level.js';
import type { ZoneReading } from '../../core/reading.js';
import { formatTs } from '../../core/time.js';
import { toTenths, UNIT } from '../../core/units.js';
import type { Zone } from '../../core/zones.js';
import type { ForecastBook, ZoneForecast } from '../../forecast/book.js';
import { API_ERRORS } from '../contract/errors.js';
import { CACHE_CONTROL } from '../contract/headers.js';
import { sendEncoded } from '../transport/negotiate.js';
import {
  basisOfBody,
  interpretLevel,
  LEVEL_PARAMS,
  type LevelRequest,
  type Offered,
  readParams,
} from '../contract/params.js';
import { EncodedBody } from '../transport/response-cache.js';
import { LevelQuery, type LevelResponse } from '../contract/schemas.js';
import { jsonRoute, publishedValuesRead, type LimitHook } from './route-options.js';
import type { ReadLatest, ReadPoints, ReadVersion } from '../../queries/signal-reads.js';

/**
 * `GET /v1/intensity/level` (extensions §11): for the newest reading and each forecast interval
 * of a zone, its percentile within the zone's own trailing 30 days and the level word of the one
 * thresholds table (core/level.ts). Bodies depend only on the data and the forecasts, so they are
 * kept until the data version or a zone's forecast changes, with their compressed variants (br or
 * gzip as accepted, as the data endpoints send them); the sorted reference of a zone is kept the
 * same way.
 */

/** The bands in words, from the one table: "very-low below 10, ..., very-high from 90". */
const LEVEL_BANDS = [
  ...Object.entries(LEVEL_THRESHOLDS).map(([level, upper]) => `${level} below ${upper}`),
  `very-high from ${LEVEL_THRESHOLDS.high}`,
].join(', ');

export interface LevelDeps {
  readonly limit: LimitHook;
  readonly points: ReadPoints;
  readonly latest: ReadLatest;
  readonly version: ReadVersion;
  readonly forecasts: () => ForecastBook;
  readonly offered: Offered;
}

type LevelEntry = LevelResponse['data'][number];

/** A zone's sorted reference, kept while its newest reading and the data version stay. */
interface KeptReference {
  readonly version: number;
  readonly newestTs: number;
  readonly reference: LevelReference;
}

class LevelBodies {
  private readonly references = new Map<string, KeptReference>();
  private readonly bodies = new Map<
    string,
    { version: number; forecasts: unknown[]; body: EncodedBody }
  >();

  constructor(private readonly deps: Omit<LevelDeps, 'limit' | 'offered'>) {}

  async body(asked: LevelRequest): Promise<EncodedBody> {
    const version = this.deps.version();
    const book = this.deps.forecasts();
    // Consumption values have no forecast (extensions §15): the newest value's level alone.
    const forecasts = asked.zones.map((zone) =>
      asked.accounting === 'consumption' ? null : book.forecast(zone.code, asked.basis),
    );
    const key = `${asked.accounting}|${asked.basis ?? ''}|${asked.horizonHours}|${asked.single ?? ''}|${asked.zones.map((zone) => zone.code).join(',')}`;
    const kept = this.bodies.get(key);
    if (
      version !== undefined &&
      kept?.version === version &&
      kept.forecasts.every((forecast, i) => forecast === forecasts[i])
    ) {
      return kept.body;
    }
    const latest = await this.deps.latest(asked.basis, asked.accounting);
    const newestOf = new Map(latest.map((reading) => [reading.zone, reading]));
    const data: LevelEntry[] = [];
    for (const [i, zone] of asked.zones.entries()) {
      const newest = newestOf.get(zone.code);
      if (!newest) continue;
      data.push(await this.entry(zone, asked, newest, forecasts[i] ?? null, version));
    }
    if (asked.single !== undefined && data.length === 0) {
      throw API_ERRORS.unknownZone(asked.single);
    }
    const body: LevelResponse = {
      unit: UNIT,
      ...basisOfBody(asked),
      window_days: REFERENCE_DAYS,
      thresholds: { ...LEVEL_THRESHOLDS },
      data,
    };
    const encoded = new EncodedBody(Buffer.from(JSON.stringify(body)));
    if (version !== undefined) {
      // Bounded: zone lists are few in practice; a flood of distinct lists starts it again.
      if (this.bodies.size >= 512) this.bodies.clear();
      this.bodies.set(key, { version, forecasts, body: encoded });
    }
    return encoded;
  }

  private async entry(
    zone: Zone,
    asked: LevelRequest,
    newest: ZoneReading,
    forecast: ZoneForecast | null,
    version: number | undefined,
  ): Promise<LevelEntry> {
    const step = zone.resolutionMin * 60;
    const window = referenceWindow(newest.ts, step);
    const reference = await this.reference(zone.code, asked, newest.ts, window, version);
    const enough = referenceIsEnough(reference.count, step);
    const place = (tenths: number) => {
      const percentile = enough ? reference.percentile(tenths) : null;
      return { percentile, level: percentile === null ? null : levelOf(percentile) };
    };
    const nowTenths = toTenths(newest.value);
    const until = newest.ts + asked.horizonHours * 3600;
    const intervals: LevelEntry['forecast'] = [];
    if (forecast && asked.horizonHours > 0) {
      for (let i = 0; i < forecast.values.length; i++) {
        const ts = forecast.startTs + i * forecast.stepSeconds;
        if (ts <= newest.ts) continue;
        if (ts > until) break;
        const tenths = toTenths(forecast.values[i]!);
        intervals.push({ ts: formatTs(ts), gco2eq_kwh: tenths / 10, ...place(tenths) });
      }
    }
    return {
      zone: zone.code,
      reference: { from: formatTs(window.from), to: formatTs(window.to), count: reference.count },
      now: {
        ts: formatTs(newest.ts),
        gco2eq_kwh: nowTenths / 10,
        method: newest.method,
        ...place(nowTenths),
      },
      forecast: intervals,
      ...(!enough && {
        note:
          `the reference window holds ${reference.count} values, fewer than ${MIN_REFERENCE_DAYS} ` +
          'days: no percentile or level until the zone has more history.',
      }),
    };
  }

  private async reference(
    zone: string,
    { basis, accounting }: LevelRequest,
    newestTs: number,
    window: { from: number; to: number },
    version: number | undefined,
  ): Promise<LevelReference> {
    const key = `${zone}|${accounting}|${basis ?? ''}`;
    const kept = this.references.get(key);
    if (version !== undefined && kept?.version === version && kept.newestTs === newestTs) {
      return kept.reference;
    }
    const points = await this.deps.points(zone, basis, window.from, window.to, accounting);
    const reference = new LevelReference(points.tenths);
    if (version !== undefined) this.references.set(key, { version, newestTs, reference });
    return reference;
  }
}

export function registerLevel(app: FastifyInstance, deps: LevelDeps): void {
  const bodies = new LevelBodies(deps);
  app.get(
    '/v1/intensity/level',
    jsonRoute({
      summary: 'Level of the newest reading and the forecast, relative to the zone',
      description:
        "The percentile of each value within the zone's own published values of the 30 days " +
        'ending with its newest reading (mid-rank: 100 * (count(x < v) + 0.5 * count(x == v)) ' +
        `/ n), and its level: ${LEVEL_BANDS}.`,
      operationId: 'getIntensityLevel',
      querystring: LevelQuery,
      ok: ['LevelResponse', 'The level of every zone asked that has a reading.'],
      ...publishedValuesRead(CACHE_CONTROL.level, deps.limit),
    }),
    async (request, reply): Promise<Buffer> =>
      sendEncoded(
        request,
        reply,
        await bodies.body(interpretLevel(readParams(request.url, LEVEL_PARAMS), deps.offered)),
      ),
  );
}
