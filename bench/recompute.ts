/**
 * `gridco2 recompute` timed (issue 11: both bases over 3.2M points within 60 s): on a copy of the
 * bench's SQLite store in the scratch directory, so the cached file is never rewritten. Wall
 * seconds from spawn to exit; peak RSS from /usr/bin/time -v when it is there, else VmHWM polled
 * from /proc. A figure, not an assertion: only a failing command fails the bench.
 */
import { accessSync, constants, copyFileSync, existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { outputTail, spawnPinned, stopProcess } from './processes.js';
import { peakResidentMiB } from './servers.js';

/** The bound on the wall time of one recompute of the 3.2M-point store. */
export const RECOMPUTE_TARGET_SECONDS = 60;

/** How long the command may run before it is stopped and reported as not finished. */
const recomputeTimeoutSeconds = (quick: boolean): number => (quick ? 60 : 600);

/** For the bench's time limit: the copy (a few hundred MB at most) and the command. */
export const recomputeSeconds = (quick: boolean): number => recomputeTimeoutSeconds(quick) + 30;

export interface RecomputeRun {
  readonly store: string;
  readonly points: number;
  /** Bytes of the store file copied. */
  readonly fileBytes: number;
  readonly wallSeconds: number;
  /** null: not finished within the timeout (then wallSeconds is the timeout). */
  readonly exitCode: number | null;
  /** From its `recompute: done` line; null when it never wrote one. */
  readonly scanned: number | null;
  readonly changed: number | null;
  readonly peakRssMiB: number | null;
  /** `/usr/bin/time -v` or `/proc VmHWM, polled`. */
  readonly rssFrom: string;
}

const TIME = '/usr/bin/time';

function hasGnuTime(): boolean {
  try {
    accessSync(TIME, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function measureRecompute(
  repoDir: string,
  store: string,
  points: number,
  databaseUrl: string,
  scratchDir: string,
  quick: boolean,
): Promise<RecomputeRun> {
  const source = databaseUrl.replace(/^sqlite:/, '');
  const copy = join(scratchDir, 'recompute.db');
  copyFileSync(source, copy);
  // A WAL left by a process that did not checkpoint holds committed rows: copy it too.
  if (existsSync(`${source}-wal`)) copyFileSync(`${source}-wal`, `${copy}-wal`);
  const fileBytes = statSync(copy).size;
  try {
    const gnuTime = hasGnuTime();
    const command = [process.execPath, join(repoDir, 'bin/gridco2.js'), 'recompute'];
    const started = performance.now();
    const child = spawnPinned(
      0,
      gnuTime ? TIME : command[0]!,
      gnuTime ? ['-v', ...command] : command.slice(1),
      {
        cwd: repoDir,
        env: { PATH: process.env.PATH, DATABASE_URL: `sqlite:${copy}`, LOG_LEVEL: 'info' },
      },
    );
    const output = outputTail(child, 20_000);
    let polledMiB: number | null = null;
    const exited = new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => resolve(code));
    });
    let finished = false;
    const poll = (async () => {
      while (!finished && !gnuTime) {
        const now = peakResidentMiB(child.pid!);
        if (now !== null) polledMiB = Math.max(polledMiB ?? 0, now);
        await delay(100);
      }
    })();
    const timeoutMs = recomputeTimeoutSeconds(quick) * 1000;
    const outcome = await Promise.race([exited, delay(timeoutMs, 'timeout' as const)]);
    const wallSeconds = (performance.now() - started) / 1000;
    finished = true;
    await poll;
    if (outcome === 'timeout') await stopProcess(child, 1_000);
    const text = output();
    if (outcome !== 'timeout' && outcome !== 0) {
      throw new Error(
        `gridco2 recompute exited with code ${outcome}; its output ends with:\n${text}`,
      );
    }
    const done = text
      .split('\n')
      .map((line) => {
        try {
          return JSON.parse(line) as { msg?: string; scanned?: number; changed?: number };
        } catch {
          return undefined;
        }
      })
      .find((entry) => entry?.msg?.startsWith('recompute: done'));
    const maxKib = /Maximum resident set size \(kbytes\): (\d+)/.exec(text)?.[1];
    return {
      store,
      points,
      fileBytes,
      wallSeconds,
      exitCode: outcome === 'timeout' ? null : outcome,
      scanned: done?.scanned ?? null,
      changed: done?.changed ?? null,
      peakRssMiB: gnuTime ? (maxKib === undefined ? null : Number(maxKib) / 1024) : polledMiB,
      rssFrom: gnuTime ? '/usr/bin/time -v' : '/proc VmHWM, polled every 100 ms',
    };
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${copy}${suffix}`, { force: true });
  }
}
