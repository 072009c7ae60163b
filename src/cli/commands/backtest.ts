import cliProgress from 'cli-progress';
import { type Command, InvalidArgumentError } from 'commander';
import { loadConfig } from '../../config.js';
import type { ForecastBasis } from '../../core/forecast/backtest.js';
import { parseInstant } from '../../core/time.js';
import { findZone, ZONES } from '../../core/zones.js';
import { markdownTable, secondsText, summarize, summaryText } from '../../forecast/report.js';
import { runBacktest } from '../../forecast/run-backtest.js';
import { defaultZoneWorkers, ZoneWorkers } from '../../forecast/zone-workers.js';
import { createStore } from '../../storage/create-store.js';
import { exitOnError } from '../exit.js';
import { wholeNumber } from '../whole-number.js';

interface BacktestFlags {
  readonly zone?: string[];
  readonly from?: number;
  readonly to?: number;
  readonly table?: boolean;
  readonly basis?: ForecastBasis[];
  readonly workers: number;
}

export function registerBacktest(program: Command): void {
  program
    .command('backtest')
    .description(
      'Walk-forward backtest of the forecast models over stored history (an issue time every ' +
        '6 h), stored as the skill table /v1/intensity/forecast/skill serves. ' +
        'On the demo: DATABASE_URL=sqlite:data/demo.db gridco2 backtest',
    )
    .option(
      '--zone <zone>',
      "a zone to evaluate (repeatable; default: all 45); its rows replace that zone's in the newest backtest",
      collectZone,
    )
    .option('--from <time>', 'first issue time, ISO 8601 (default: 400 days before --to)', instant)
    .option('--to <time>', 'last issue time, ISO 8601 (default: 72 hours ago)', instant)
    .option(
      '--basis <basis>',
      "a basis to evaluate (repeatable: lifecycle, direct, operator; default: each zone's all)",
      collectBasis,
    )
    .option(
      '--workers <n>',
      'processes that backtest zone-bases side by side (one per core, at most 4; 1: all in this process)',
      wholeNumber(1, 64),
      defaultZoneWorkers(),
    )
    .option('--table', 'print the whole table (Markdown), not only the summary')
    .action((flags: BacktestFlags) =>
      exitOnError(async () => {
        if (flags.from !== undefined && flags.to !== undefined && flags.from > flags.to) {
          throw new Error('--from must not be after --to.');
        }
        const config = loadConfig();
        // Not openStore: measuring the models is as right on the demo's synthetic store as on a
        // real one, and writes nothing but the skill table.
        const store = await createStore(config.databaseUrl);
        const zones = flags.zone;
        const bar = process.stderr.isTTY
          ? new cliProgress.SingleBar(
              { stream: process.stderr, format: 'backtest [{bar}] {value}/{total} zones | {zone}' },
              cliProgress.Presets.shades_classic,
            )
          : undefined;
        const workers = flags.workers > 1 ? new ZoneWorkers(flags.workers) : undefined;
        try {
          const started = Date.now();
          bar?.start(zones?.length ?? ZONES.length, 0, { zone: '' });
          const run = await runBacktest(
            store,
            Math.floor(Date.now() / 1000),
            {
              ...(zones && { zones }),
              ...(flags.from !== undefined && { fromTs: flags.from }),
              ...(flags.to !== undefined && { toTs: flags.to }),
              ...(flags.basis && { bases: flags.basis }),
            },
            (zone, done, total) => {
              if (bar) bar.update(done, { zone });
              else process.stderr.write(`backtest ${done}/${total} ${zone}\n`);
            },
            undefined,
            undefined,
            workers,
          );
          bar?.stop();
          if (run.zones.every(({ issues }) => issues === 0)) {
            // Stored, it would replace the run `serve` takes its models and bands from.
            throw new Error(
              'nothing to evaluate: no zone has 14 days of history before the last issue time ' +
                '(--to, default 72 hours ago); the stored backtest is left as it was.',
            );
          }
          // A run over some zones or bases replaces only theirs: the others keep the rows (models
          // and bands) `serve` uses.
          const newest = zones || flags.basis ? await store.newestBacktest() : null;
          const evaluated = new Set(run.zones.map(({ zone, basis }) => `${zone}|${basis}`));
          await store.saveBacktest({
            createdAt: run.createdAt,
            zones: [
              ...(newest?.zones ?? []).filter(
                ({ zone, basis }) => !evaluated.has(`${zone}|${basis}`),
              ),
              ...run.zones,
            ],
          });
          if (flags.table) process.stdout.write(`${markdownTable(run)}\n\n`);
          process.stdout.write(`${summaryText(summarize(run))}\n`);
          process.stderr.write(
            `backtest stored (${secondsText(Date.now() - started)}); ` +
              'serve it with GET /v1/intensity/forecast/skill\n',
          );
        } finally {
          bar?.stop();
          await workers?.close();
          await store.close();
        }
      }),
    );
}

function collectZone(value: string, previous: string[] | undefined): string[] {
  const zone = findZone(value.trim());
  if (!zone) throw new InvalidArgumentError(`unknown zone "${value}"; see GET /v1/zones.`);
  return [...(previous ?? []), zone.code];
}

function collectBasis(value: string, previous: ForecastBasis[] | undefined): ForecastBasis[] {
  const basis = value.trim() as ForecastBasis;
  if (!['lifecycle', 'direct', 'operator'].includes(basis)) {
    throw new InvalidArgumentError('expected lifecycle, direct or operator.');
  }
  return [...(previous ?? []), basis];
}

function instant(value: string): number {
  const ms = parseInstant(value.trim());
  if (ms === undefined)
    throw new InvalidArgumentError('expected ISO 8601, e.g. 2026-01-01T00:00:00Z.');
  return Math.floor(ms / 1000);
}
