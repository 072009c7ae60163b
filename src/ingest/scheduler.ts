import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { IngestReport } from '../core/reading.js';
import type { Clock } from '../core/time.js';
import { systemClock } from '../sources/http.js';
import type { Store } from '../storage/store.js';
import { ingestSource } from './ingest-source.js';
import type { SourceDependencies } from './sources.js';
import { SOURCES, type SourceId } from '../core/sources.js';

/** setTimeout/clearTimeout, injected so tests drive the schedule. */
export interface Timers {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const systemTimers: Timers = {
  set: (callback, ms) => setTimeout(callback, ms).unref(),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface SchedulerOptions extends SourceDependencies {
  readonly config: Config;
  readonly store: Store;
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly timers?: Timers;
  /** Time between the starts of two runs of a source. */
  readonly intervalMs?: number;
  /** Delay of the first run after start: soon, but after the server is listening. */
  readonly firstRunDelayMs?: number;
  /** Told when a run ends, with its report (undefined: the run threw): the service's metrics. */
  readonly onRun?: (source: SourceId, report: IngestReport | undefined) => void;
}

export interface IngestionScheduler {
  /** Cancels future runs, lets the runs in progress stop at their next zone, and waits for them. */
  stop(): Promise<void>;
}

/**
 * The hourly ingestion inside `gridco2 serve`: every configured source runs on its own schedule,
 * so a slow upstream does not delay the others; a run never overlaps the previous one of its
 * source. A source without its key is logged once and reported as not configured.
 */
export function startIngestionScheduler(options: SchedulerOptions): IngestionScheduler {
  const {
    logger,
    clock = systemClock,
    timers = systemTimers,
    intervalMs = 3600_000,
    firstRunDelayMs = 5_000,
  } = options;
  const shutdown = new AbortController();
  const handles = new Set<unknown>();
  const running = new Set<Promise<void>>();
  /** Keeps background work visible to stop(); a failure is logged, never thrown. */
  const track = (work: () => Promise<unknown>, failure: string) => {
    const tracked: Promise<void> = work()
      .then(
        () => undefined,
        (error: unknown) => logger.error({ err: error }, failure),
      )
      .finally(() => running.delete(tracked));
    running.add(tracked);
    return tracked;
  };

  for (const source of SOURCES) {
    // The scheduler's options are the source's dependencies too (fetch, http: tests set them).
    const ingestion = ingestSource({ ...options, source, clock });
    if (ingestion.disabledReason !== null) {
      // Reported once, never scheduled: its key is read only at start.
      void track(() => ingestion.pass(shutdown.signal), `${source}: could not record the report`);
      continue;
    }
    const schedule = (delayMs: number) => {
      const handle = timers.set(() => {
        handles.delete(handle);
        const startedMs = clock.now();
        let report: IngestReport | undefined;
        void track(async () => {
          report = await ingestion.pass(shutdown.signal);
        }, `${source} ingestion failed`).finally(() => {
          options.onRun?.(source, report);
          if (!shutdown.signal.aborted) schedule(Math.max(0, startedMs + intervalMs - clock.now()));
        });
      }, delayMs);
      handles.add(handle);
    };
    schedule(firstRunDelayMs);
  }

  return {
    async stop() {
      shutdown.abort();
      for (const handle of handles) timers.clear(handle);
      handles.clear();
      await Promise.all(running);
    },
  };
}
