/**
 * Event streams and bulk export, measured (issue 14): what 1,000 open `/v1/stream` connections
 * cost in RSS, how long one year of every zone takes as CSV from `/v1/export` and whether the
 * process's memory stays flat meanwhile, and how fast a reading written to the store reaches
 * streams open on two instances of it. Figures for the report with their targets; only an
 * unexpected status or a stream that never opens fails the run.
 *
 * Standalone: `npx tsx bench/streams-export.ts [--quick] [--postgres] [--streams N]` runs it on
 * the cached 3.2M SQLite store (the 50k one with --quick), starting gridco2 from src/ through tsx;
 * --postgres measures the delivery on a throwaway PostgreSQL database instead of a SQLite file.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { StoredReading } from '../src/core/reading.js';
import { formatTs } from '../src/core/time.js';
import { createStore } from '../src/storage/create-store.js';
import { DATASET_END } from './dataset.js';
import { outputTail, stopProcess, waitForLine } from './processes.js';
import { residentMiB, serverEnv, startGridco2, waitUntilIdle } from './servers.js';

/** Targets of issue 14. */
const STREAMS_RSS_TARGET_MIB = 100;
const EXPORT_SECONDS_TARGET = 1;
const DELIVERY_TARGET_MS = 2_000;

/**
 * What gridco2 needs for these measurements: every stream comes from loopback, each with an
 * address of its own in X-Forwarded-For (the caps are 5 streams per client IP), and the cap on
 * streams in all must let 1,000 (plus the delivery probes) open.
 */
const STREAMS_EXPORT_ENV: Readonly<Record<string, string>> = {
  TRUST_PROXY: '127.0.0.1',
  STREAM_MAX: '5000',
};

/** A gridco2 process under test, however it was started. */
interface ServerUnderTest {
  readonly url: string;
  readonly pid: number;
  /** Resolves once its reading cache is loaded (null: it never said so). */
  readonly cacheLoaded: Promise<number | null>;
  stop(): Promise<void>;
}

type StartServer = (
  databaseUrl: string,
  env: Readonly<Record<string, string>>,
) => Promise<ServerUnderTest>;

export interface StreamsExportPlan {
  /** Streams held open for the RSS figure. */
  readonly streams: number;
  /** Export runs; the report gives each and their median. */
  readonly exportRuns: number;
  /** Readings written, one at a time, for the delivery figure. */
  readonly deliveries: number;
}

export const streamsExportPlan = (quick: boolean, streams?: number): StreamsExportPlan =>
  quick
    ? { streams: streams ?? 200, exportRuns: 1, deliveries: 3 }
    : { streams: streams ?? 1_000, exportRuns: 3, deliveries: 10 };

interface StreamsFigures {
  readonly streams: number;
  /** From the first request to the last stream's opening `retry:` line. */
  readonly openMs: number;
  readonly rssBeforeMiB: number | null;
  readonly rssAfterMiB: number | null;
}

interface ExportRun {
  readonly seconds: number;
  readonly bytes: number;
  readonly rows: number;
  readonly rssBeforeMiB: number | null;
  readonly rssPeakMiB: number | null;
  readonly rssAfterMiB: number | null;
}

