/**
 * The two servers under test, each its own process pinned to core 0: gridco2 exactly as
 * `npm start` runs it, and the bare node:http baseline replaying gridco2's captured bytes.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { get } from './capture.js';
import { outputTail, spawnPinned, stopProcess, waitForLine } from './processes.js';

export interface RunningProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** The end of what it wrote to stdout and stderr. */
  output(): string;
  stop(): Promise<void>;
}

export interface Gridco2 extends RunningProcess {
  readonly pid: number;
  /** From spawn to the first 200 of /v1/intensity/latest. */
  readonly startupMs: number;
  /**
   * From spawn to the log line `reading cache loaded` (it serves from the store until then);
   * null when it did not come within a minute.
   */
  readonly cacheLoaded: Promise<number | null>;
}

const START_TIMEOUT_MS = 60_000;
const FIRST_ANSWER_PATH = '/v1/intensity/latest';

/** A pino JSON line as an object; undefined for anything else. */
function logEntry(line: string): Record<string, unknown> | undefined {
  try {
    const entry: unknown = JSON.parse(line);
    return typeof entry === 'object' && entry !== null
      ? (entry as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The line `gridco2 serving` carries the URL it listens on (PORT=0 lets the system pick). */
function servingUrl(line: string): string | undefined {
  const entry = logEntry(line);
  const url = entry?.['msg'] === 'gridco2 serving' ? entry['url'] : undefined;
  return typeof url === 'string' && url.startsWith('http://') ? url : undefined;
}

// gridco2 has no readiness endpoint for its in-memory cache: this log line is the only signal.
const CACHE_LOADED_MESSAGE = 'reading cache loaded';

/**
 * `env` overrides single variables of the fixed environment below (the defences bench starts
 * an instance with RATE_LIMIT_PER_MINUTE=1).
 */
/**
 * The fixed environment gridco2 runs with in the bench, not the caller's: no Redis, no upstream
 * tokens, no ingestion; `extra` on top.
 */
export function serverEnv(
  databaseUrl: string,
  extra: Readonly<Record<string, string>> = {},
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    INGEST: 'off',
    // Consumption values are served (the bench store holds a series; nothing is fetched).
    FLOWS: 'on',
    LOG_LEVEL: 'info',
    // High enough never to reject, so the limiter's code runs on every request.
    RATE_LIMIT_PER_MINUTE: '1000000000',
    // /metrics on the service's own (loopback) port, where the bench reads its counters; its
    // default listener (127.0.0.1:9464) would be one port for every instance on the machine.
    METRICS_ADDR: 'public',
    ...extra,
  };
}

/** `cacheTimeoutMs`: how long `cacheLoaded` waits for its line before it gives null. */
export async function startGridco2(
  repoDir: string,
  databaseUrl: string,
  env: Readonly<Record<string, string>> = {},
  cacheTimeoutMs = START_TIMEOUT_MS,
): Promise<Gridco2> {
  const started = performance.now();
  const child = spawnPinned(0, process.execPath, [join(repoDir, 'bin/gridco2.js'), 'serve'], {
    cwd: repoDir,
    env: serverEnv(databaseUrl, env),
  });
  const output = outputTail(child);
  const stop = () => stopProcess(child);
  const cacheLoaded = waitForLine(
    child,
    (line) =>
      logEntry(line)?.msg === CACHE_LOADED_MESSAGE ? performance.now() - started : undefined,
    cacheTimeoutMs,
  ).catch(() => null);
  try {
    const url = await waitForLine(child, servingUrl, START_TIMEOUT_MS);
    await firstAnswer(url + FIRST_ANSWER_PATH, started + START_TIMEOUT_MS);
    const startupMs = performance.now() - started;
    return { child, url, pid: child.pid!, startupMs, cacheLoaded, output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function firstAnswer(url: string, deadline: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: false });
  try {
    for (let attempt = 1; performance.now() < deadline && attempt <= 10_000; attempt++) {
      const response = await get(url, agent, deadline - performance.now()).catch(() => undefined);
      if (response?.status === 200) return;
      await delay(5);
    }
    throw new Error(`gridco2 never answered ${url} with 200`);
  } finally {
    agent.destroy();
  }
}

export async function startBaseline(
  repoDir: string,
  capturesFile: string,
): Promise<RunningProcess> {
  // tsx only transforms the file at load; serving runs plain node:http code.
  const child = spawnPinned(
    0,
    process.execPath,
    ['--import', 'tsx', join(repoDir, 'bench/baseline-server.ts'), capturesFile],
    { cwd: repoDir },
  );
  const output = outputTail(child);
  const stop = () => stopProcess(child);
  try {
    const port = await waitForLine(child, (line) => /^listening (\d+)$/.exec(line)?.[1], 30_000);
    return { child, url: `http://127.0.0.1:${port}`, output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A `Vm*` line of /proc/<pid>/status in MiB (Linux only; null elsewhere or once it is gone). */
function statusMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1];
    return kib === undefined ? null : Number(kib) / 1024;
  } catch {
    return null;
  }
}

/** Resident memory of a process in MiB, from /proc (Linux only; null elsewhere). */
export const residentMiB = (pid: number): number | null => statusMiB(pid, 'VmRSS');

/** The most resident memory a process has had since it started (VmHWM), in MiB; null as above. */
export const peakResidentMiB = (pid: number): number | null => statusMiB(pid, 'VmHWM');

/** CPU time a process has used, in clock ticks (user + system), from /proc; null elsewhere. */
export function cpuTicks(pid: number): number | null {
  try {
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/**
 * CPU time of a process and its descendants alive now, in clock ticks, from /proc (null where
 * there is none): the forecast worker and its zone workers.
 */
export function processTreeCpuTicks(pid: number): number | null {
  const own = cpuTicks(pid);
  if (own === null) return null;
  let total = own;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const parent = Number(
        readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1],
      );
      if (parent === pid) total += processTreeCpuTicks(Number(entry)) ?? 0;
    } catch {
      // Gone between the listing and the read.
    }
  }
  return total;
}

/** Clock ticks per second, the unit of cpuTicks (USER_HZ: 100 on nearly every Linux). */
export const TICKS_PER_SECOND: number = (() => {
  const answer = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8', timeout: 5_000 });
  const value = Number(answer.stdout?.trim());
  return Number.isInteger(value) && value > 0 ? value : 100;
})();

/**
 * Waits until the servers stop using CPU (at most `maxMs`): a slow server keeps working through
 * its backlog after the load generator stops, and would steal the shared core from the next run.
 */
export async function waitUntilIdle(pids: readonly number[], maxMs = 10_000): Promise<void> {
  const total = () => pids.reduce((sum, pid) => sum + (cpuTicks(pid) ?? 0), 0);
  const deadline = performance.now() + maxMs;
  let before = total();
  while (performance.now() < deadline) {
    await delay(100);
    const now = total();
    // At most one tick (10 ms at the usual 100 Hz) in 100 ms: timers and GC, not requests.
    if (now - before <= 1) return;
    before = now;
  }
}

const FORECAST_READY = /^gridco2_forecast_ready (\d+)$/m;
const FORECAST_COMPUTING = /^gridco2_forecast_computing (\d+)$/m;

/**
 * Waits until gridco2's forecast work is done: forecasts prepared and no backtest running. A
 * fresh store has no backtest, so gridco2 runs one at start in its worker process, which the
 * pinning puts on the served core: measured then, the steady state would be the during-backtest
 * case. Resolves with the milliseconds waited, or null when `maxMs` passed first (or gridco2 has
 * no such metrics).
 */
export async function forecastsSettled(baseUrl: string, maxMs: number): Promise<number | null> {
  const started = performance.now();
  const agent = new http.Agent({ keepAlive: false });
  try {
    while (performance.now() - started < maxMs) {
      const response = await get(`${baseUrl}/metrics`, agent, 5_000).catch(() => undefined);
      const text = response?.status === 200 ? response.body.toString('utf8') : '';
      const ready = FORECAST_READY.exec(text)?.[1];
      const computing = FORECAST_COMPUTING.exec(text)?.[1];
      if (ready === undefined || computing === undefined) return null;
      if (ready === '1' && computing === '0') return performance.now() - started;
      await delay(250);
    }
    return null;
  } finally {
    agent.destroy();
  }
}

const BODIES_ENCODED = /^gridco2_response_bodies_encoded_total(?:\{[^}]*\})? (\d+(?:\.\d+)?)$/m;

/**
 * How many response bodies gridco2 has encoded since it started (not taken from its body cache),
 * from its `GET /metrics`; null when it has no such endpoint or metric (METRICS=off, older
 * builds). Read before and after a scenario's rounds: no change means every answer was a hit.
 */
export async function bodiesEncoded(baseUrl: string): Promise<number | null> {
  const agent = new http.Agent({ keepAlive: false });
  try {
    const response = await get(`${baseUrl}/metrics`, agent, 5_000);
    if (response.status !== 200) return null;
    const value = BODIES_ENCODED.exec(response.body.toString('utf8'))?.[1];
    return value === undefined ? null : Number(value);
  } catch {
    return null;
  } finally {
    agent.destroy();
  }
}
