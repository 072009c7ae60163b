/**
 * Every process the bench starts goes through here, so that none outlives it: they are stopped
 * in `finally` blocks, and whatever is still running when the bench exits (error, signal, time
 * limit) is killed by the exit handler.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

const running = new Set<ChildProcess>();

process.on('exit', killAllNow);

/** SIGKILLs every child still running; synchronous, so it also works inside an exit handler. */
function killAllNow(): void {
  for (const child of running) child.kill('SIGKILL');
}

export const hasExited = (child: ChildProcess): boolean =>
  child.exitCode !== null || child.signalCode !== null;

/** SIGKILLs every child still running and waits (at most `maxMs`) until they are reaped. */
export async function killAll(maxMs = 3_000): Promise<void> {
  const exits = [...running].map(
    (child) => new Promise<void>((resolve) => child.once('exit', () => resolve())),
  );
  killAllNow();
  await Promise.race([Promise.all(exits), delay(maxMs)]);
}

/** CPU pinning: the servers on core 0, the load generator on core 1, when taskset can do it. */
export type Core = 0 | 1;

export const pinning: { readonly available: boolean; readonly why: string } = (() => {
  if (availableParallelism() < 2) return { available: false, why: 'only one core' };
  const probe = spawnSync('taskset', ['-c', '1', 'true'], { timeout: 5_000 });
  return probe.status === 0
    ? { available: true, why: 'servers on core 0, load generator on core 1 (taskset)' }
    : { available: false, why: 'taskset missing or refused' };
})();

export function spawnPinned(
  core: Core,
  command: string,
  args: readonly string[],
  options: SpawnOptions = {},
): ChildProcess {
  // taskset execs the command, so the child's pid is the command's own (for /proc/<pid>/status).
  return pinning.available
    ? spawnUnpinned('taskset', ['-c', String(core), command, ...args], options)
    : spawnUnpinned(command, args, options);
}

/** A child on whichever cores the system gives it, stopped with the others by `killAll`. */
export function spawnUnpinned(
  command: string,
  args: readonly string[],
  options: SpawnOptions = {},
): ChildProcess {
  const child = spawn(command, [...args], { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  running.add(child);
  child.once('exit', () => running.delete(child));
  // A spawn failure (ENOENT) is reported by the waits below; without a listener it would throw.
  child.once('error', () => running.delete(child));
  return child;
}

/** SIGTERM, then SIGKILL when it has not exited after `graceMs`. */
export async function stopProcess(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (hasExited(child) || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const inTime = await Promise.race([exited.then(() => true), delay(graceMs, false)]);
  if (!inTime) {
    child.kill('SIGKILL');
    await Promise.race([exited, delay(graceMs)]);
  }
}

/** Keeps the last `maxChars` of what a child writes to stdout and stderr, for error messages. */
export function outputTail(child: ChildProcess, maxChars = 4_000): () => string {
  let text = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on('data', (chunk: Buffer) => {
      text = (text + chunk.toString('utf8')).slice(-maxChars);
    });
  }
  return () => text;
}

export interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  /** The end of stdout and stderr together. */
  readonly output: string;
}

/** Runs a pinned command to its end; killed, and rejected, when it exceeds `timeoutMs`. */
export async function runPinned(
  core: Core,
  command: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<Finished> {
  const child = spawnPinned(core, command, args);
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  const output = outputTail(child);
  const ended = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolve(code));
  });
  const timer = delay(timeoutMs, 'timeout' as const);
  const outcome = await Promise.race([ended, timer]);
  if (outcome === 'timeout') {
    await stopProcess(child, 1_000);
    throw new Error(`${command} did not finish within ${timeoutMs / 1000} s`);
  }
  return { code: outcome, stdout, output: output() };
}

/**
 * Resolves with the first value `match` finds in a line of the child's stdout; rejects when the
 * child exits first or after `timeoutMs`, with the tail of its output.
 */
export function waitForLine<T>(
  child: ChildProcess,
  match: (line: string) => T | undefined,
  timeoutMs: number,
): Promise<T> {
  const output = outputTail(child);
  return new Promise<T>((resolve, reject) => {
    const fail = (why: string) => {
      cleanUp();
      reject(new Error(`${why}; its output ends with:\n${output()}`));
    };
    const timer = setTimeout(
      () => fail(`no expected output within ${timeoutMs / 1000} s`),
      timeoutMs,
    );
    let pending = '';
    // outputTail above keeps reading after this listener goes, so a chatty child never blocks.
    const onData = (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        const found = match(line);
        if (found !== undefined) {
          cleanUp();
          resolve(found);
          return;
        }
      }
    };
    const onExit = (code: number | null) => fail(`exited (code ${code}) before it was ready`);
    const onError = (error: Error) => fail(`could not start: ${error.message}`);
    const cleanUp = () => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
    };
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

/**
 * Runs `main` when the module at `moduleUrl` is the script node was started with (a part of the
 * bench run on its own), then exits: 0, or 1 with the error. The exit handler above kills
 * whatever is still running.
 */
export function runIfMain(moduleUrl: string, main: () => Promise<void>): void {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : error);
      process.exit(1);
    },
  );
}
