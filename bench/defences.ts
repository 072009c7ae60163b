/**
 * gridco2's defences, measured (issue 10): what clients that pipeline requests and never read
 * make it hold, whether it still answers a health probe meanwhile, and what a request the rate
 * limiter refuses costs next to one it serves. Figures for the report, not assertions: only an
 * unexpected status (a served request that is not 200, a rejected one that is not 429) fails.
 */
import http from 'node:http';
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { get, type HttpResponse } from './capture.js';
import { runLoad, type LoadGenerator, type LoadResult } from './load.js';
import { hasExited } from './processes.js';
import { TRUNCATED_HISTORY } from './scenarios.js';
import {
  cpuTicks,
  residentMiB,
  startGridco2,
  TICKS_PER_SECOND,
  waitUntilIdle,
  type Gridco2,
} from './servers.js';

/** Connections that pipeline requests and never read, each its requests in one write. */
const NON_READERS = 200;
const PIPELINED = 50;
export const SAMPLE_EVERY_MS = 200;
export const PROBE_TIMEOUT_MS = 2_000;
/** After the non-readers are gone: time for the process to give memory back. */
export const SETTLE_MS = 1_000;
/** Keep-alive connections sending the CPU runs' requests, as many as the load generator's. */
export const CONCURRENCY = 10;
/** Requests sent before the CPU is counted, so that the JIT has compiled the path measured. */
export const WARM_UP_REQUESTS = 50;
/** Seconds left in the spent rate-limit window that the rejected run needs at least. */
const MIN_WINDOW_LEFT_SECONDS = 20;
/** The limit of the flooded instance, per client IP and minute. */
const FLOOD_LIMIT_PER_MINUTE = 60;
/** What the flood asks: a limited data route (health is not limited). */
export const FLOOD_PATH = '/v1/intensity/latest';
/** The prober's own loopback address: another client than the flooder (127.0.0.1). */
export const PROBE_ADDRESS = '127.0.0.2';
/** Pause between two health probes on the prober's keep-alive connection. */
export const PROBE_PAUSE_MS = 10;
/** The issue's goal for /v1/health's p99 while one IP floods the limit (issue 21). */
export const FLOOD_HEALTH_GOAL_MS = 100;

export interface DefencesPlan {
  /** How long the non-readers hold their connections while RSS and health are sampled. */
  readonly holdSeconds: number;
  /** How long one IP floods a limited instance while another probes its health. */
  readonly floodSeconds: number;
  /** Requests per CPU run (served, rejected); the report scales them to 10,000. */
  readonly requests: number;
}

export const defencesPlan = (quick: boolean): DefencesPlan =>
  quick
    ? { holdSeconds: 3, floodSeconds: 3, requests: 300 }
    : { holdSeconds: 15, floodSeconds: 30, requests: 3_000 };

/**
 * What one store's defences run takes, for the bench's time limit: four instances (start, cache,
 * stop), the hold and its last probes, the flood and its load generator's margin, idle waits,
 * the requests at 200 a second or more, and a rate-limit window that may have to be waited out.
 */
export function defencesSeconds(quick: boolean): number {
  const { holdSeconds, floodSeconds, requests } = defencesPlan(quick);
  return (
    4 * 15 +
    holdSeconds +
    floodSeconds +
    40 +
    PROBE_TIMEOUT_MS / 1000 +
    3 * 3 +
    2 * ((requests + WARM_UP_REQUESTS) / 200) +
    61
  );
}

interface NonReadersResult {
  /** Connections that were opened and sent their requests (of NON_READERS). */
  readonly connected: number;
  readonly connections: number;
  readonly pipelined: number;
  readonly holdSeconds: number;
  /** VmRSS with the cache loaded, before any non-reader; null without /proc. */
  readonly rssBeforeMiB: number | null;
  readonly rssPeakMiB: number | null;
  /** After the non-readers closed and the process went idle. */
  readonly rssAfterMiB: number | null;
  readonly probes: number;
  readonly probesAnswered: number;
  /** The slowest answered probe; null when none was answered. */
  readonly slowestProbeMs: number | null;
}

export interface CpuRun {
  /** gridco2's user + system clock ticks over the run; null without /proc. */
  readonly ticks: number | null;
  readonly wallSeconds: number;
}

interface CpuResult {
  readonly requests: number;
  readonly ticksPerSecond: number;
  readonly served: CpuRun;
  readonly rejected: CpuRun;
}