interface DeliveryFigures {
  readonly backend: string;
  /** Streams open on each of the two instances. */
  readonly streamsPerInstance: number;
  readonly deliveries: number;
  /** From the write's commit to each stream's event, over every stream and write. */
  readonly medianMs: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface StreamsExportResult {
  readonly label: string;
  readonly streams: StreamsFigures;
  readonly exportPath: string;
  readonly exports: readonly ExportRun[];
  readonly delivery: DeliveryFigures | null;
}

export interface StreamsExportOptions {
  readonly repoDir: string;
  /** Names the store in the report, e.g. `3.2M sqlite`. */
  readonly label: string;
  /** The store to export from and hold streams on; only read. */
  readonly databaseUrl: string;
  /**
   * A store the bench may write into, for the delivery figure (two instances follow it): a
   * throwaway PostgreSQL database. Without one, a fresh SQLite file in `scratchDir`.
   */
  readonly deliveryDatabaseUrl?: string;
  readonly scratchDir: string;
  readonly plan: StreamsExportPlan;
  readonly log: (line: string) => void;
  /** How gridco2 is started; default: `bin/gridco2.js serve` from dist/, as the bench does. */
  readonly start?: StartServer;
}

const YEAR = 365 * 24 * 3600;

/** Runs the three measurements; every process it starts is stopped before it returns. */
export async function measureStreamsAndExport(
  options: StreamsExportOptions,
): Promise<StreamsExportResult> {
  const { label, plan, log } = options;
  const start =
    options.start ??
    ((databaseUrl: string, env: Readonly<Record<string, string>>) =>
      startGridco2(options.repoDir, databaseUrl, env));

  const server = await start(options.databaseUrl, STREAMS_EXPORT_ENV);
  let streams: StreamsFigures;
  const exports: ExportRun[] = [];
  const exportPath =
    `/v1/export?zones=all&from=${formatTs(DATASET_END - YEAR)}` + `&to=${formatTs(DATASET_END)}`;
  try {
    await server.cacheLoaded;
    // Streams first: the exports' garbage would leave heap to spare that hides their cost.
    streams = await holdStreams(server, plan.streams);
    log(
      `${label}: ${plan.streams} streams open in ${streams.openMs.toFixed(0)} ms; RSS ` +
        `${mib(streams.rssBeforeMiB)} -> ${mib(streams.rssAfterMiB)}`,
    );
    await waitUntilIdle([server.pid]);
    for (let run = 0; run < plan.exportRuns; run++) {
      const result = await timeExport(server, exportPath);
      exports.push(result);
      log(
        `${label}: export of a year of every zone, ${(result.bytes / 1e6).toFixed(1)} MB, ` +
          `${result.rows.toLocaleString('en-US')} rows in ${result.seconds.toFixed(2)} s; RSS ` +
          `${mib(result.rssBeforeMiB)} -> peak ${mib(result.rssPeakMiB)} -> ${mib(result.rssAfterMiB)}`,
      );
      await waitUntilIdle([server.pid]);
    }
  } finally {
    await server.stop();
  }

  const delivery = await measureDelivery(options, start, plan);
  if (delivery) {
    log(
      `${delivery.backend}: a written reading reached ${2 * delivery.streamsPerInstance} streams ` +
        `on 2 instances in median ${delivery.medianMs.toFixed(0)} ms, p99 ` +
        `${delivery.p99Ms.toFixed(0)} ms, max ${delivery.maxMs.toFixed(0)} ms`,
    );
  }
  return { label, streams, exportPath, exports, delivery };
}

const mib = (value: number | null) => (value === null ? 'n/a' : `${value.toFixed(0)} MiB`);

/** Downloads the export as fast as the client can, sampling the server's RSS meanwhile. */
async function timeExport(server: ServerUnderTest, path: string): Promise<ExportRun> {
  const rssBeforeMiB = residentMiB(server.pid);
  let rssPeakMiB = rssBeforeMiB;
  const sampler = setInterval(() => {
    const now = residentMiB(server.pid);
    if (now !== null && (rssPeakMiB === null || now > rssPeakMiB)) rssPeakMiB = now;
  }, 10);
  const started = performance.now();
  let bytes = 0;
  let rows = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      http
        .get(`${server.url}${path}`, { agent: false }, (response) => {
          if (response.statusCode !== 200) {
            reject(new Error(`export answered ${response.statusCode}`));
            response.resume();
            return;
          }
          response.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) rows++;
          });
          response.on('end', resolve);
          response.on('error', reject);
        })
        .on('error', reject);
    });
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  await delay(500);
  // The header line is not a row.
  return {
    seconds,
    bytes,
    rows: rows - 1,
    rssBeforeMiB,
    rssPeakMiB,
    rssAfterMiB: residentMiB(server.pid),
  };
}

/** One open stream seen from the client: raw text, as little state as possible. */
interface OpenStream {
  readonly request: http.ClientRequest;
  opened: Promise<void>;
  /** Called with each chunk of text received. */
  onText: (text: string) => void;
}

let clientCounter = 0;

/** Opens a stream with a client address of its own; resolves once its `retry:` line came. */
function openStream(url: string, path = '/v1/stream'): OpenStream {
  clientCounter++;
  const address = `10.${(clientCounter >> 16) & 255}.${(clientCounter >> 8) & 255}.${clientCounter & 255}`;
  let markOpen: () => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  const stream: OpenStream = {
    request: http.get(`${url}${path}`, { agent: false, headers: { 'x-forwarded-for': address } }),
    opened: new Promise<void>((resolve, reject) => {
      markOpen = resolve;
      fail = reject;
    }),
    onText: () => undefined,
  };
  stream.request.on('response', (response) => {
    if (response.statusCode !== 200) {
      fail(new Error(`stream answered ${response.statusCode}`));
      response.resume();
      return;
    }
    response.setEncoding('utf8');
    response.on('data', (text: string) => {
      if (text.includes('retry: ')) markOpen();
      stream.onText(text);
    });
  });
  stream.request.on('error', (error) => fail(error));
  return stream;
}

