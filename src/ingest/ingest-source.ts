import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { graphsFedBy, keepConsumptionUp } from '../consumption/keep-up.js';
import type { IngestReport } from '../core/reading.js';
import type { SourceAdapter } from '../sources/adapter.js';
import { systemClock } from '../sources/http.js';
import type { Store } from '../storage/store.js';
import { reportDisabledSource, runIngestion } from './run-ingestion.js';
import { createSourceAdapter, sourceDisabledReason, type SourceDependencies } from './sources.js';
import type { SourceId } from '../core/sources.js';

export interface IngestSourceOptions extends SourceDependencies {
  readonly config: Config;
  readonly store: Store;
  readonly logger: Logger;
  readonly source: SourceId;
}

/** One configured source, ready for its ingestion passes. */
export interface SourceIngestion {
  readonly source: SourceId;
  /** Why the source cannot run with this configuration (its key is not set), or null. */
  readonly disabledReason: string | null;
  /** Its adapter, undefined when it is disabled: its facts plan a backfill (`gridco2 demo`). */
  readonly adapter: SourceAdapter | undefined;
  /**
   * One ingestion pass (runIngestion), then the consumption series of the flow graphs the source
   * feeds brought up to date (keepConsumptionUp; not after an interrupted pass: the next one
   * does it); or for a disabled source the log line and the stored report that say why it did not
   * run. Either way the report is returned.
   */
  pass(signal: AbortSignal, initialWindowSeconds?: number): Promise<IngestReport>;
}

/**
 * A source as the scheduler of `gridco2 serve`, `gridco2 ingest` and `gridco2 demo` all run it.
 * The adapter is made once here, so passes of the same source share its state (its rate limit
 * and whether the upstream is down).
 */
export function ingestSource(options: IngestSourceOptions): SourceIngestion {
  const { config, store, logger, source, clock = systemClock } = options;
  const disabledReason = sourceDisabledReason(config, source);
  const adapter =
    disabledReason === null
      ? createSourceAdapter(config, source, {
          logger,
          clock,
          ...(options.fetch && { fetch: options.fetch }),
          ...(options.http && { http: options.http }),
          ...(options.localUpstream && { localUpstream: true }),
        })
      : undefined;
  return {
    source,
    disabledReason,
    adapter,
    async pass(signal, initialWindowSeconds) {
      if (adapter === undefined) {
        const reason = disabledReason ?? 'not configured';
        logger.warn({ source }, `${source} disabled: ${reason}`);
        return reportDisabledSource(store, source, reason, clock);
      }
      const report = await runIngestion({
        store,
        adapter,
        logger,
        signal,
        ...(initialWindowSeconds !== undefined && { initialWindowSeconds }),
      });
      if (!signal.aborted) await keepConsumptionUp(store, logger, graphsFedBy(adapter));
      return report;
    },
  };
}