interface FloodResult {
  readonly seconds: number;
  readonly limitPerMinute: number;
  /** The flooder's load run: answers, refusals (non-2xx), rate. */
  readonly flood: LoadResult;
  /** Health probes sent, and the ms of each one answered 200 in order. */
  readonly probes: number;
  readonly answeredMs: readonly number[];
}

export interface DefencesResult {
  readonly store: string;
  readonly nonReaders: NonReadersResult;
  readonly cpu: CpuResult;
  readonly flood: FloodResult;
}

/**
 * The truncated 5000-point window with `from` moved on by `offsetSeconds`: every request asks a
 * window of its own, so no answer comes from the body cache, and (DE being hourly, with about
 * 5,850 hours up to `to`) each is still 5000 points for offsets up to a few hours.
 */
function shiftedWindow(offsetSeconds: number): string {
  const from = /from=([^&]+)/.exec(TRUNCATED_HISTORY.path)![1]!;
  const shifted = new Date(Date.parse(from) + offsetSeconds * 1000).toISOString();
  return TRUNCATED_HISTORY.path.replace(from, shifted.replace('.000Z', 'Z'));
}

export async function measureDefences(
  repoDir: string,
  store: string,
  databaseUrl: string,
  plan: DefencesPlan,
  generator: LoadGenerator,
  log: (message: string) => void,
): Promise<DefencesResult> {
  log(`${store}: defences: ${NON_READERS} x ${PIPELINED} pipelined non-readers`);
  const nonReaders = await measureNonReaders(repoDir, databaseUrl, plan.holdSeconds);
  const rss = (value: number | null) => (value === null ? 'n/a' : `${value.toFixed(0)} MiB`);
  log(
    `${store}: defences: RSS ${rss(nonReaders.rssBeforeMiB)} before, ` +
      `${rss(nonReaders.rssPeakMiB)} at peak, ${rss(nonReaders.rssAfterMiB)} after; ` +
      `health ${nonReaders.probesAnswered}/${nonReaders.probes}`,
  );
  log(`${store}: defences: CPU of ${plan.requests} served and ${plan.requests} rejected requests`);
  const served = await measureCpu(repoDir, databaseUrl, plan.requests, 'served');
  const rejected = await measureCpu(repoDir, databaseUrl, plan.requests, 'rejected');
  log(`${store}: defences: ${served.ticks} ticks served, ${rejected.ticks} ticks rejected`);
  log(`${store}: defences: one IP floods a limit of ${FLOOD_LIMIT_PER_MINUTE}/min, health probed`);
  const flood = await measureFlood(repoDir, databaseUrl, plan.floodSeconds, generator);
  log(
    `${store}: defences: flood ${flood.flood.requests} answers (${flood.flood.non2xx} refused), ` +
      `health p99 ${percentile(flood.answeredMs, 99)?.toFixed(1) ?? 'n/a'} ms ` +
      `(${flood.answeredMs.length}/${flood.probes} answered)`,
  );
  return {
    store,
    nonReaders,
    cpu: { requests: plan.requests, ticksPerSecond: TICKS_PER_SECOND, served, rejected },
    flood,
  };
}

/** The p-th percentile (nearest rank) of some values; null when there are none. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((sorted.length * p) / 100) - 1)]!;
}

/**
 * One IP floods a limited instance far above its limit (the load generator on its own core, 10
 * connections from 127.0.0.1, for `seconds`), while another client (127.0.0.2, one keep-alive
 * connection) asks /v1/health again and again: what a refused flood costs everyone else.
 */
function measureFlood(
  repoDir: string,
  databaseUrl: string,
  seconds: number,
  generator: LoadGenerator,
): Promise<FloodResult> {
  const env = { RATE_LIMIT_PER_MINUTE: String(FLOOD_LIMIT_PER_MINUTE) };
  return withGridco2(repoDir, databaseUrl, env, async (gridco2) => {
    await waitUntilIdle([gridco2.pid]);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: PROBE_ADDRESS });
    const answeredMs: number[] = [];
    let probes = 0;
    let flooding = true;
    const probing = (async () => {
      while (flooding) {
        probes++;
        const started = performance.now();
        const response = await get(`${gridco2.url}/v1/health`, agent, PROBE_TIMEOUT_MS).catch(
          () => undefined,
        );
        if (response?.status === 200) answeredMs.push(performance.now() - started);
        await delay(PROBE_PAUSE_MS);
      }
    })();
    try {
      const flood = await runLoad(generator, gridco2.url + FLOOD_PATH, seconds);
      // Refused answers are the flood working as meant; served ones must stay within the limit.
      const served = flood.requests - flood.non2xx;
      if (served > 2 * FLOOD_LIMIT_PER_MINUTE) {
        throw new Error(
          `the flood got ${served} answers served past a limit of ${FLOOD_LIMIT_PER_MINUTE}`,
        );
      }
      return { seconds, limitPerMinute: FLOOD_LIMIT_PER_MINUTE, flood, probes, answeredMs };
    } finally {
      flooding = false;
      await probing;
      agent.destroy();
    }
  });
}

