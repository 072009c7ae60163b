import type * as ChildProcesses from 'node:child_process';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * For suites that start servers in their own process, from the sources: their forecast workers
 * forked from the build, as the CLI's are (built-cli.ts, the tier's global setup, builds it again
 * whenever a source is newer). From the sources each worker loads tsx and resolves the sources
 * first: about 0.8 s of CPU, for every server a suite starts. Used as
 * `vi.mock('node:child_process', async (original) =>
 *   (await import('./support/built-workers.js')).forkingBuiltModules(await original()))`
 * (imported in the factory: vi.mock runs before the file's imports).
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SOURCES = join(ROOT, 'src') + sep;
const BUILD = join(ROOT, 'dist');

export function forkingBuiltModules(original: typeof ChildProcesses): typeof ChildProcesses {
  const fork = (
    modulePath: string | URL,
    args?: readonly string[] | ChildProcesses.ForkOptions,
    options?: ChildProcesses.ForkOptions,
  ): ChildProcesses.ChildProcess => {
    const file = modulePath instanceof URL ? fileURLToPath(modulePath) : modulePath;
    if (!file.startsWith(SOURCES) || !file.endsWith('.ts')) {
      return original.fork(modulePath, args as readonly string[], options);
    }
    const built = join(BUILD, relative(SOURCES, file)).replace(/\.ts$/, '.js');
    // Without tsx's loader, as fork-module.ts starts a built module; its other flags kept. (This
    // module must not import fork-module.ts: that imports the node:child_process it mocks.)
    const [argv, forkOptions] = Array.isArray(args)
      ? [args, options]
      : [[], args as ChildProcesses.ForkOptions | undefined];
    const execArgv = (forkOptions?.execArgv ?? []).filter(
      (flag, k, flags) => flag !== '--import' && flags[k - 1] !== '--import',
    );
    return original.fork(built, argv, { ...forkOptions, execArgv });
  };
  return { ...original, fork: fork as typeof original.fork };
}