async function openStreams(url: string, count: number, path?: string): Promise<OpenStream[]> {
  const streams: OpenStream[] = [];
  // A hundred at a time: the accept queue and the rate of new connections stay ordinary.
  for (let first = 0; first < count; first += 100) {
    const batch = Array.from({ length: Math.min(100, count - first) }, () => openStream(url, path));
    await Promise.all(batch.map((stream) => stream.opened));
    streams.push(...batch);
  }
  return streams;
}

const closeStreams = (streams: readonly OpenStream[]) => {
  for (const stream of streams) stream.request.destroy();
};

/** Opens `count` streams on an idle instance and reads its RSS before and once they settled. */
async function holdStreams(server: ServerUnderTest, count: number): Promise<StreamsFigures> {
  await waitUntilIdle([server.pid]);
  const rssBeforeMiB = residentMiB(server.pid);
  const started = performance.now();
  const streams = await openStreams(server.url, count);
  const openMs = performance.now() - started;
  try {
    await delay(1_000);
    await waitUntilIdle([server.pid]);
    return { streams: count, openMs, rssBeforeMiB, rssAfterMiB: residentMiB(server.pid) };
  } finally {
    closeStreams(streams);
  }
}

/**
 * Two instances on one store, `plan.streams / 2` streams on each; readings written one at a
 * time through a store handle of the bench's own, as the ingesting instance would write them.
 */
async function measureDelivery(
  options: StreamsExportOptions,
  start: StartServer,
  plan: StreamsExportPlan,
): Promise<DeliveryFigures | null> {
  let databaseUrl = options.deliveryDatabaseUrl;
  if (!databaseUrl) {
    databaseUrl = `sqlite:${join(options.scratchDir, `streams-delivery-${process.pid}.db`)}`;
  }
  const store = await createStore(databaseUrl);
  // Far from any bench data: the delivery readings never change what other figures read.
  const first = Date.UTC(2100, 0, 1) / 1000;
  const reading = (i: number): StoredReading => ({
    zone: 'DE',
    ts: first + i * 3600,
    value: 100 + i,
    method: 'computed:v1',
    complete: true,
    mix: { gas: 1 },
    lifecycle: 100 + i,
    direct: 50 + i,
  });
  const instances: ServerUnderTest[] = [];
  const streams: OpenStream[] = [];
  try {
    await store.upsertReadings([reading(-1)]);
    for (let i = 0; i < 2; i++) instances.push(await start(databaseUrl, STREAMS_EXPORT_ENV));
    await Promise.all(instances.map((instance) => instance.cacheLoaded));
    const perInstance = Math.max(1, Math.floor(plan.streams / 2));
    for (const instance of instances) {
      streams.push(...(await openStreams(instance.url, perInstance, '/v1/stream?zones=DE')));
    }
    const delays: number[] = [];
    for (let i = 0; i < plan.deliveries; i++) {
      const marker = `"ts":"${formatTs(reading(i).ts)}"`;
      let left = streams.length;
      let written = Number.NaN;
      const allReceived = new Promise<void>((resolve) => {
        for (const stream of streams) {
          let seen = false;
          stream.onText = (text) => {
            if (seen || !text.includes(marker)) return;
            seen = true;
            delays.push(performance.now() - written);
            if (--left === 0) resolve();
          };
        }
      });
      written = performance.now();
      await store.upsertReadings([reading(i)]);
      const late = await Promise.race([allReceived.then(() => false), delay(15_000, true)]);
      if (late) throw new Error(`a written reading reached ${streams.length - left} streams only`);
      await delay(200);
    }
    delays.sort((a, b) => a - b);
    return {
      backend: databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres',
      streamsPerInstance: perInstance,
      deliveries: plan.deliveries,
      medianMs: delays[Math.floor(delays.length / 2)]!,
      p99Ms: delays[Math.min(delays.length - 1, Math.floor(delays.length * 0.99))]!,
      maxMs: delays.at(-1)!,
    };
  } finally {
    closeStreams(streams);
    for (const instance of instances) await instance.stop();
    await store.close();
  }
}

