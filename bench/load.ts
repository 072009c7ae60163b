/**
 * The load generator, always a separate process pinned to its own core: wrk when it is on the
 * PATH (Debian package `wrk`; never installed from here), autocannon from node_modules otherwise.
 * autocannon runs on one core and saturates near 40k req/s, squeezing ratios near the top, and
 * reports latency in whole milliseconds: the output says which one measured.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';
import { runPinned } from './processes.js';

export const CONNECTIONS = 10;

export interface LoadGenerator {
  readonly name: 'wrk' | 'autocannon';
  /** Name and version, for the report. */
  readonly description: string;
  readonly command: string;
  args(url: string, durationSeconds: number): string[];
  parse(stdout: string): LoadResult;
}

export interface LoadResult {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Non-2xx answers, socket errors and timeouts. */
  readonly errors: number;
  /** Answers received. */
  readonly requests: number;
  /** Answers with a status outside 2xx (wrk: outside 2xx and 3xx): refusals of a limit. */
  readonly non2xx: number;
}

function findOnPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

export function detectLoadGenerator(): LoadGenerator {
  const wrk = findOnPath('wrk');
  if (wrk) return wrkGenerator(wrk);
  const require = createRequire(import.meta.url);
  const script = require.resolve('autocannon/autocannon.js');
  const { version } = JSON.parse(
    readFileSync(require.resolve('autocannon/package.json'), 'utf8'),
  ) as { version: string };
  return {
    name: 'autocannon',
    description: `autocannon ${version} (wrk not found on PATH; latency in whole ms)`,
    command: process.execPath,
    args: (url, seconds) => [script, '-c', String(CONNECTIONS), '-d', String(seconds), '-j', url],
    parse: parseAutocannon,
  };
}

function wrkGenerator(path: string): LoadGenerator {
  return {
    name: 'wrk',
    description: versionOf(path),
    command: path,
    // One thread: the generator has one core. The long timeout keeps slow scenarios measured
    // instead of counted as errors.
    args: (url, seconds) => [
      '-t1',
      `-c${CONNECTIONS}`,
      `-d${seconds}s`,
      '--timeout',
      '30s',
      '--latency',
      url,
    ],
    parse: parseWrk,
  };
}

/** `wrk -v` prints its version line and exits non-zero; only the text matters. */
function versionOf(path: string): string {
  const output = spawnSync(path, ['-v'], { encoding: 'utf8', timeout: 5_000 });
  return (output.stdout || output.stderr)
    .split('\n')[0]!
    .replace(/ Copyright.*$/, '')
    .trim();
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000 };

function parseWrk(stdout: string): LoadResult {
  const number = (pattern: RegExp): number | undefined => {
    const found = pattern.exec(stdout)?.[1];
    return found === undefined ? undefined : Number(found);
  };
  const percentile = (label: string): number => {
    const found = new RegExp(`^\\s+${label}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(stdout);
    if (!found) throw new Error(`wrk output has no ${label}% latency:\n${stdout}`);
    return Number(found[1]) * UNIT_MS[found[2]!]!;
  };
  const requestsPerSecond = number(/^Requests\/sec:\s+([\d.]+)/m);
  if (requestsPerSecond === undefined)
    throw new Error(`wrk output has no Requests/sec:\n${stdout}`);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(
    stdout,
  );
  const non2xx = number(/Non-2xx or 3xx responses:\s+(\d+)/) ?? 0;
  return {
    requestsPerSecond,
    p50Ms: percentile('50'),
    p99Ms: percentile('99'),
    errors:
      non2xx +
      (socketErrors ? socketErrors.slice(1).reduce((sum, count) => sum + Number(count), 0) : 0),
    requests: number(/^\s*(\d+) requests in /m) ?? 0,
    non2xx,
  };
}

interface AutocannonJson {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  requests: { total: number };
  latency: { p50: number; p99: number };
}

function parseAutocannon(stdout: string): LoadResult {
  const result = JSON.parse(stdout) as AutocannonJson;
  return {
    requestsPerSecond: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    requests: result.requests.total,
    non2xx: result.non2xx,
  };
}

/** One load run against `url`, bounded to its duration plus a margin. */
export async function runLoad(
  generator: LoadGenerator,
  url: string,
  durationSeconds: number,
): Promise<LoadResult> {
  const finished = await runPinned(
    1,
    generator.command,
    generator.args(url, durationSeconds),
    (durationSeconds + 40) * 1000,
  );
  if (finished.code !== 0) {
    throw new Error(`${generator.name} exited with ${finished.code}: ${finished.output}`);
  }
  return generator.parse(finished.stdout);
}
