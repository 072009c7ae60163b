import type { StoredForecast } from '../../src/core/reading.js';
import type { ForecastKind } from '../../src/core/sources.js';
import type { Store } from '../../src/storage/store.js';

/** A zone's stored forecasts of `kind` in a window as rows (the store reads them as columns). */
export async function storedForecasts(
  store: Pick<Store, 'forecastColumnsInWindow'>,
  zone: string,
  kind: ForecastKind,
  fromTs: number,
  toTs: number,
): Promise<StoredForecast[]> {
  const { ts, issuedAt, value } = await store.forecastColumnsInWindow(zone, kind, fromTs, toTs);
  return Array.from(ts, (start, k) => ({
    zone,
    ts: start,
    kind,
    issuedAt: issuedAt[k]!,
    value: value[k]!,
  }));
}
