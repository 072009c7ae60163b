import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { extname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The forecast's worker processes (worker-compute.ts, zone-workers.ts), started alike. */

const EXTENSION = extname(fileURLToPath(import.meta.url));

/** The file of the sibling module `name` (without extension), built or from the sources. */
export const siblingModule = (name: string): string =>
  fileURLToPath(new URL(`./${name}${EXTENSION}`, import.meta.url));

/**
 * The V8 flags of every forecast process. The garbage collector on the process's own thread: its
 * helper threads compete with serving on a small machine and, there, cost more CPU than they save
 * (issue 38: the 240-day demo's daily rerun, alternated 4 times on 2 cores, 14.0 -> 10.4 s of
 * CPU, median; its wall time no longer either).
 */
const WORKER_V8_FLAGS: readonly string[] = ['--single-threaded-gc'];

/**
 * Starts `file` as a child process with an IPC channel whose messages are structured clones
 * (typed arrays and Maps cross as themselves). Built, the module is the compiled `.js`; from the
 * TypeScript sources (tests, `tsx`), Node cannot load the `.ts` itself: the child imports tsx's
 * loader first.
 */
export function forkModule(file: string, env: NodeJS.ProcessEnv = process.env): ChildProcess {
  const execArgv = [
    ...WORKER_V8_FLAGS,
    ...(EXTENSION === '.ts'
      ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href]
      : []),
  ];
  return fork(file, [], { execArgv, env, serialization: 'advanced' });
}
