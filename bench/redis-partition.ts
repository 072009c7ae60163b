/**
 * A Redis partition under limited requests (issue 22: a partition of 60 s adds under 10 ms p99
 * to limited requests and leaves no client refused after it ends). gridco2 counts its rate limit
 * in the real Redis on 127.0.0.1:6379 through a TCP proxy of the bench's own, which stops
 * forwarding (in both directions, closing nothing) for the partition. Busy clients (each at 80 %
 * of its limit, told apart by X-Forwarded-For) ask a limited route before, during and after it.
 */
import http from 'node:http';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { throwawayPrefix } from '../test/support/redis.js';
import { startPartitionProxy } from '../test/support/tcp-proxy.js';
import { buildSqliteStore } from './build-store.js';
import { SMALL_STORE } from './dataset.js';
import { percentile } from './defences.js';
import { hasExited, runIfMain } from './processes.js';
import { startGridco2, waitUntilIdle } from './servers.js';

const REDIS = { host: '127.0.0.1', port: 6379 } as const;
/** The goal: what the partition may add to the p99 of limited requests, ms. */
const ADDED_P99_GOAL_MS = 10;
/** Each client's limit, per minute; clients ask at 80 % of it. */
const LIMIT_PER_MINUTE = 600;
const CLIENTS = 10;
const REQUEST_EVERY_MS = 60_000 / (LIMIT_PER_MINUTE * 0.8);
/** A limited route, answered from memory: the time measured is the limiter's and the stack's. */
const LIMITED_PATH = '/v1/intensity/latest?zone=DE';
const REQUEST_TIMEOUT_MS = 10_000;

export interface PartitionPlan {
  /** Requests before `before` that are not counted: JIT, connections, the first window. */
  readonly warmUpSeconds: number;
  readonly beforeSeconds: number;
  readonly partitionSeconds: number;
  readonly afterSeconds: number;
}

export const partitionPlan = (quick: boolean): PartitionPlan =>
  quick
    ? { warmUpSeconds: 2, beforeSeconds: 5, partitionSeconds: 5, afterSeconds: 5 }
    : { warmUpSeconds: 5, beforeSeconds: 20, partitionSeconds: 60, afterSeconds: 20 };

/** What the part takes at most, for the bench's time limit. */
export function partitionSeconds(quick: boolean): number {
  const plan = partitionPlan(quick);
  return 90 + plan.warmUpSeconds + plan.beforeSeconds + plan.partitionSeconds + plan.afterSeconds;
}

interface PhaseResult {
  readonly requests: number;
  readonly refused: number;
  /** Answers other than 200 and 429, and requests that failed or timed out. */
  readonly failed: number;
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
  readonly maxMs: number | null;
}

export type PartitionResult =
  | {
      readonly store: string;
      readonly plan: PartitionPlan;
      readonly before: PhaseResult;
      readonly during: PhaseResult;
      readonly after: PhaseResult;
    }
  | { readonly store: string; readonly skipped: string };

type Phase = 'warm-up' | 'before' | 'during' | 'after';

interface Answer {
  readonly phase: Phase;
  readonly status: number;
  readonly ms: number;
}

