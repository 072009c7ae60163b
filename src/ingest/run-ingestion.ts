import type { Logger } from 'pino';
import type { ZoneReadings } from '../core/method.js';
import type { ZoneMixes } from '../core/uk-operator.js';
import type { FailureKind, IngestFailure, IngestReport, ZoneQuality } from '../core/reading.js';
import { floorToHour, HOUR } from '../core/time.js';
import type { Zone } from '../core/zones.js';
import { systemClock, type Clock, type TimeWindow } from '../sources/http.js';
import type { Store } from '../storage/store.js';
import { isForecastOutcome, type SourceAdapter, type ZoneOutcome } from '../sources/adapter.js';
import { createSourceStop } from './sources.js';
import { PendingChunk } from './pending-chunk.js';
import { addZoneForecasts } from './store-forecasts.js';
import { addZoneMixes } from './store-mixes.js';
import { addZoneReadings } from './store-readings.js';
import type { SourceId } from '../core/sources.js';

/** Every run re-fetches this much before the newest stored hour: upstreams revise (method.md). */
export const REVISION_WINDOW_SECONDS = 72 * HOUR;

/** How far back a zone with nothing stored starts; older history is `gridco2 backfill`'s job. */
export const DEFAULT_INITIAL_WINDOW_SECONDS = 7 * 24 * HOUR;

/**
 * The furthest back an hourly run reaches, however stale a zone is: a zone that stopped
 * publishing must not make every run fetch an ever longer window. Older gaps are backfill's job.
 */
export const MAX_CATCH_UP_SECONDS = 7 * 24 * HOUR;

/**
 * The longest one run of one source may take. A healthy run of ENTSO-E's 33 zones takes well
 * under a minute; a third of the hourly schedule leaves room for a slow upstream and its retries
 * while a hanging one can no longer hold a run for hours (issue 10, finding 9). Zones not reached
 * keep what is stored and are asked again by the next run.
 */
export const RUN_DEADLINE_MS = 20 * 60_000;

/**
 * The upstream forecasts each run asks (docs/upstreams.md §8.4): from 24 hours back (or from the
 * zone's newest stored hour when it is further back: what a run catches up, it catches up in
 * forecasts too) to 48 hours ahead.
 */
export const FORECAST_LOOKBACK_SECONDS = 24 * HOUR;
export const FORECAST_HORIZON_SECONDS = 48 * HOUR;

export interface IngestionOptions {
  readonly store: Store;
  readonly adapter: SourceAdapter;
  readonly logger: Logger;
  readonly initialWindowSeconds?: number;
  /** Stops the run between zones (and cuts retry waits short): graceful shutdown. */
  readonly signal?: AbortSignal;
  /** Bound of the whole run on the adapter's clock; RUN_DEADLINE_MS when absent. */
  readonly deadlineMs?: number;
}

/**
 * One ingestion pass of one source: for every zone, fetch from 72 h before its newest stored
 * hour (or the initial window) up to the current hour, compute, and store. A zone whose fetch
 * fails keeps what is stored and does not stop the others, unless the source is given up
 * (createSourceStop). A run ends early at its deadline or on `signal`; the zones it did not reach
 * are reported. The report is stored and logged, also when the run was cut short.
 */
