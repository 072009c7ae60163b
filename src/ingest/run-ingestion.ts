import type { Logger } from 'pino';
import type { ZoneReadings } from '../core/method.js';
import type { IngestReport, ZoneQuality } from '../core/reading.js';
import { floorToHour, HOUR } from '../core/time.js';
import type { SourceId, Zone } from '../core/zones.js';
import { systemClock, type Clock, type TimeWindow } from '../sources/http.js';
import type { Store } from '../storage/store.js';
import { type SourceAdapter, stopsSource } from './sources.js';
import { storeZoneReadings } from './store-readings.js';

/** Every run re-fetches this much before the newest stored hour: upstreams revise (method.md). */
export const REVISION_WINDOW_SECONDS = 72 * HOUR;

/** How far back a zone with nothing stored starts; older history is `gridco2 backfill`'s job. */
export const DEFAULT_INITIAL_WINDOW_SECONDS = 7 * 24 * HOUR;

/**
 * The furthest back an hourly run reaches, however stale a zone is: a zone that stopped
 * publishing must not make every run fetch an ever longer window. Older gaps are backfill's job.
 */
export const MAX_CATCH_UP_SECONDS = 7 * 24 * HOUR;

export interface IngestionOptions {
  readonly store: Store;
  readonly adapter: SourceAdapter;
  readonly logger: Logger;
  readonly initialWindowSeconds?: number;
  /** Stops the run between zones (and cuts retry waits short): graceful shutdown. */
  readonly signal?: AbortSignal;
}

/**
 * One ingestion pass of one source: for every zone, fetch from 72 h before its newest stored
 * hour (or the initial window) up to the current hour, compute, and store. A zone whose fetch
 * fails keeps what is stored and does not stop the others. The report is stored and logged.
 */
export async function runIngestion(options: IngestionOptions): Promise<IngestReport> {
  const { store, adapter, logger, signal } = options;
  const { clock } = adapter;
  const initialWindowSeconds = options.initialWindowSeconds ?? DEFAULT_INITIAL_WINDOW_SECONDS;
  const startedAt = Math.floor(clock.now() / 1000);
  // The hour in progress is asked for too: GB's forecast half-hour lives there.
  const toTs = floorToHour(startedAt) + HOUR;
  const quality: ZoneQuality[] = [];
  // Failure message → zones it hit: one request of EIA fails all its zones with one message.
  const failures = new Map<string, string[]>();
  const fail = (zone: string, message: string) =>
    failures.set(message, [...(failures.get(message) ?? []), zone]);
  const storeOutcome = async (fetched: ZoneReadings & { zone: string }, window: TimeWindow) => {
    try {
      quality.push(await storeZoneReadings(store, fetched.zone, fetched, window));
    } catch (error) {
      fail(fetched.zone, `not stored: ${String(error)}`);
      logger.error({ source: adapter.source, zone: fetched.zone, err: error }, 'store failed');
    }
  };

  let refused = false;
  let zonesDone = 0;
  try {
    for (const { window, zones } of await plan(store, adapter, toTs, initialWindowSeconds)) {
      if (signal?.aborted || refused) break;
      for await (const outcome of adapter.fetch(zones, window, signal)) {
        zonesDone += 1;
        if ('error' in outcome) {
          const { kind, message } = outcome.error;
          fail(outcome.zone, message);
          logger.warn({ source: adapter.source, zone: outcome.zone, kind }, message);
          refused ||= stopsSource(outcome.error);
        } else {
          await storeOutcome(outcome, window);
        }
      }
    }
  } catch (error) {
    if (!signal?.aborted) throw error;
  }
  const errors = [...failures].map(([message, zones]) => `${zones.join(', ')}: ${message}`);
  if (signal?.aborted && zonesDone < adapter.zones.length) {
    errors.push(`interrupted by shutdown after ${zonesDone} of ${adapter.zones.length} zones`);
  }

  const report: IngestReport = {
    source: adapter.source,
    startedAt,
    finishedAt: Math.floor(clock.now() / 1000),
    zones: quality.length,
    pointsStored: sum(quality, (zone) => zone.pointsStored),
    incompleteHours: sum(quality, (zone) => zone.incompleteHours),
    errors,
    quality,
  };
  await store.recordIngestReport(report);
  logReport(logger, report);
  for (const zone of quality) {
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
  };
  await store.recordIngestReport(report);
  return report;
}

/** The window of each zone; one shared window when the upstream fetches zones together. */
async function plan(
  store: Store,
  adapter: SourceAdapter,
  toTs: number,
  initialWindowSeconds: number,
): Promise<{ window: TimeWindow; zones: Zone[] }[]> {
  const starts = new Map<Zone, number>();
  for (const zone of adapter.zones) {
    const newest = await store.newestStoredTs(zone.code);
    const fromTs =
      newest === null
        ? toTs - initialWindowSeconds
        : Math.max(floorToHour(newest) - REVISION_WINDOW_SECONDS, toTs - MAX_CATCH_UP_SECONDS);
    starts.set(zone, Math.min(fromTs, toTs - HOUR));
  }
  if (adapter.zonesShareRequests) {
    const fromTs = Math.min(...starts.values());
    return [{ window: { fromTs, toTs }, zones: [...adapter.zones] }];
  }
  return [...starts].map(([zone, fromTs]) => ({ window: { fromTs, toTs }, zones: [zone] }));
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function sum<T>(items: readonly T[], pick: (item: T) => number): number {
  return items.reduce((total, item) => total + pick(item), 0);
}

/** The one line per source and run that operators read. */
export function logReport(logger: Logger, report: IngestReport): void {
  const line =
    `${report.source}: ${report.zones} zones, ${report.pointsStored} points stored, ` +
    `${report.incompleteHours} incomplete hours, ${plural(report.errors.length, 'error')}`;
  const fields = {
    source: report.source,
    zones: report.zones,
    pointsStored: report.pointsStored,
    incompleteHours: report.incompleteHours,
    errors: report.errors,
    seconds: report.finishedAt - report.startedAt,
  };
  if (report.errors.length > 0) logger.warn(fields, line);
  else logger.info(fields, line);
}