/** Started as the bench starts it, measured once its cache is loaded, stopped whatever happens. */
async function withGridco2<T>(
  repoDir: string,
  databaseUrl: string,
  env: Readonly<Record<string, string>>,
  measure: (gridco2: Gridco2) => Promise<T>,
): Promise<T> {
  const gridco2 = await startGridco2(repoDir, databaseUrl, env);
  try {
    await gridco2.cacheLoaded;
    const result = await measure(gridco2);
    failIfExited(gridco2);
    return result;
  } finally {
    await gridco2.stop();
  }
}

function failIfExited(gridco2: Gridco2): void {
  if (!hasExited(gridco2.child)) return;
  const { exitCode, signalCode } = gridco2.child;
  throw new Error(
    `gridco2 exited (${signalCode ?? `code ${exitCode}`}) during the defences run; ` +
      `its output ends with:\n${gridco2.output()}`,
  );
}

/**
 * The worst case for memory: the limit never refuses, so every admitted request gets its body
 * built, and no client reads any of them. What bounds RSS is the connection guard alone.
 */
function measureNonReaders(
  repoDir: string,
  databaseUrl: string,
  holdSeconds: number,
): Promise<NonReadersResult> {
  return withGridco2(repoDir, databaseUrl, {}, async (gridco2) => {
    await expectFullWindow(gridco2.url, NON_READERS * PIPELINED - 1);
    await waitUntilIdle([gridco2.pid]);
    const rssBeforeMiB = residentMiB(gridco2.pid);
    let rssPeakMiB = rssBeforeMiB;
    const sample = () => {
      const now = residentMiB(gridco2.pid);
      if (now !== null) rssPeakMiB = Math.max(rssPeakMiB ?? 0, now);
    };

    const { hostname, port } = new URL(gridco2.url);
    const started = performance.now();
    const nonReaders = Array.from({ length: NON_READERS }, (_, connection) =>
      openNonReader(hostname, Number(port), pipelinedRequests(connection, hostname)),
    );
    const probeAgent = new http.Agent({ keepAlive: false });
    const probes: Promise<number | null>[] = [];
    try {
      while (performance.now() - started < holdSeconds * 1000) {
        sample();
        // One probe per sample whatever the previous one does: a stuck server fails them all.
        probes.push(probeHealth(gridco2.url, probeAgent));
        await delay(SAMPLE_EVERY_MS);
      }
      const timings = await Promise.all(probes);
      sample();
      // A connection still not made by now never will be, as far as this run is concerned.
      const made = nonReaders.map((reader) =>
        Promise.race([reader.connected, delay(1_000, false)]),
      );
      const connected = (await Promise.all(made)).filter(Boolean).length;
      failIfExited(gridco2);
      for (const { socket } of nonReaders) socket.destroy();
      await waitUntilIdle([gridco2.pid]);
      await delay(SETTLE_MS);
      const answered = timings.filter((ms): ms is number => ms !== null);
      return {
        connected,
        connections: NON_READERS,
        pipelined: PIPELINED,
        holdSeconds,
        rssBeforeMiB,
        rssPeakMiB,
        rssAfterMiB: residentMiB(gridco2.pid),
        probes: timings.length,
        probesAnswered: answered.length,
        slowestProbeMs: answered.length === 0 ? null : Math.max(...answered),
      };
    } finally {
      for (const { socket } of nonReaders) socket.destroy();
      probeAgent.destroy();
    }
  });
}

