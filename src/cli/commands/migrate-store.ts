import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { loadConfig, redactUrl } from '../../config.js';
import { createLogger } from '../../logger.js';
import { createStore } from '../../storage/create-store.js';
import { migrateStore, type MigrateProgress } from '../../storage/migrate-store.js';
import { exitOnError } from '../exit.js';

interface MigrateStoreFlags {
  readonly from: string;
  readonly to: string;
}

export function registerMigrateStore(program: Command): void {
  program
    .command('migrate-store')
    .description(
      'Copy every stored reading (with its mix, published or not) and the latest ingestion ' +
        'reports from one store to another, e.g. from the SQLite file to PostgreSQL. Run it ' +
        'again to copy only what changed; rows only the target has are kept.',
    )
    // Checked in the action, not by an argument parser: commander would echo the value, password
    // included, in its error message.
    .requiredOption('--from <url>', 'store to read: sqlite:<path> or postgres://user@host/db')
    .requiredOption('--to <url>', 'store to write (created and migrated if new)')
    .action((flags: MigrateStoreFlags) =>
      exitOnError(async () => {
        checkStoreUrl(flags.from, '--from');
        checkStoreUrl(flags.to, '--to');
        if (storeIdentity(flags.from) === storeIdentity(flags.to)) {
          throw new Error(`--from and --to name the same store (${redactUrl(flags.from)})`);
        }
        const fromPath = sqlitePath(flags.from);
        if (fromPath !== null && fromPath !== ':memory:' && !existsSync(fromPath)) {
          // Opening it would create an empty file and copy nothing.
          throw new Error(`--from: no SQLite file at ${resolve(fromPath)}`);
        }
        const logger = createLogger(loadConfig());
        const from = await createStore(flags.from, { setting: '--from' });
        try {
          const to = await createStore(flags.to, { setting: '--to' });
          const progress = createProgress();
          try {
            const result = await migrateStore(from, to, { onProgress: progress.update });
            progress.stop();
            logger.info(
              { from: redactUrl(flags.from), to: redactUrl(flags.to), ...result },
              `migrate-store: ${result.scanned} rows read, ${result.written} written, ` +
                `${result.unchanged} already identical; ` +
                `${result.reportsCopied} ingestion reports copied`,
            );
          } finally {
            progress.stop();
            await to.close();
          }
        } finally {
          await from.close();
        }
      }),
    );
}

const STORE_URL = /^(sqlite:.+|postgres(ql)?:\/\/.+)$/;

function checkStoreUrl(url: string, option: string): void {
  if (!STORE_URL.test(url)) {
    throw new Error(`${option} must be sqlite:<path> or postgres://user@host:5432/database`);
  }
}

function sqlitePath(url: string): string | null {
  return url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : null;
}

/** What names one store: the file, or the server and database whoever logs in. */
function storeIdentity(url: string): string {
  const path = sqlitePath(url);
  if (path !== null) return path === ':memory:' ? url : `sqlite:${resolve(path)}`;
  const parsed = new URL(url);
  const host = parsed.searchParams.get('host') ?? parsed.hostname.toLowerCase();
  return `postgres://${host}:${parsed.port || '5432'}${decodeURIComponent(parsed.pathname)}`;
}

/** A progress bar on a terminal; a plain line per finished zone otherwise (logs, CI). */
function createProgress(): { update(progress: MigrateProgress): void; stop(): void } {
  if (!process.stderr.isTTY) {
    let zonesReported = -1;
    return {
      update: ({ scanned, written, zonesDone, zonesTotal }) => {
        if (zonesDone === zonesReported) return;
        zonesReported = zonesDone;
        process.stderr.write(
          `migrate-store ${zonesDone}/${zonesTotal} zones: ${scanned} rows read, ${written} written\n`,
        );
      },
      stop: () => undefined,
    };
  }
  const bar = new cliProgress.SingleBar(
    {
      format:
        'migrate-store [{bar}] {value}/{total} zones | {scanned} rows read | {written} written',
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update: ({ scanned, written, zonesDone, zonesTotal }) => {
      if (!started) bar.start(zonesTotal, 0, { scanned, written });
      started = true;
      bar.update(zonesDone, { scanned, written });
    },
    stop: () => {
      if (started) bar.stop();
      started = false;
    },
  };
}
