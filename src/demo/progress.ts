import cliProgress from 'cli-progress';
import { formatTs } from '../core/time.js';
import type { ChunkProgress } from './backfill-pool.js';
import type { SourceId } from '../core/sources.js';

export interface BackfillDisplay {
  chunk(source: SourceId, progress: ChunkProgress): void;
  stop(): void;
}

/**
 * The demo backfill's progress on stderr: one bar per source on a terminal, one plain line per
 * chunk otherwise (logs, CI), worded like `gridco2 backfill`'s.
 */
export function createBackfillDisplay(
  chunksPerSource: ReadonlyMap<SourceId, number>,
  stream: NodeJS.WriteStream = process.stderr,
): BackfillDisplay {
  const done = new Map<SourceId, number>();
  const points = new Map<SourceId, number>();
  const count = (source: SourceId, progress: ChunkProgress) => {
    done.set(source, (done.get(source) ?? 0) + 1);
    points.set(source, (points.get(source) ?? 0) + progress.pointsStored);
    return { done: done.get(source) ?? 0, total: chunksPerSource.get(source) ?? 0 };
  };

  if (!stream.isTTY) {
    return {
      chunk: (source, progress) => {
        const { done: chunksDone, total } = count(source, progress);
        const { zones, window, skipped, pointsStored, errors } = progress;
        const what = skipped
          ? 'already stored, skipped'
          : `${pointsStored} ${progress.border === undefined ? 'points' : 'flows'} stored` +
            (errors.length > 0 ? `, ${errors.length} errors` : '');
        const zoneText =
          progress.border !== undefined
            ? `flows ${progress.border}`
            : zones.length === 1
              ? zones[0]
              : `${zones.length} zones`;
        stream.write(
          `backfill ${source} ${chunksDone}/${total} ${zoneText} ` +
            `${formatTs(window.fromTs)}..${formatTs(window.toTs)}: ${what}\n`,
        );
      },
      stop: () => undefined,
    };
  }

  const bars = new cliProgress.MultiBar(
    {
      stream,
      format: 'backfill {source} [{bar}] {value}/{total} chunks | {points} points',
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  const width = Math.max(...[...chunksPerSource.keys()].map((source) => source.length));
  const barOf = new Map(
    [...chunksPerSource].map(([source, total]) => [
      source,
      bars.create(total, 0, { source: source.padEnd(width), points: 0 }),
    ]),
  );
  return {
    chunk: (source, progress) => {
      const { done: chunksDone } = count(source, progress);
      barOf.get(source)?.update(chunksDone, { points: points.get(source) ?? 0 });
    },
    stop: () => bars.stop(),
  };
}
