import type { ForecastBasis } from '../core/forecast/backtest.js';
import type { UpstreamInputs, ZoneInputs } from '../core/forecast/zone-state.js';
import { IssuedSeries, regularSeries, type Grid } from '../core/forecast/series.js';
import type { Mix } from '../core/reading.js';
import { SOURCE_INFO, type SourceId, type ForecastKind } from '../core/sources.js';
import { findZone, ownValueIsLifecycle, type Zone } from '../core/zones.js';
import type { Store } from '../storage/store.js';

/** What the forecasts read from the store: one zone's values on one basis and its upstream inputs. */

/** The upstream forecasts of a source (core/sources.ts), by the model input they feed. */
const upstreamKinds = (
  source: SourceId,
): Readonly<Partial<Record<keyof UpstreamInputs, ForecastKind>>> =>
  SOURCE_INFO[source].modelInputs as Readonly<Partial<Record<keyof UpstreamInputs, ForecastKind>>>;

/** The bases every zone is forecast on: both bases, and an operator's own figure as its default. */
export function forecastBases(zoneCode: string): ForecastBasis[] {
  return ownValueIsLifecycle(zoneCode)
    ? ['lifecycle', 'direct']
    : ['operator', 'lifecycle', 'direct'];
}

const READ_LIMIT = 10_000_000;

/**
 * Where a zone's inputs are read: its values from `fromTs`, the upstream forecasts' intervals
 * from `upstreamFromTs`, both up to `gridEndTs`, where the grid ends (past the data, for the
 * forecast's slots).
 */
export interface InputsWindow {
  readonly fromTs: number;
  readonly upstreamFromTs: number;
  readonly gridEndTs: number;
  /**
   * Only the upstream forecasts issued by this time (a backtest's last issue time, as far as its
   * stored state's digest reaches): those after it are seen by no issue, and would make models
   * apply that no issue could use (GB's first fw48h, collected live, changing the candidates of
   * a backtest that ends days before it).
   */
  readonly issuedBy?: number;
}

/** What every basis of a zone reads alike: the upstream forecasts, the published generation. */
export type SharedInputs = Pick<ZoneInputs, 'upstream' | 'generation'>;

/**
 * A zone's values on `basis` with `fromTs <= ts < gridEndTs`, on a grid reaching `gridEndTs`, and
 * the upstream forecasts of intervals in `[upstreamFromTs, gridEndTs)`; `shared`: those of
 * another basis read on the same window.
 */
export async function loadZoneInputs(
  store: Store,
  zoneCode: string,
  basis: ForecastBasis,
  window: InputsWindow,
  shared?: SharedInputs,
): Promise<ZoneInputs> {
  const { zone, grid } = zoneGrid(zoneCode, window);
  const readings = await store.readingsInWindow(
    zone.code,
    grid.startTs,
    window.gridEndTs,
    READ_LIMIT,
    basis === 'operator' ? undefined : basis,
  );
  const { upstream, generation } = shared ?? (await loadSharedInputs(store, zoneCode, window));
  return {
    actual: regularSeries(readings, grid),
    upstream,
    ...(generation && { generation }),
    publicationLagSeconds: SOURCE_INFO[zone.source].publicationLagSeconds,
  };
}

/** The inputs of a zone that `loadZoneInputs` reads alike on every basis. */
export async function loadSharedInputs(
  store: Store,
  zoneCode: string,
  window: InputsWindow,
): Promise<SharedInputs> {
  const { zone, grid } = zoneGrid(zoneCode, window);
  const upstream: Partial<Record<keyof UpstreamInputs, IssuedSeries>> = {};
  const issuedBy = window.issuedBy ?? Number.POSITIVE_INFINITY;
  for (const [input, kind] of Object.entries(upstreamKinds(zone.source))) {
    const forecasts = await store.forecastColumnsInWindow(
      zone.code,
      kind,
      window.upstreamFromTs,
      window.gridEndTs,
    );
    if (forecasts.issuedAt.some((issuedAt) => issuedAt <= issuedBy)) {
      upstream[input as keyof UpstreamInputs] = IssuedSeries.fromColumns(forecasts, grid, issuedBy);
    }
  }
  // Wind and solar forecasts without a load or generation forecast: the published generation's
  // hour-of-week mean stands in for the load (core/forecast/upstream-regression.ts). Read only
  // then: mixes are heavier.
  const needsGeneration =
    (upstream.wind || upstream.solar) && !(upstream.load || upstream.generation);
  const generation = needsGeneration
    ? regularSeries(
        (await store.mixesInWindow(zone.code, grid.startTs, window.gridEndTs, READ_LIMIT)).map(
          ({ ts, mix }) => ({ ts, value: totalGeneration(mix) }),
        ),
        grid,
      )
    : undefined;
  return { upstream, ...(generation && { generation }) };
}

/** The zone and the grid its inputs are laid on. */
function zoneGrid(zoneCode: string, window: InputsWindow): { zone: Zone; grid: Grid } {
  const zone = findZone(zoneCode);
  if (!zone) throw new Error(`unknown zone ${zoneCode}`);
  const step = zone.resolutionMin * 60;
  const startTs = Math.floor(window.fromTs / step) * step;
  return {
    zone,
    grid: { startTs, step, length: Math.ceil((window.gridEndTs - startTs) / step) },
  };
}

/** MWh generated in the zone: storage and imports are not generation (docs/method.md). */
function totalGeneration(mix: Mix): number {
  let total = 0;
  for (const [category, mwh] of Object.entries(mix)) {
    if (category !== 'storage' && category !== 'imports' && mwh > 0) total += mwh;
  }
  return total;
}
