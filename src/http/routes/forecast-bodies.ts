import { formatTs } from '../../core/time.js';
import type { ForecastBasis, ForecastBook, ZoneForecast } from '../../forecast/book.js';
import { defaultForecastBasis } from '../../core/zones.js';
import { EncodedBody } from '../transport/response-cache.js';
import { round1, round1OrNull, UNIT } from '../../core/units.js';
import type { ForecastRequest } from '../contract/params.js';
import type { ForecastResponse } from '../contract/schemas.js';

/**
 * The bodies of `GET /v1/intensity/forecast` (extensions §4), used by the Fastify route and the
 * fast path alike so that both send the same bytes. A body is encoded once per (zone, basis,
 * horizon, covered intervals) and kept, with its ETag and its compressed variants made on demand,
 * until the forecast changes or time moves the horizon over one more interval.
 */

export const NOTE_NO_FORECAST =
  'no forecast for this zone yet: it needs at least 7 days of published values ' +
  '(and, for GB without a basis, the operator forecast); try again later.';
export const NOTE_PREPARING =
  'forecasts are being prepared (the server started recently); try again in a minute.';

/** A body as sent, kept while what it was built from stays the same. */
interface Prepared {
  readonly forecast: ZoneForecast | null;
  readonly count: number;
  readonly ready: boolean;
  readonly encoded: EncodedBody;
}

/** Bounded: 45 zones x 3 bases x 72 horizons at most, usually a few. */
const MAX_PREPARED_BODIES = 2000;

export class ForecastBodies {
  private readonly prepared = new Map<string, Prepared>();

  constructor(
    private readonly book: () => ForecastBook,
    /** Milliseconds since the epoch. */
    private readonly clock: () => number,
  ) {}

  /** The body answering `request` now (never an error: a zone without forecast gets count 0). */
  body({ zone, basis, horizonHours }: ForecastRequest): EncodedBody {
    const book = this.book();
    const forecast = book.forecast(zone.code, basis);
    const ready = book.ready !== false;
    const until = Math.floor(this.clock() / 1000) + horizonHours * 3600;
    const count = forecast
      ? Math.max(
          0,
          Math.min(
            forecast.values.length,
            Math.ceil((until - forecast.startTs) / forecast.stepSeconds),
          ),
        )
      : 0;
    const key = `${zone.code}|${basis ?? ''}|${horizonHours}`;
    const known = this.prepared.get(key);
    if (known && known.forecast === forecast && known.count === count && known.ready === ready) {
      return known.encoded;
    }
    const response = forecastResponse(
      zone.code,
      basis ?? defaultForecastBasis(zone.code),
      horizonHours,
      forecast,
      count,
      ready,
    );
    const encoded = new EncodedBody(Buffer.from(JSON.stringify(response)));
    if (this.prepared.size >= MAX_PREPARED_BODIES) this.prepared.clear();
    this.prepared.set(key, { forecast, count, ready, encoded });
    return encoded;
  }
}

function forecastResponse(
  zone: string,
  basis: ForecastBasis,
  horizonHours: number,
  forecast: ZoneForecast | null,
  covered: number,
  ready: boolean,
): ForecastResponse {
  // A value that is not a number is never served (as 0 or otherwise): the data ends before it.
  let count = 0;
  while (forecast && count < covered && Number.isFinite(forecast.values[count])) count++;
  if (!forecast || count === 0) {
    return {
      zone,
      unit: UNIT,
      basis,
      model: null,
      generated_at: null,
      horizon_hours: horizonHours,
      count: 0,
      note: ready ? NOTE_NO_FORECAST : NOTE_PREPARING,
      data: [],
    };
  }
  const data: ForecastResponse['data'] = [];
  for (let i = 0; i < count; i++) {
    data.push({
      ts: formatTs(forecast.startTs + i * forecast.stepSeconds),
      gco2eq_kwh: round1(forecast.values[i]!),
      p10: round1OrNull(forecast.p10[i]!),
      p90: round1OrNull(forecast.p90[i]!),
    });
  }
  return {
    zone,
    unit: UNIT,
    basis: forecast.basis,
    model: forecast.model,
    generated_at: formatTs(forecast.generatedAt),
    horizon_hours: horizonHours,
    count,
    data,
  };
}
