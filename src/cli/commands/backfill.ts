import cliProgress from 'cli-progress';
import { type Command, InvalidArgumentError } from 'commander';
import { loadConfig } from '../../config.js';
import { graphsFedBy, keepConsumptionUp } from '../../consumption/keep-up.js';
import { floorToHour, formatTs, HOUR, parseInstant } from '../../core/time.js';
import { findZone } from '../../core/zones.js';
import { runBackfill, type BackfillProgress } from '../../ingest/backfill.js';
import { runGraphBackfill } from '../../ingest/backfill-graph.js';
import { plural } from '../../ingest/run-ingestion.js';
import { createSourceAdapter, sourceDisabledReason } from '../../ingest/sources.js';
import { createLogger } from '../../logger.js';
import { openStore } from '../../open-store.js';
import { exitOnError } from '../exit.js';
import { parseSource } from './ingest.js';
import { SOURCES, type SourceId } from '../../core/sources.js';

interface BackfillFlags {
  readonly source: SourceId;
  readonly zone?: string;
  readonly from: number;
  readonly to?: number;
}

export function registerBackfill(program: Command): void {
  program
    .command('backfill')
    .description(
      'Fill the history of a source over a window, chunk by chunk, with its part of the flow ' +
        'graph (with FLOWS=on, not with --zone). Run it again after an interruption: chunks ' +
        'already stored are skipped. Safe while `serve` runs.',
    )
    .requiredOption('--source <source>', `the source to fill: ${SOURCES.join(', ')}`, parseSource)
    .option('--zone <zone>', 'only this zone of the source (default: all its zones)')
    .requiredOption('--from <date>', 'start, UTC (e.g. 2025-01-01 or 2025-01-01T06:00Z)', parseDate)
    .option('--to <date>', 'end, UTC, exclusive (default: now)', parseDate)
    .action((flags: BackfillFlags) =>
      exitOnError(async () => {
        const config = loadConfig();
        const reason = sourceDisabledReason(config, flags.source);
        if (reason !== null) throw new Error(`${flags.source} is not configured: ${reason}`);
        const zone = flags.zone === undefined ? undefined : findZone(flags.zone);
        if (flags.zone !== undefined && zone?.source !== flags.source) {
          throw new Error(`${flags.zone} is not a zone of ${flags.source}`);
        }
        // Whole hours: from rounds down, to rounds up.
        const fromTs = floorToHour(flags.from / 1000);
        const toTs = floorToHour(Math.ceil((flags.to ?? Date.now()) / 1000) - 1) + HOUR;
        if (fromTs >= toTs) throw new Error('--from must be before --to');

        const logger = createLogger(config);
        const store = await openStore(config, 'write', logger);
        const interrupt = new AbortController();
        const onSignal = () => interrupt.abort();
        process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
        let progress = createProgress(flags.source);
        try {
          const adapter = createSourceAdapter(config, flags.source, { logger });
          const options = { store, adapter, logger, window: { fromTs, toTs } };
          const result = await runBackfill({
            ...options,
            ...(zone && { zones: [zone] }),
            onProgress: progress.update,
            signal: interrupt.signal,
          });
          progress.stop();
          logger.info(
            { source: flags.source, ...result, errors: result.errors.length },
            `backfill ${flags.source}: ${result.chunks} chunks (${result.skipped} already stored), ` +
              `${result.pointsStored} points stored, ${result.incompleteHours} incomplete hours`,
          );
          const errors = [...result.errors];
          // The source's part of its flow graph: its extra nodes, then its borders' flows.
          if (zone === undefined && adapter.graph) {
            progress = createProgress(`${flags.source} flow graph`);
            const graph = await runGraphBackfill({
              ...options,
              onProgress: progress.update,
              signal: interrupt.signal,
            });
            progress.stop();
            logger.info(
              {
                source: flags.source,
                graph: adapter.graph.graph,
                ...graph,
                errors: graph.errors.length,
              },
              `backfill ${flags.source} flow graph: ${graph.chunks} chunks ` +
                `(${graph.skipped} already stored), ${graph.pointsStored} points and ` +
                `${graph.flowsStored ?? 0} flows stored`,
            );
            errors.push(...graph.errors);
          }
          // What was stored, failures or not: the consumption series of its graphs.
          await keepConsumptionUp(store, logger, graphsFedBy(adapter));
          if (errors.length > 0) {
            throw new Error(
              `${plural(errors.length, 'failure')} (first: ${errors[0]}); ` +
                'run the same command again to retry them',
            );
          }
        } catch (error) {
          progress.stop();
          if (!interrupt.signal.aborted) throw error;
          throw new Error('interrupted; run the same command again to resume');
        } finally {
          process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
          await store.close();
        }
      }),
    );
}

function parseDate(value: string): number {
  const ms = parseInstant(value.trim());
  if (ms === undefined) throw new InvalidArgumentError('expected a UTC date such as 2025-01-01.');
  return ms;
}

/** A progress bar on a terminal; one plain line per chunk otherwise (logs, CI). */
function createProgress(what: string): {
  update(progress: BackfillProgress): void;
  stop(): void;
} {
  if (!process.stderr.isTTY) {
    return {
      update: ({ done, total, chunk, skipped, pointsStored, errors }) => {
        const zones =
          chunk.border !== undefined
            ? `flows ${chunk.border}`
            : chunk.zones.length === 1
              ? chunk.zones[0]?.code
              : `${chunk.zones.length} zones`;
        const rows = chunk.border === undefined ? 'points' : 'flows';
        const outcome = skipped
          ? 'already stored, skipped'
          : `${pointsStored} ${rows} stored${errors.length > 0 ? `, ${errors.length} errors` : ''}`;
        process.stderr.write(
          `backfill ${what} ${done}/${total} ${zones} ` +
            `${formatTs(chunk.window.fromTs)}..${formatTs(chunk.window.toTs)}: ${outcome}\n`,
        );
      },
      stop: () => undefined,
    };
  }
  const bar = new cliProgress.SingleBar(
    {
      format: `backfill ${what} [{bar}] {value}/{total} chunks | {points} stored | ETA {eta_formatted}`,
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let points = 0;
  let started = false;
  return {
    update: ({ done, total, pointsStored }) => {
      points += pointsStored;
      if (!started) bar.start(total, 0, { points });
      started = true;
      bar.update(done, { points });
    },
    stop: () => {
      if (started) bar.stop();
      started = false;
    },
  };
}
