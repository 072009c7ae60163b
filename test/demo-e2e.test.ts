import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isServedZone, ZONES } from '../src/core/zones.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { CLI } from './support/built-cli.js';

/**
 * `gridco2 demo` as a user runs it: the CLI (the build: test/support/built-cli.ts) as a child
 * process in an empty working directory, with PORT=0, then the API over HTTP. It must serve every
 * zone, say everywhere that the data is synthetic, keep it in data/demo.db whatever DATABASE_URL
 * says, backfill while serving, and stop cleanly. The tests wait for what they assert; how soon
 * the demo serves is a figure of `npm run bench` (bench/demo-start.ts).
 */

// Forecasts need a week of values (the US publishes up to 30 hours late): the shortest demo
// that forecasts every zone.
const DAYS = 9;
const H = 3600;
/** How long a wait for what a test asserts may last: a net for a demo that never gets there. */
const PATIENCE_MS = 170_000;

const cwd = mkdtempSync(join(tmpdir(), 'gridco2-demo-e2e-'));
const realDatabase = join(cwd, 'real.db');
let child: ChildProcessWithoutNullStreams;
let stdout = '';
let stderr = '';
let url: string;

/** Resolves once `predicate` holds for the output so far; rejects after `timeoutMs`. */
function outputMatching(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!predicate()) return;
      clearTimeout(timer);
      child.stdout.off('data', check);
      child.stderr.off('data', check);
      resolve();
    };
    const timer = setTimeout(
      () => reject(new Error(`no ${what} within ${timeoutMs} ms:\n${stdout}\n${stderr}`)),
      timeoutMs,
    );
    child.stdout.on('data', check);
    child.stderr.on('data', check);
    check();
  });
}

beforeAll(async () => {
  child = spawn(process.execPath, [CLI, 'demo', '--days', String(DAYS)], {
    cwd,
    // Only what the test sets, as a user would: a real database the demo must leave alone.
    env: {
      PATH: process.env['PATH'] ?? '',
      PORT: '0',
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: '100000',
      DATABASE_URL: `sqlite:${realDatabase}`,
      // Forecasts at the server's priority, so they come beside other CPU-bound work too.
      FORECAST_NICENESS: '0',
    },
  });
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await outputMatching(
    () => /"url":"http[^"]+".*"msg":"gridco2 serving"/.test(stdout),
    PATIENCE_MS,
    'url',
  );
  url = /"url":"(http[^"]+)".*"msg":"gridco2 serving"/.exec(stdout)![1]!;
});
afterAll(() => {
  if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(cwd, { recursive: true, force: true });
});

