import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The integration suites start `gridco2` as a user does, from the build: `bin/gridco2.js` runs
 * `dist/`, and its forecast workers are the compiled `.js` too. Through tsx each of those Node
 * processes spent about 2 s more of CPU compiling and resolving the sources, for hundreds of
 * children per run. `npm test` and `npm run test:integration` build first; the tier's global
 * setup below builds again whenever a source is newer than the build, so no suite runs a stale one.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The CLI's entry, absolute: some suites start it in a folder of their own. */
export const CLI = join(ROOT, 'bin/gridco2.js');

/** What `npm run build` reads (tsconfig.build.json, web/vite.config.ts) ... */
const INPUTS = ['src', 'web', 'tsconfig.json', 'tsconfig.build.json'];
/** ... and one file that each of its two steps writes again on every build. */
const OUTPUTS = ['dist/cli/main.js', 'dist/web/index.html'];

const isBuildInput = (path: string) => !path.endsWith('.test.ts');

function newestChange(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return isBuildInput(path) ? stat.mtimeMs : 0;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestChange(join(path, name))));
}

function builtAt(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -Infinity;
  }
}

/** The integration tier's global setup: `npm run build` when the build is missing or stale. */
export default function setup(): void {
  const built = Math.min(...OUTPUTS.map((output) => builtAt(join(ROOT, output))));
  const changed = Math.max(...INPUTS.map((input) => newestChange(join(ROOT, input))));
  if (changed <= built) return;
  console.info('integration tier: dist/ is older than the sources; running npm run build');
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error(`npm run build failed (${build.status ?? build.signal})`);
}