/** Each connection's requests, one distinct window each across all connections. */
function pipelinedRequests(connection: number, host: string): string {
  let requests = '';
  for (let i = 0; i < PIPELINED; i++) {
    const path = shiftedWindow(connection * PIPELINED + i);
    requests += `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
  }
  return requests;
}

function openNonReader(
  host: string,
  port: number,
  requests: string,
): { socket: net.Socket; connected: Promise<boolean> } {
  const socket = net.connect({ host, port });
  // Paused before it connects, it never reads: the answers pile up in the kernel, then in gridco2.
  socket.pause();
  const connected = new Promise<boolean>((resolve) => {
    socket.once('connect', () => {
      socket.write(requests);
      resolve(true);
    });
    // gridco2 closing it (a reset, later) is the defence at work, not a failure of the bench.
    socket.on('error', () => resolve(false));
  });
  return { socket, connected };
}

/** Milliseconds to a 200 of /v1/health on a new connection; null when it failed or timed out. */
async function probeHealth(baseUrl: string, agent: http.Agent): Promise<number | null> {
  const started = performance.now();
  const response = await get(`${baseUrl}/v1/health`, agent, PROBE_TIMEOUT_MS).catch(
    () => undefined,
  );
  return response?.status === 200 ? performance.now() - started : null;
}

/** Throws unless the most shifted window used is still the 5000 points of the scenario. */
async function expectFullWindow(baseUrl: string, offsetSeconds: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: false });
  try {
    const path = shiftedWindow(offsetSeconds);
    const response = await get(baseUrl + path, agent);
    const body = response.status === 200 ? JSON.parse(response.body.toString()) : {};
    if (!TRUNCATED_HISTORY.holds(body)) {
      throw new Error(
        `${path}: expected ${TRUNCATED_HISTORY.expected}, got ${response.status} ` +
          response.body.toString('utf8', 0, 200),
      );
    }
  } finally {
    agent.destroy();
  }
}

/**
 * gridco2's CPU time over `requests` requests for distinct 5000-point windows, 10 at a time on
 * keep-alive connections. Served: the limit never refuses, every body is built. Rejected: started
 * with a limit of 1 a minute, spent first, so every request is answered 429 before any body.
 */
function measureCpu(
  repoDir: string,
  databaseUrl: string,
  requests: number,
  kind: 'served' | 'rejected',
): Promise<CpuRun> {
  const env: Record<string, string> = kind === 'rejected' ? { RATE_LIMIT_PER_MINUTE: '1' } : {};
  const expected = kind === 'served' ? 200 : 429;
  return withGridco2(repoDir, databaseUrl, env, async (gridco2) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    try {
      if (kind === 'rejected') await spendRateLimit(gridco2.url, agent);
      // Warm-up windows lie after the measured ones: none is asked twice.
      await sendWindows(gridco2.url, agent, requests, WARM_UP_REQUESTS, expected);
      await waitUntilIdle([gridco2.pid]);
      const before = cpuTicks(gridco2.pid);
      const started = performance.now();
      await sendWindows(gridco2.url, agent, 0, requests, expected);
      const wallSeconds = (performance.now() - started) / 1000;
      const after = cpuTicks(gridco2.pid);
      return { ticks: before === null || after === null ? null : after - before, wallSeconds };
    } finally {
      agent.destroy();
    }
  });
}

const headerOf = (response: HttpResponse, name: string): string | undefined => {
  for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) {
    if (response.rawHeaders[i]!.toLowerCase() === name) return response.rawHeaders[i + 1];
  }
  return undefined;
};

/**
 * Uses up the limit of 1 a minute (start-up's first request may have done it already) in a
 * window with enough time left for the rejected run; otherwise waits that window out.
 */
async function spendRateLimit(baseUrl: string, agent: http.Agent): Promise<void> {
  for (let attempt = 1; attempt <= 4; attempt++) {
    const response = await get(`${baseUrl}/v1/intensity/latest`, agent);
    if (response.status === 200) continue;
    const left = Number(headerOf(response, 'ratelimit-reset'));
    if (response.status !== 429 || !Number.isFinite(left)) {
      throw new Error(`spending the rate limit: got ${response.status}, ratelimit-reset ${left}`);
    }
    if (left >= MIN_WINDOW_LEFT_SECONDS) return;
    await delay((left + 1) * 1000);
  }
  throw new Error('could not spend the rate limit of 1 request a minute in 4 requests');
}

/** `count` distinct windows from `firstOffset` on, CONCURRENCY at a time; throws on any other status. */
async function sendWindows(
  baseUrl: string,
  agent: http.Agent,
  firstOffset: number,
  count: number,
  expected: 200 | 429,
): Promise<void> {
  let next = firstOffset;
  const end = firstOffset + count;
  const unexpected: string[] = [];
  const sendInTurn = async () => {
    while (next < end) {
      const path = shiftedWindow(next++);
      const response = await get(baseUrl + path, agent);
      if (response.status !== expected) {
        unexpected.push(
          `${response.status} for ${path}: ${response.body.toString('utf8', 0, 200)}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, sendInTurn));
  if (unexpected.length > 0) {
    throw new Error(
      `${unexpected.length} of ${count} answers were not ${expected}; the first: ${unexpected[0]}`,
    );
  }
}
