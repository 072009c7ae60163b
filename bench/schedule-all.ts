/**
 * `/v1/schedule?zones=all` with `ZONES=all` (extensions §5, §16): every node of the flow graphs
 * served beside the 45, against a server without ZONES on the same store and reading cache in
 * the same run (its 45 zones: the bench's schedule scenario). The upstream simulator over HTTP
 * fills a SQLite store with one pass of every source (FLOWS=on, 80 hours); both servers answer
 * from memory over loopback, with the clock pinned at the simulator's. Asked: a 4-hour job over
 * the 72 hours ending then (published values; every zone has a window), at 10 connections.
 * Figures, not assertions: only a non-200 fails the run.
 *
 *   npx tsx bench/schedule-all.ts [--duration S] [--rounds N]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { loadConfig, type Config } from '../src/config.js';
import { SOURCES } from '../src/core/sources.js';
import { formatTs } from '../src/core/time.js';
import { servableZones } from '../src/core/zone-registry.js';
import { buildApp } from '../src/http/app.js';
import { ingestSource } from '../src/ingest/ingest-source.js';
import { ReadingCache } from '../src/read/reading-cache.js';
import { startSimulator } from '../src/simulator/index.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { detectLoadGenerator, runLoad, CONNECTIONS } from './load.js';
import { runIfMain } from './processes.js';

const H = 3600;
const NOW_MS = Date.UTC(2026, 10, 21, 13, 0, 0);
const NOW = NOW_MS / 1000;
const PASS_SECONDS = 80 * H;
const HEAVIEST_REQUESTS = 50;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '3' },
    },
  });
  const seconds = Number(values.duration);
  const rounds = Number(values.rounds);
  const dir = mkdtempSync(join(tmpdir(), 'gridco2-schedule-all-'));
  const simulator = await startSimulator({ seed: 3, now: () => NOW_MS });
  const settings = (zones?: string): Config =>
    loadConfig({
      DEMO: 'on',
      DATABASE_URL: 'sqlite::memory:',
      FLOWS: 'on',
      METRICS: 'off',
      RATE_LIMIT_PER_MINUTE: '100000000',
      ENTSOE_BASE_URL: `${simulator.url}/api`,
      ENTSOE_TOKEN: 'simulated',
      EIA_BASE_URL: `${simulator.url}/v2`,
      EIA_API_KEY: 'simulated',
      NESO_BASE_URL: simulator.url,
      ...(zones && { ZONES: zones }),
    });
  const store = new SqliteStore(join(dir, 'store.db'));
  const logger = pino({ level: 'silent' });
  const clock = {
    now: () => NOW_MS,
    sleep: async () => undefined,
    timeout: () => new AbortController().signal,
  };
  const signal = new AbortController().signal;
  const all = settings('all');
  await Promise.all(
    SOURCES.map((source) =>
      ingestSource({ config: all, store, logger, source, clock, localUpstream: true }).pass(
        signal,
        PASS_SECONDS,
      ),
    ),
  );
  const cache = new ReadingCache(store, undefined, { pollMs: 60_000, zones: servableZones('all') });
  await cache.refresh();
  const generator = detectLoadGenerator();
  const query =
    `/v1/schedule?zones=all&duration_minutes=240` +
    `&earliest=${encodeURIComponent(formatTs(NOW - 72 * H))}&deadline=${encodeURIComponent(formatTs(NOW))}`;
  // A 48-hour interruptible job over the same window (the heaviest of test/request-cost.test.ts).
  const heaviest = query.replace(
    'duration_minutes=240',
    'duration_minutes=2880&interruptible=true',
  );
  console.log(`load generator: ${generator.description}; ${CONNECTIONS} connections`);
  console.log(`GET ${query}`);
  console.log(`heaviest: ${heaviest}`);
  const apps: FastifyInstance[] = [];
  const servers: { name: string; url: string }[] = [];
  try {
    for (const [name, config] of [
      ['ZONES=all', all],
      ['without ZONES', settings()],
    ] as const) {
      const app = await buildApp({ config, store, clock: () => NOW_MS, cache });
      apps.push(app);
      const url = `${await app.listen({ port: 0, host: '127.0.0.1' })}${query}`;
      servers.push({ name, url });
      const response = await fetch(url);
      const body = (await response.json()) as { options?: unknown[] };
      if (response.status !== 200) {
        throw new Error(`${name}: ${response.status} ${JSON.stringify(body)}`);
      }
      console.log(
        `${name}: ${app.servedZones.current.zones.length} zones served, ` +
          `${body.options?.length} options, ${Buffer.byteLength(JSON.stringify(body))} bytes`,
      );
    }
    // Rounds alternate between the servers: both see the machine's load alike.
    for (let round = 1; round <= rounds; round++) {
      for (const { name, url } of servers) {
        const before = process.cpuUsage();
        const result = await runLoad(generator, url, seconds);
        const cpu = process.cpuUsage(before);
        if (result.errors > 0) throw new Error(`${name}: ${result.errors} errors`);
        // This process serves both and does nothing else meanwhile (the load is another one).
        const cpuPerRequest = (cpu.user + cpu.system) / 1000 / result.requests;
        console.log(
          `round ${round} ${name}: ${result.requestsPerSecond.toFixed(0)} req/s, ` +
            `p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, ` +
            `${cpuPerRequest.toFixed(3)} CPU ms/request (load ${loadavg()[0]!.toFixed(1)})`,
        );
      }
    }
    // The heaviest schedule, one request at a time: its CPU is what it holds the event loop for.
    for (const { name, url } of servers) {
      const heavyUrl = url.replace(query, heaviest);
      const times: number[] = [];
      for (let i = 0; i < HEAVIEST_REQUESTS; i++) {
        const before = process.cpuUsage();
        const response = await fetch(heavyUrl);
        await response.arrayBuffer();
        const cpu = process.cpuUsage(before);
        if (response.status !== 200) throw new Error(`${name}: heaviest ${response.status}`);
        times.push((cpu.user + cpu.system) / 1000);
      }
      times.sort((a, b) => a - b);
      console.log(
        `heaviest ${name}: CPU ms (server and its fetch client) per request, ${HEAVIEST_REQUESTS} in turn: median ` +
          `${times[times.length >> 1]!.toFixed(2)}, max ${times[times.length - 1]!.toFixed(2)}`,
      );
    }
  } finally {
    for (const app of apps) await app.close();
    await cache.stop();
    await store.close();
    await simulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

runIfMain(import.meta.url, main);