export async function runIngestion(options: IngestionOptions): Promise<IngestReport> {
  const { store, adapter, logger, signal } = options;
  const { clock } = adapter;
  const initialWindowSeconds = options.initialWindowSeconds ?? DEFAULT_INITIAL_WINDOW_SECONDS;
  const deadlineMs = options.deadlineMs ?? RUN_DEADLINE_MS;
  const deadline = clock.now() + deadlineMs;
  const startedAt = Math.floor(clock.now() / 1000);
  // The hour in progress is asked for too: GB's forecast half-hour lives there.
  const toTs = floorToHour(startedAt) + HOUR;
  // Per zone; a zone with a second (mix) feed adds that feed's writes to its counters.
  const quality = new Map<string, ZoneQuality>();
  const addQuality = (zone: ZoneQuality) => {
    const earlier = quality.get(zone.zone);
    quality.set(
      zone.zone,
      earlier
        ? {
            ...earlier,
            pointsStored: earlier.pointsStored + zone.pointsStored,
            unknownCodes: [...new Set([...earlier.unknownCodes, ...zone.unknownCodes])],
          }
        : zone,
    );
  };
  const withoutData: string[] = [];
  // Failure message → zones it hit: one request of EIA fails all its zones with one message.
  const failures = new Map<string, string[]>();
  // The same by public kind, for the status note.
  const failureKinds = new Map<FailureKind, string[]>();
  // Each zone once per message and kind: GB's feeds (readings, mix, forecasts) fail alike.
  const fail = (zone: string, message: string, kind: FailureKind) => {
    const scrubbed = adapter.scrub(message);
    failures.set(scrubbed, [...new Set([...(failures.get(scrubbed) ?? []), zone])]);
    failureKinds.set(kind, [...new Set([...(failureKinds.get(kind) ?? []), zone])]);
  };
  let forecastsStored = 0;
  // What one fetch (one zone, or the zones of one shared request) gathers for its one write.
  interface Gathered {
    readonly pending: PendingChunk;
    readonly quality: ZoneQuality[];
    readonly zones: Set<string>;
    forecasts: number;
  }
  const gatherOutcome = async (
    gathered: Gathered,
    fetched: (ZoneReadings | ZoneMixes) & { zone: string },
    window: TimeWindow,
  ) => {
    try {
      if ('mixes' in fetched) {
        gathered.quality.push({
          zone: fetched.zone,
          pointsStored: await addZoneMixes(gathered.pending, fetched.zone, fetched, window),
          incompleteHours: 0,
          clampedNegatives: 0,
          unknownCodes: fetched.unknownCodes,
        });
      } else {
        if (fetched.readings.length === 0) withoutData.push(fetched.zone);
        gathered.quality.push(
          await addZoneReadings(gathered.pending, fetched.zone, fetched, window),
        );
      }
      gathered.zones.add(fetched.zone);
    } catch (error) {
      fail(fetched.zone, `not stored: ${String(error)}`, 'not-stored');
      logger.error({ source: adapter.source, zone: fetched.zone, err: error }, 'store failed');
    }
  };
  // A fetch's readings, mixes and forecasts are written together or not at all.
  const writeGathered = async ({ pending, quality: written, zones, forecasts }: Gathered) => {
    try {
      await pending.write();
      written.forEach(addQuality);
      forecastsStored += forecasts;
    } catch (error) {
      for (const zone of zones) fail(zone, `not stored: ${String(error)}`, 'not-stored');
      logger.error({ source: adapter.source, zones: [...zones], err: error }, 'store failed');
    }
  };

  const stopsSource = createSourceStop();
  // The forecast feeds have a stop of their own: their failures never give the source (and its
  // actuals) up, but once the rule trips no further forecast is asked in this run.
  const stopsForecasts = createSourceStop();
  let forecastsGivenUp: string | undefined;
  const takeForecasts = (gathered: Gathered, outcome: ZoneOutcome, window: TimeWindow) => {
    if ('error' in outcome) {
      const { kind, failure, message } = outcome.error;
      fail(outcome.zone, `forecasts: ${message}`, failure);
      logger.warn(
        { source: adapter.source, zone: outcome.zone, feed: 'forecasts', kind, failure },
        adapter.scrub(message),
      );
    } else if ('forecasts' in outcome && !('readings' in outcome)) {
      gathered.forecasts += addZoneForecasts(
        gathered.pending,
        outcome.zone,
        outcome.forecasts,
        window,
      );
      gathered.zones.add(outcome.zone);
    }
    const stop = stopsForecasts(outcome);
    if (stop !== null && forecastsGivenUp === undefined) {
      forecastsGivenUp = `forecasts given up for this run: ${stop}`;
      logger.warn({ source: adapter.source }, forecastsGivenUp);
    }
  };
  const tried = new Set<string>();
  // Why the run ends before its last zone, if it does.
  let cut: { kind: 'interrupted' | 'deadline' | 'stopped'; why: string } | undefined;
  const cutShort = () => {
    if (signal?.aborted) return { kind: 'interrupted' as const, why: 'interrupted' };
    if (clock.now() >= deadline) {
      const why = `run deadline of ${Math.round(deadlineMs / 1000)} s reached`;
      return { kind: 'deadline' as const, why };
    }
    return undefined;
  };
  // Ending a run tells the adapter to start no further zone; outcomes it already has (the other
  // zones of a failed or finished EIA query) are still taken, so no answered zone is lost.
  const noFurtherZone = new AbortController();
  const onAbort = () => noFurtherZone.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  const limits = { signal: noFurtherZone.signal, deadline };
  try {
    const planned = await plan(store, adapter, toTs, initialWindowSeconds);
    for (const { window, zones, forecastWindow } of planned) {
      if ((cut ??= cutShort())) break;
      const forecasts = forecastsGivenUp === undefined ? { window: forecastWindow } : undefined;
      const gathered: Gathered = {
        pending: new PendingChunk(store),
        quality: [],
        zones: new Set(),
        forecasts: 0,
      };
      try {
        for await (const outcome of adapter.fetch(zones, window, limits, forecasts)) {
          tried.add(outcome.zone);
          if (isForecastOutcome(outcome)) {
            takeForecasts(gathered, outcome, forecastWindow);
            if ((cut ??= cutShort())) noFurtherZone.abort();
            continue;
          }
          if ('error' in outcome) {
            const { kind, failure, message } = outcome.error;
            fail(outcome.zone, message, failure);
            logger.warn(
              { source: adapter.source, zone: outcome.zone, kind, failure },
              adapter.scrub(message),
            );
          } else if ('readings' in outcome || 'mixes' in outcome) {
            await gatherOutcome(gathered, outcome, window);
          }
          const stop = stopsSource(outcome);
          if (stop !== null) cut ??= { kind: 'stopped', why: `source given up: ${stop}` };
          if ((cut ??= cutShort())) noFurtherZone.abort();
        }
      } finally {
        // What was answered before an interruption is kept, as before it.
        await writeGathered(gathered);
      }
    }
  } catch (error) {
    if (!signal?.aborted) throw error;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  if (signal?.aborted) cut = cutShort();
  const errors = [...failures].map(([message, zones]) => `${zones.join(', ')}: ${message}`);
  if (forecastsGivenUp !== undefined) errors.push(forecastsGivenUp);
  const untried = adapter.zones.filter((zone) => !tried.has(zone.code)).map((zone) => zone.code);
  if (cut && untried.length > 0) {
    errors.push(
      `${cut.why} after ${tried.size} of ${adapter.zones.length} zones; ` +
        `not tried: ${untried.join(', ')}`,
    );
    failureKinds.set(cut.kind, [...(failureKinds.get(cut.kind) ?? []), ...untried]);
  }

  const stored = [...quality.values()];
  const report: IngestReport = {
    source: adapter.source,
    startedAt,
    finishedAt: Math.floor(clock.now() / 1000),
    zones: stored.length,
    pointsStored: sum(stored, (zone) => zone.pointsStored),
    incompleteHours: sum(stored, (zone) => zone.incompleteHours),
    errors,
    quality: stored,
    failures: [...failureKinds].map(([kind, zones]): IngestFailure => ({ kind, zones })),
    zonesWithoutData: withoutData,
    forecastsStored,
  };
  await store.recordIngestReport(report);
  logReport(logger, report);
  for (const zone of stored) {
    // method.md: an unknown production code is booked as other, and logged.
    if (zone.unknownCodes.length > 0) {
      logger.warn(
        { source: adapter.source, zone: zone.zone, codes: zone.unknownCodes },
        `${zone.zone}: unknown production codes booked as other: ${zone.unknownCodes.join(', ')}`,
      );
    }
  }
  return report;
}

/** Records that a source did not run because its key is missing, so status readers see why. */
export async function reportDisabledSource(
  store: Store,
  source: SourceId,
  reason: string,
  clock: Clock = systemClock,
): Promise<IngestReport> {
  const now = Math.floor(clock.now() / 1000);
  const report: IngestReport = {
    source,
    startedAt: now,
    finishedAt: now,
    zones: 0,
    pointsStored: 0,
    incompleteHours: 0,
    errors: [`not configured: ${reason}`],
    quality: [],
    failures: [{ kind: 'not-configured', zones: [] }],
    zonesWithoutData: [],
  };
  await store.recordIngestReport(report);
  return report;
}

/**
 * The window of each zone, and of its upstream forecasts; one shared window when the upstream
 * fetches zones together. `toTs` is the end of the hour in progress.
 */
async function plan(
  store: Store,
  adapter: SourceAdapter,
  toTs: number,
  initialWindowSeconds: number,
): Promise<{ window: TimeWindow; zones: Zone[]; forecastWindow: TimeWindow }[]> {
  const nowHour = toTs - HOUR;
  const starts = new Map<Zone, { fromTs: number; forecastFromTs: number }>();
  for (const zone of adapter.zones) {
    const newest = await store.newestStoredTs(zone.code);
    const fromTs = Math.min(
      newest === null
        ? toTs - initialWindowSeconds
        : Math.max(floorToHour(newest) - REVISION_WINDOW_SECONDS, toTs - MAX_CATCH_UP_SECONDS),
      toTs - HOUR,
    );
    const forecastFromTs = Math.max(
      fromTs,
      Math.min(newest === null ? fromTs : floorToHour(newest), nowHour - FORECAST_LOOKBACK_SECONDS),
    );
    starts.set(zone, { fromTs, forecastFromTs });
  }
  const forecastToTs = nowHour + FORECAST_HORIZON_SECONDS;
  if (adapter.zonesShareRequests) {
    const all = [...starts.values()];
    return [
      {
        window: { fromTs: Math.min(...all.map(({ fromTs }) => fromTs)), toTs },
        zones: [...adapter.zones],
        forecastWindow: {
          fromTs: Math.min(...all.map(({ forecastFromTs }) => forecastFromTs)),
          toTs: forecastToTs,
        },
      },
    ];
  }
  return [...starts].map(([zone, { fromTs, forecastFromTs }]) => ({
    window: { fromTs, toTs },
    zones: [zone],
    forecastWindow: { fromTs: forecastFromTs, toTs: forecastToTs },
  }));
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function sum<T>(items: readonly T[], pick: (item: T) => number): number {
  return items.reduce((total, item) => total + pick(item), 0);
}

/**
 * The one line per source and run that operators read. Zones that answered without data are a
 * warning, not an error: see the ingest command for why they do not fail it.
 */
export function logReport(logger: Logger, report: IngestReport): void {
  const withoutData = report.zonesWithoutData ?? [];
  const line =
    `${report.source}: ${report.zones} zones, ${report.pointsStored} points stored, ` +
    `${report.incompleteHours} incomplete hours, ${plural(report.errors.length, 'error')}` +
    (withoutData.length > 0 ? `, no data returned for ${plural(withoutData.length, 'zone')}` : '') +
    (report.forecastsStored
      ? `, ${plural(report.forecastsStored, 'upstream forecast')} stored`
      : '');
  const fields = {
    source: report.source,
    zones: report.zones,
    pointsStored: report.pointsStored,
    incompleteHours: report.incompleteHours,
    errors: report.errors,
    failures: report.failures,
    zonesWithoutData: withoutData,
    forecastsStored: report.forecastsStored ?? 0,
    seconds: report.finishedAt - report.startedAt,
  };
  if (report.errors.length > 0 || withoutData.length > 0) logger.warn(fields, line);
  else logger.info(fields, line);
}