async function redisAnswers(): Promise<string | undefined> {
  const client = new Redis({ ...REDIS, lazyConnect: true, connectTimeout: 1000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (error) {
    return `Redis on ${REDIS.host}:${REDIS.port} does not answer (${(error as Error).message})`;
  } finally {
    client.disconnect();
  }
}

function summarise(answers: readonly Answer[], phase: Phase): PhaseResult {
  const mine = answers.filter((answer) => answer.phase === phase);
  const times = mine.filter((answer) => answer.status === 200).map((answer) => answer.ms);
  return {
    requests: mine.length,
    refused: mine.filter((answer) => answer.status === 429).length,
    failed: mine.filter((answer) => answer.status !== 200 && answer.status !== 429).length,
    p50Ms: percentile(times, 50),
    p99Ms: percentile(times, 99),
    maxMs: times.length === 0 ? null : Math.max(...times),
  };
}

export async function measureRedisPartition(options: {
  readonly repoDir: string;
  readonly label: string;
  readonly databaseUrl: string;
  readonly plan: PartitionPlan;
  readonly log: (message: string) => void;
}): Promise<PartitionResult> {
  const { repoDir, label, plan, log } = options;
  const unreachable = await redisAnswers();
  if (unreachable) return { store: label, skipped: unreachable };
  const proxy = await startPartitionProxy(REDIS);
  const keys = throwawayPrefix();
  const gridco2 = await startGridco2(repoDir, options.databaseUrl, {
    RATE_LIMIT_PER_MINUTE: String(LIMIT_PER_MINUTE),
    REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
    REDIS_PREFIX: keys.prefix,
    TRUST_PROXY: '127.0.0.1',
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  try {
    await gridco2.cacheLoaded;
    await waitUntilIdle([gridco2.pid]);
    let phase: Phase = 'warm-up';
    let running = true;
    const answers: Answer[] = [];
    // Each client on its own pace, one request at a time, as a busy service polling would.
    const client = async (index: number) => {
      const headers = { 'x-forwarded-for': `10.22.0.${index + 1}` };
      const url = gridco2.url + LIMITED_PATH;
      let next = performance.now() + (REQUEST_EVERY_MS * index) / CLIENTS;
      while (running) {
        await delay(Math.max(0, next - performance.now()));
        next += REQUEST_EVERY_MS;
        const asked = phase;
        const started = performance.now();
        const status = await new Promise<number>((resolve) => {
          const request = http.get(url, { agent, headers }, (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode ?? 0));
            response.on('error', () => resolve(0));
          });
          request.setTimeout(REQUEST_TIMEOUT_MS, () => request.destroy());
          request.on('error', () => resolve(0));
        });
        answers.push({ phase: asked, status, ms: performance.now() - started });
      }
    };
    const clients = Array.from({ length: CLIENTS }, (_, index) => client(index));
    await delay(plan.warmUpSeconds * 1000);
    phase = 'before';
    await delay(plan.beforeSeconds * 1000);
    log(`${label}: Redis partitioned for ${plan.partitionSeconds} s`);
    proxy.partition();
    phase = 'during';
    await delay(plan.partitionSeconds * 1000);
    proxy.heal();
    phase = 'after';
    log(`${label}: Redis healed`);
    await delay(plan.afterSeconds * 1000);
    running = false;
    await Promise.all(clients);
    if (hasExited(gridco2.child)) {
      throw new Error(`gridco2 exited during the Redis partition:\n${gridco2.output()}`);
    }
    return {
      store: label,
      plan,
      before: summarise(answers, 'before'),
      during: summarise(answers, 'during'),
      after: summarise(answers, 'after'),
    };
  } finally {
    agent.destroy();
    await gridco2.stop();
    await proxy.close();
    await keys.drop().catch(() => undefined);
  }
}

const msOf = (value: number | null) => (value === null ? 'n/a' : value.toFixed(1));

export function renderRedisPartition(result: PartitionResult): string {
  const title = `## A Redis partition under limited requests (${result.store})`;
  if ('skipped' in result) return `${title}\n\nNot measured: ${result.skipped}.`;
  const { plan, before, during, after } = result;
  const added = during.p99Ms === null || before.p99Ms === null ? null : during.p99Ms - before.p99Ms;
  const goal =
    added !== null && added < ADDED_P99_GOAL_MS && after.refused === 0 && during.refused === 0
      ? 'met'
      : 'missed';
  const row = (name: string, seconds: number, phase: PhaseResult) =>
    `| ${name} | ${seconds} | ${phase.requests} | ${phase.refused} | ${phase.failed} | ` +
    `${msOf(phase.p50Ms)} | ${msOf(phase.p99Ms)} | ${msOf(phase.maxMs)} |`;
  return [
    title,
    '',
    `gridco2 (RATE_LIMIT_PER_MINUTE=${LIMIT_PER_MINUTE}) counts its limit in the Redis on ` +
      `${REDIS.host}:${REDIS.port} through a TCP proxy that, for the partition, stops ` +
      `forwarding both ways without closing anything. ${CLIENTS} clients (X-Forwarded-For, ` +
      `TRUST_PROXY=127.0.0.1), each one request at a time every ${REQUEST_EVERY_MS.toFixed(0)} ` +
      `ms (80 % of its limit), ask \`${LIMITED_PATH}\` before, during and after it. Times are ` +
      'of the 200 answers, measured by the bench. Goal (issue 22): the partition adds under ' +
      `${ADDED_P99_GOAL_MS} ms to the p99 (during minus before) and no client is refused.`,
    '',
    '| Phase | seconds | requests | refused (429) | failed | p50 ms | p99 ms | max ms |',
    '| ----- | ------- | -------- | ------------- | ------ | ------ | ------ | ------ |',
    row('before', plan.beforeSeconds, before),
    row('partition', plan.partitionSeconds, during),
    row('after', plan.afterSeconds, after),
    '',
    `Added p99: ${msOf(added)} ms; refused during ${during.refused}, after ${after.refused}: ` +
      `goal ${goal}.`,
  ].join('\n');
}

/** Standalone: `npx tsx bench/redis-partition.ts [--quick]` on the 50k store, from dist/. */
async function main(): Promise<void> {
  const repoDir = fileURLToPath(new URL('..', import.meta.url));
  const built = await buildSqliteStore(SMALL_STORE, join(repoDir, 'bench/.cache'));
  const result = await measureRedisPartition({
    repoDir,
    label: `${SMALL_STORE.label} sqlite`,
    databaseUrl: built.databaseUrl,
    plan: partitionPlan(process.argv.includes('--quick')),
    log: (line) => console.error(line),
  });
  console.log(renderRedisPartition(result));
}

runIfMain(import.meta.url, main);