async function getJson<T>(path: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${url}${path}`);
  return { status: response.status, body: (await response.json()) as T };
}

describe('gridco2 demo', () => {
  it('serves all 45 zones and an ok status', async () => {
    const waitStarted = Date.now();
    let zones: string[] = [];
    let status = 0;
    let ok = false;
    while (Date.now() - waitStarted < PATIENCE_MS) {
      const latest = await getJson<{ data: { zone: string }[] }>('/v1/intensity/latest');
      const freshness = await getJson<{ ok: boolean }>('/v1/status');
      zones = latest.status === 200 ? latest.body.data.map((reading) => reading.zone) : [];
      ({ status } = freshness);
      ok = freshness.body.ok;
      if (zones.length === ZONES.length && status === 200 && ok) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(zones.sort()).toEqual(ZONES.map((zone) => zone.code).sort());
    expect({ status, ok }).toEqual({ status: 200, ok: true });
  });

  it('serves a forecast of every zone and a schedule of all zones', async () => {
    const waitStarted = Date.now();
    const counts = new Map<string, number>();
    let options = 0;
    while (Date.now() - waitStarted < PATIENCE_MS) {
      for (const { code } of ZONES) {
        if ((counts.get(code) ?? 0) > 0) continue;
        const forecast = await getJson<{ count: number }>(`/v1/intensity/forecast?zone=${code}`);
        counts.set(code, forecast.status === 200 ? forecast.body.count : 0);
      }
      const schedule = await getJson<{ options?: unknown[] }>('/v1/schedule?zones=all');
      options = schedule.status === 200 ? (schedule.body.options?.length ?? 0) : 0;
      if ([...counts.values()].every((count) => count > 0) && options === ZONES.length) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(ZONES.filter(({ code }) => !(counts.get(code)! > 0)).map(({ code }) => code)).toEqual(
      [],
    );
    expect(options).toBe(ZONES.length);
  });

  it('says the data is synthetic, in the banner, the log and the /v1 index', async () => {
    expect(stderr).toMatch(/DEMO MODE: every value served is SYNTHETIC/);
    expect(stderr).toContain('Not used in demo mode: DATABASE_URL.');
    expect(stdout).toContain('"demo":true');
    const index = await getJson<{ status: string }>('/v1');
    expect(index.body.status).toMatch(/DEMO MODE: synthetic data/);
  });

  it('backfills the window while serving, into data/demo.db and never DATABASE_URL', async () => {
    const done = new RegExp(`demo: backfill of ${DAYS} days done`);
    await outputMatching(() => done.test(stdout), PATIENCE_MS, 'backfill');
    expect(stdout).toMatch(new RegExp(`"errors":0,"msg":"demo: backfill of ${DAYS} days done`));
    // Not a terminal: one plain progress line per chunk, for every source, up to the last.
    for (const source of ['europe-tso', 'us-agency', 'uk-operator']) {
      expect(stderr).toMatch(new RegExp(`backfill ${source} (\\d+)/\\1 `));
    }
    expect(existsSync(join(cwd, 'data', 'demo.db'))).toBe(true);
    expect(existsSync(realDatabase)).toBe(false);

    // History for the whole window, hour by hour up to the zone's publication lag.
    const nowS = Math.floor(Date.now() / 1000);
    const from = new Date((nowS - DAYS * 24 * H) * 1000).toISOString();
    const history = await getJson<{ data: { ts: string }[] }>(`/v1/intensity?zone=FR&from=${from}`);
    expect(history.status).toBe(200);
    // Publication lag (up to 4 h) and the odd incomplete hour aside.
    expect(history.body.data.length).toBeGreaterThanOrEqual(DAYS * 24 - 8);
    const first = Date.parse(history.body.data[0]!.ts) / 1000;
    expect(first - (nowS - DAYS * 24 * H)).toBeLessThan(2 * H);
  });

  it('backfills the flows of the whole window too, and traces the consumption series after', async () => {
    // The backfill's consumption updates come after its own line, Europe's then the US's.
    const traced =
      /demo: backfill of \d+ days done[^]*"consumption series of europe: [^]*"consumption series of us: /;
    await outputMatching(() => traced.test(stdout), 120_000, 'consumption after the backfill');
    const nowS = Math.floor(Date.now() / 1000);
    const store = new SqliteStore(join(cwd, 'data', 'demo.db'));
    try {
      // Every border's flows from the window's start on (the first pass reaches back 7 days).
      const borders = await store.flowBorders('europe');
      expect(borders.length).toBeGreaterThan(200);
      const firstFlow = Math.min(...borders.map((border) => border.firstTs));
      expect(firstFlow - (nowS - DAYS * 24 * H)).toBeLessThan(2 * H);
      const zones = (await store.latestConsumptionPerZone('lifecycle')).map(({ zone }) => zone);
      expect(ZONES.filter(({ code }) => code !== 'GB' && !zones.includes(code))).toEqual([]);
      expect(zones).not.toContain('GB');
    } finally {
      await store.close();
    }
  });

  it('serves GB on every basis, from the simulated generation mix', async () => {
    for (const [basis, method] of [
      ['lifecycle', 'computed:v1'],
      ['direct', 'computed:v1:direct'],
    ] as const) {
      const latest = await getJson<{ data: { zone: string; method: string }[] }>(
        `/v1/intensity/latest?basis=${basis}`,
      );
      expect(latest.body.data.map((reading) => reading.zone).sort()).toEqual(
        ZONES.map((zone) => zone.code).sort(),
      );
      expect(latest.body.data.find((reading) => reading.zone === 'GB')?.method).toBe(method);
    }
    // Backfilled (the test above waited for it): the window half-hour by half-hour.
    const from = new Date((Math.floor(Date.now() / 1000) - DAYS * 24 * H) * 1000).toISOString();
    const history = await getJson<{ data: { method: string }[] }>(
      `/v1/intensity?zone=GB&basis=lifecycle&from=${from}`,
    );
    expect(history.status).toBe(200);
    expect(history.body.data.length).toBeGreaterThanOrEqual(DAYS * 48 - 2);
  });

  it('stops the server, ingestion, workers, simulator and store on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stdout).toMatch(/shutting down/);
    expect(stderr).not.toMatch(/error/i);
    // Closed cleanly: the store opens and holds what was served, marked as synthetic so that
    // `gridco2 serve` and `migrate-store` never pass it off as real.
    const store = new SqliteStore(join(cwd, 'data', 'demo.db'));
    try {
      // The flow graphs' neighbours are stored beside the zones, never served.
      const served = (await store.latestPerZone()).filter(({ zone }) => isServedZone(zone));
      expect(served.length).toBe(ZONES.length);
      expect(await store.isSynthetic()).toBe(true);
    } finally {
      await store.close();
    }
  });
});
