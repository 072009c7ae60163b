import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * promtool and prometheus for test/metrics.test.ts. No npm package ships them, so: the ones on
 * PATH (Debian's prometheus package, which .ci/run installs, puts them in /usr/bin), else
 * Debian's package fetched by the test itself with `apt-get download` (no root needed, nothing
 * installed) and unpacked into node_modules/.cache/ once. `missing` says in one line why not.
 */
export interface PrometheusTools {
  readonly promtool: string | undefined;
  readonly prometheus: string | undefined;
  readonly origin: string;
  readonly missing?: string;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CACHE = join(ROOT, 'node_modules/.cache/gridco2-prometheus');

function onPath(name: string): string | undefined {
  const dirs = (process.env['PATH'] ?? '').split(':').filter(Boolean);
  return dirs.map((dir) => join(dir, name)).find((path) => existsSync(path));
}

function lastLine(error: unknown): string {
  const stderr = (error as { stderr?: Buffer | string }).stderr?.toString().trim();
  const text = stderr || (error instanceof Error ? error.message : String(error));
  return text.split('\n').at(-1)!;
}

/** Debian's prometheus package unpacked into CACHE (through a temporary folder). */
function unpackDebianPackage(): void {
  const partial = `${CACHE}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  try {
    execFileSync('apt-get', ['download', 'prometheus'], { cwd: partial, stdio: 'pipe' });
    const deb = readdirSync(partial).find((name) => name.endsWith('.deb'));
    if (!deb) throw new Error('apt-get download prometheus left no .deb');
    execFileSync('dpkg-deb', ['-x', deb, 'root'], { cwd: partial, stdio: 'pipe' });
    rmSync(join(partial, deb));
    rmSync(CACHE, { recursive: true, force: true });
    renameSync(partial, CACHE);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    throw error;
  }
}

export function prometheusTools(): PrometheusTools {
  const promtool = onPath('promtool');
  const prometheus = onPath('prometheus');
  if (promtool && prometheus)
    return { promtool, prometheus, origin: `${prometheus} and ${promtool}` };

  const cached = (name: string) => join(CACHE, 'root/usr/bin', name);
  const origin = "Debian's prometheus package, unpacked into node_modules/.cache";
  if (existsSync(cached('prometheus')) && existsSync(cached('promtool'))) {
    return { promtool: cached('promtool'), prometheus: cached('prometheus'), origin };
  }
  if (!onPath('apt-get') || !onPath('dpkg-deb')) {
    return {
      promtool,
      prometheus,
      origin: 'none',
      missing: "prometheus/promtool not on PATH and no apt-get to fetch Debian's package",
    };
  }
  try {
    unpackDebianPackage();
  } catch (error) {
    return {
      promtool,
      prometheus,
      origin: 'none',
      missing: `prometheus/promtool not on PATH and apt-get download prometheus failed: ${lastLine(error)}`,
    };
  }
  return { promtool: cached('promtool'), prometheus: cached('prometheus'), origin };
}