/** The report's section: figures, each beside its target. */
export function renderStreamsExport(results: readonly StreamsExportResult[]): string {
  const lines = [
    '## Event streams and export',
    '',
    `Targets: ${STREAMS_RSS_TARGET_MIB} MiB of RSS or less for 1,000 open streams; one year of ` +
      `every zone as CSV in under ${EXPORT_SECONDS_TARGET} s with flat memory; a written reading ` +
      `on every stream of two instances within ${DELIVERY_TARGET_MS / 1000} s.`,
    '',
    '| Store | Measure | Figure | Target |',
    '| --- | --- | --- | --- |',
  ];
  for (const result of results) {
    const { streams } = result;
    const extra =
      streams.rssBeforeMiB === null || streams.rssAfterMiB === null
        ? null
        : streams.rssAfterMiB - streams.rssBeforeMiB;
    lines.push(
      `| ${result.label} | ${streams.streams.toLocaleString('en-US')} open streams | ` +
        `+${mib(extra)} RSS (${mib(streams.rssBeforeMiB)} -> ${mib(streams.rssAfterMiB)}), ` +
        `opened in ${(streams.openMs / 1000).toFixed(1)} s | ` +
        `<= ${STREAMS_RSS_TARGET_MIB} MiB for 1,000 |`,
    );
    const seconds = result.exports.map((run) => run.seconds).sort((a, b) => a - b);
    const last = result.exports.at(-1);
    if (last) {
      const peak = Math.max(...result.exports.map((run) => run.rssPeakMiB ?? 0));
      lines.push(
        `| ${result.label} | \`${result.exportPath}\` | median ` +
          `${seconds[Math.floor(seconds.length / 2)]!.toFixed(2)} s of ` +
          `${seconds.map((value) => value.toFixed(2)).join(', ')}; ` +
          `${(last.bytes / 1e6).toFixed(1)} MB, ${last.rows.toLocaleString('en-US')} rows; RSS ` +
          `${mib(last.rssBeforeMiB)} before, ${peak.toFixed(0)} MiB at the peak, ` +
          `${mib(last.rssAfterMiB)} after | < ${EXPORT_SECONDS_TARGET} s, flat RSS |`,
      );
    }
    const { delivery } = result;
    if (delivery) {
      lines.push(
        `| ${delivery.backend}, 2 instances | a written reading to ` +
          `${2 * delivery.streamsPerInstance} streams, ${delivery.deliveries} writes | median ` +
          `${delivery.medianMs.toFixed(0)} ms, p99 ${delivery.p99Ms.toFixed(0)} ms, max ` +
          `${delivery.maxMs.toFixed(0)} ms | < ${DELIVERY_TARGET_MS} ms |`,
      );
    }
  }
  return lines.join('\n');
}

/** Starts gridco2 from src/ through tsx (no build needed), as `gridco2 serve` with `env`. */
function startFromSource(repoDir: string): StartServer {
  return async (databaseUrl, env) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
      cwd: repoDir,
      env: serverEnv(databaseUrl, env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    outputTail(child);
    const message = (line: string) => {
      try {
        return (JSON.parse(line) as { msg?: string; url?: string }) ?? {};
      } catch {
        return {};
      }
    };
    const cacheLoaded = waitForLine(
      child,
      (line) => (message(line).msg === 'reading cache loaded' ? 0 : undefined),
      120_000,
    ).catch(() => null);
    const url = await waitForLine(child, (line) => message(line).url, 60_000);
    return { url, pid: child.pid!, cacheLoaded, stop: () => stopProcess(child) };
  };
}

/** `--streams N`: another number of streams than the plan's. */
function streamsArgument(): number | undefined {
  const at = process.argv.indexOf('--streams');
  return at < 0 ? undefined : Number(process.argv[at + 1]);
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const repoDir = fileURLToPath(new URL('..', import.meta.url));
  const { buildSqliteStore, createBenchDatabase } = await import('./build-store.js');
  const { LARGE_STORE, SMALL_STORE } = await import('./dataset.js');
  const spec = quick ? SMALL_STORE : LARGE_STORE;
  const built = await buildSqliteStore(spec, join(repoDir, 'bench/.cache'));
  const scratchDir = mkdtempSync(join(tmpdir(), 'gridco2-streams-'));
  const database = process.argv.includes('--postgres') ? await createBenchDatabase() : undefined;
  try {
    const result = await measureStreamsAndExport({
      repoDir,
      label: `${spec.label} sqlite`,
      databaseUrl: built.databaseUrl,
      ...(database && { deliveryDatabaseUrl: database.url }),
      scratchDir,
      plan: streamsExportPlan(quick, streamsArgument()),
      log: (line) => console.log(line),
      start: startFromSource(repoDir),
    });
    console.log(`\n${renderStreamsExport([result])}`);
  } finally {
    await database?.drop();
    rmSync(scratchDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
