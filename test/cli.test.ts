import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { StoredReading } from '../src/core/reading.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { CLI } from './support/built-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'gridco2-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Metrics on the service's port: a listener of their own at the default 127.0.0.1:9464 would warn
 * on stdout whenever another process of the machine (a parallel suite) holds that port.
 */
const QUIET_ENV = { LOG_LEVEL: 'silent', METRICS_ADDR: 'public' };

/**
 * Runs the CLI to its end. Never blocking the test runner: the suite's tests run side by side
 * (each with files of its own), as they spend most of their time waiting for a process.
 */
const run = (args: string[], env: Record<string, string> = {}, cwd?: string) =>
  new Promise<{
    status: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...QUIET_ENV, ...env },
      // The suite's tests run side by side: as wide a net as its waits for a server's start.
      timeout: 120_000,
      ...(cwd !== undefined && { cwd }),
    });
    let stdout = '';
    let stderr = '';
    // Decoded as a stream: a character cut between two chunks stays whole.
    child.stdout.setEncoding('utf8').on('data', (data: string) => (stdout += data));
    child.stderr.setEncoding('utf8').on('data', (data: string) => (stderr += data));
    child.on('error', reject);
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });

const reading: StoredReading = {
  zone: 'DE',
  ts: Date.UTC(2026, 0, 1) / 1000,
  value: 300,
  method: 'computed:v1',
  complete: true,
  mix: { gas: 1 },
  lifecycle: null,
  direct: null,
};

/** A SQLite store holding one reading, marked synthetic as the demo marks its own, or not. */
async function storeWithData(path: string, synthetic: boolean): Promise<string> {
  mkdirSync(dirname(path), { recursive: true });
  const store = new SqliteStore(path);
  if (synthetic) await store.markSynthetic();
  await store.upsertReadings([reading]);
  await store.close();
  return path;
}

async function inspect(path: string): Promise<{ synthetic: boolean; reports: number }> {
  const store = new SqliteStore(path);
  try {
    const reports = Object.keys(await store.latestIngestReports()).length;
    return { synthetic: await store.isSynthetic(), reports };
  } finally {
    await store.close();
  }
}

describe.concurrent('gridco2 CLI', () => {
  it('prints its commands with --help', async () => {
    const result = await run(['--help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/Usage: gridco2/);
    expect(result.stdout).toMatch(/serve/);
  });

  it.each([
    ['PORT', 'http'],
    ['DATABASE_URL', 'mysql://x'],
    ['TRUST_PROXY', 'everyone'],
  ])('refuses to serve with %s=%s, naming the variable, without a stack', async (name, value) => {
    const result = await run(['serve'], { [name]: value });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`^gridco2: configuration error: ${name} `));
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('serves an empty store, then shuts down cleanly on SIGTERM', async () => {
    const database = join(dir, 'nested', 'serve.db');
    const child = spawn(process.execPath, [CLI, 'serve'], {
      env: {
        ...process.env,
        PORT: '0',
        LOG_LEVEL: 'info',
        INGEST: 'off',
        DATABASE_URL: `sqlite:${database}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      // A net for a server that never starts, not a measure: it waits for the line.
      const timer = setTimeout(() => reject(new Error(`no start: ${output}`)), 120_000);
      child.stdout.on('data', () => {
        const match = /"url":"(http:[^"]+)"/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
    });
    expect(existsSync(database)).toBe(true);
    expect((await fetch(`${url}/v1/health`)).status).toBe(200);
    expect((await fetch(`${url}/v1/intensity/latest?zone=DE`)).status).toBe(404);
    expect((await fetch(`${url}/v1/status`)).status).toBe(503);
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toMatch(/shutting down/);
    // Only the server's own lines at info level: no per-request log lines.
    expect(output).not.toMatch(/incoming request|request completed/);
  });

  it('fits MAX_CONNECTIONS to ulimit -n 1024 and says so; a new client is served past 1,500 idle ones', async () => {
    // The shell lowers the limit for itself and the server it becomes.
    const child = spawn(
      'sh',
      ['-c', 'ulimit -n 1024 && exec "$0" "$@"', process.execPath, CLI, 'serve'],
      {
        env: {
          ...process.env,
          PORT: '0',
          LOG_LEVEL: 'info',
          INGEST: 'off',
          DATABASE_URL: `sqlite:${join(dir, 'ulimit.db')}`,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      // A net for a server that never starts, not a measure: it waits for the line.
      const timer = setTimeout(() => reject(new Error(`no start: ${output}`)), 120_000);
      child.stdout.on('data', () => {
        const match = /"url":"(http:[^"]+)"/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
    });
    const idle: Socket[] = [];
    try {
      expect(output).toContain(
        'this process may open 1024 files (ulimit -n): MAX_CONNECTIONS is 960 instead of 10000',
      );
      const { port } = new URL(url);
      for (let i = 0; i < 1500; i += 1) {
        const socket = connect(Number(port), '127.0.0.1');
        socket.on('error', () => undefined);
        idle.push(socket);
        await new Promise((resolve) => socket.once('connect', resolve).once('close', resolve));
      }
      expect((await fetch(`${url}/v1/health`)).status).toBe(200);
    } finally {
      for (const socket of idle) socket.destroy();
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });

  it.each(['--version', '-V'])('prints the version of package.json with %s', async (flag) => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    const result = await run([flag]);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(`${pkg.version}\n`);
  });
});

// Each failure to start is one line on stderr saying which setting to change, and nothing else:
// no stack, no log line on stdout.
describe.concurrent('gridco2 CLI start-up errors', () => {
  it('names PORT and HOST when the port is taken', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const result = await run(['serve'], {
        PORT: String(port),
        HOST: '127.0.0.1',
        INGEST: 'off',
        LOG_LEVEL: 'info',
        DATABASE_URL: `sqlite:${join(dir, 'taken.db')}`,
      });
      expect(result.status).toBe(1);
      expect(result.stderr).toBe(
        `gridco2: error: port ${port} on 127.0.0.1 is already in use: ` +
          'set PORT (or HOST) to a free one\n',
      );
      expect(result.stdout).toBe('');
    } finally {
      taken.close();
    }
  });

  it.each([
    [['serve']],
    [['ingest']],
    [['backfill', '--source', 'uk-operator', '--from', '2025-01-01']],
    [['recompute']],
  ])('names DATABASE_URL, never its password, when PostgreSQL is unreachable: %j', async (args) => {
    const result = await run(args, {
      DATABASE_URL: 'postgres://someone:secret@127.0.0.1:1/x',
      INGEST: 'off',
      LOG_LEVEL: 'info',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(
        '^gridco2: error: cannot reach the database at ' +
          'DATABASE_URL=postgres://someone:\\*\\*\\*@127\\.0\\.0\\.1:1/x ' +
          '\\(connect ECONNREFUSED [^)\\n]+\\): check that PostgreSQL runs there\\n$',
      ),
    );
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toContain('secret');
  });
});

// Issue 23: every configuration error names the setting and what it accepts, and nothing spins.
describe.concurrent('gridco2 CLI configuration errors', () => {
  const accepted =
    'an IP address of this machine \\(127\\.0\\.0\\.1, 0\\.0\\.0\\.0 for all IPv4 addresses, :: for all\\) ' +
    'or a host name that resolves to one';
  it.each<{ env: Record<string, string>; stderr: string }>([
    {
      env: { HOST: '999.1.1.1' },
      stderr: `^gridco2: configuration error: HOST must be ${accepted}, got "999\\.1\\.1\\.1"\\n$`,
    },
    {
      // A name no resolver knows (RFC 2606 reserves .invalid).
      env: { HOST: 'gridco2-test.invalid' },
      stderr: `^gridco2: configuration error: HOST=gridco2-test\\.invalid does not resolve: HOST must be ${accepted}\\n$`,
    },
    {
      env: { DATABASE_URL: 'sqlite:' },
      stderr:
        '^gridco2: configuration error: DATABASE_URL=sqlite: names no file: give its path, as in sqlite:<path>',
    },
    {
      // Under /proc no folder can be made: said at once, not retried forever.
      env: { DATABASE_URL: 'sqlite:/proc/gridco2-test/x.db' },
      stderr:
        '^gridco2: error: cannot open the SQLite file /proc/gridco2-test/x\\.db ' +
        '\\(DATABASE_URL=sqlite:/proc/gridco2-test/x\\.db\\): its folder /proc/gridco2-test does not ' +
        'exist and cannot be created \\(ENOENT\\); create it, writable by this user, or point ' +
        'DATABASE_URL elsewhere\\n$',
    },
    {
      env: { DATABASE_URL: 'sqlite:/proc/x' },
      stderr:
        '^gridco2: error: cannot open the SQLite file /proc/x \\(DATABASE_URL=sqlite:/proc/x\\): [^\\n]+\\n$',
    },
    {
      env: { REDIS_URL: 'redis//:secret@cache:6379' },
      stderr:
        '^gridco2: configuration error: REDIS_URL must be a URL starting with redis:// or ' +
        'rediss://, got "redis//:\\*\\*\\*@cache:6379"\\n$',
    },
  ])('serve with $env', async ({ env, stderr }) => {
    const result = await run(['serve'], {
      PORT: '0',
      INGEST: 'off',
      LOG_LEVEL: 'info',
      ...env,
    });
    expect(result.signal).toBeNull(); // not killed by the timeout: no spinning
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(new RegExp(stderr));
    expect(result.stdout).toBe('');
  });

  it('tells the demo to start elsewhere, not to change the DATABASE_URL it ignores', async () => {
    const cwd = mkdtempSync(join(dir, 'demo-file-'));
    writeFileSync(join(cwd, 'data'), 'not a folder');
    const result = await run(
      ['demo', '--days', '1'],
      { PORT: '0', LOG_LEVEL: 'info', DATABASE_URL: `sqlite:${join(dir, 'real.db')}` },
      cwd,
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `gridco2: error: cannot open the SQLite file ${join(cwd, 'data', 'demo.db')} ` +
        `(sqlite:data/demo.db): ${join(cwd, 'data')} is a file, not a folder; move that file ` +
        'away, or start the demo in another folder (it keeps sqlite:data/demo.db there)\n',
    );
  });
});

// docs/api.md, "Data rules": what the demo wrote is never served or mixed as real data.
describe.concurrent('gridco2 CLI with synthetic data', () => {
  it('refuses to serve a store the demo wrote', async () => {
    const path = await storeWithData(join(dir, 'synthetic', 'serve.db'), true);
    const result = await run(['serve'], {
      DATABASE_URL: `sqlite:${path}`,
      PORT: '0',
      INGEST: 'off',
      LOG_LEVEL: 'info',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `gridco2: error: ${path} holds synthetic demo data; serve it with 'gridco2 demo', ` +
        'or point DATABASE_URL at a real store\n',
    );
    expect(result.stdout).toBe('');
  });

  it.each([[['ingest']], [['backfill', '--source', 'uk-operator', '--from', '2025-01-01']]])(
    'refuses to write real data into a store the demo wrote: %j',
    async (args) => {
      const path = await storeWithData(join(dir, 'synthetic', `${args[0]}.db`), true);
      const result = await run(args, { DATABASE_URL: `sqlite:${path}` });
      expect(result.status).toBe(1);
      expect(result.stderr).toBe(
        `gridco2: error: ${path} holds synthetic demo data, and real data is never written ` +
          'into it; point DATABASE_URL at a real store\n',
      );
      expect(await inspect(path)).toEqual({ synthetic: true, reports: 0 });
    },
  );

  it('runs no demo on a data/demo.db that holds data not marked synthetic', async () => {
    const cwd = mkdtempSync(join(dir, 'demo-'));
    const path = await storeWithData(join(cwd, 'data', 'demo.db'), false);
    const result = await run(['demo', '--days', '1'], { PORT: '0', LOG_LEVEL: 'info' }, cwd);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /^gridco2: error: data\/demo\.db holds data not marked as synthetic \([^\n]+\); the demo never writes into it: move it away and start again\n$/,
    );
    expect(result.stdout).toBe('');
    expect(await inspect(path)).toEqual({ synthetic: false, reports: 0 });
  });
});

describe.concurrent('gridco2 backtest', () => {
  const H = 3600;
  // 30 days of DE up to 4 days ago: issue times from day 14 to 72 hours ago.
  const newest = Math.floor(Date.now() / 1000 / H) * H - 4 * 24 * H;
  const history = Array.from({ length: 30 * 24 }, (_, k): StoredReading => {
    const ts = newest - k * H;
    const value = 300 + 80 * Math.sin((2 * Math.PI * ts) / (24 * H)) + 20 * Math.sin(ts / 90_000);
    return { ...reading, ts, value, lifecycle: value, direct: value / 2 };
  });

  it('stores the walk-forward skill table and prints its summary', async () => {
    const path = join(dir, 'backtest.db');
    const store = new SqliteStore(path);
    await store.upsertReadings(history);
    await store.close();
    const result = await run(['backtest', '--zone', 'de'], { DATABASE_URL: `sqlite:${path}` });
    expect(result.stderr).toMatch(/backtest 1\/1 DE/);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/zones evaluated: 1\n/);
    expect(result.stdout).toMatch(/zones beating persistence in every bucket: 1 of 1/);
    // The forecast as served, whose band the walk-forward measured: a coverage, not n/a.
    expect(result.stdout).toMatch(/P10-P90 coverage per zone: min \d+\.\d %/);
    const stored = new SqliteStore(path);
    try {
      const run = await stored.newestBacktest();
      const de = run?.zones.find(({ zone, basis }) => zone === 'DE' && basis === 'lifecycle');
      // Issue times from 14 days after the first value to 72 hours before now, every 6 hours.
      expect(de?.issues).toBeGreaterThanOrEqual(12 * 4);
      expect(de?.rows.filter(({ served }) => served).map(({ bucket }) => bucket)).toEqual([
        '1-6',
        '7-24',
        '25-48',
        '49-72',
      ]);
    } finally {
      await stored.close();
    }
  });

  it('stores the same run with its zone-bases in two processes as in one', async () => {
    const fr = history.map((row): StoredReading => {
      const value = (row.value ?? 0) * 0.2 + 15;
      return { ...row, zone: 'FR', value, lifecycle: value, direct: value / 2 };
    });
    const zonesOf = async (workers: number) => {
      const path = join(dir, `backtest-workers-${workers}.db`);
      const store = new SqliteStore(path);
      await store.upsertReadings([...history, ...fr]);
      await store.close();
      const args = ['backtest', '--zone', 'de', '--zone', 'fr', '--workers', String(workers)];
      const result = await run(args, { DATABASE_URL: `sqlite:${path}` });
      expect(result.status).toBe(0);
      expect(result.stderr).toMatch(/backtest 2\/2 (DE|FR)/);
      const stored = new SqliteStore(path);
      try {
        return (await stored.newestBacktest())?.zones;
      } finally {
        await stored.close();
      }
    };
    const [inOne, inTwo] = await Promise.all([zonesOf(1), zonesOf(2)]);
    expect(inOne?.map(({ zone, basis }) => `${zone} ${basis}`)).toEqual([
      'DE lifecycle',
      'DE direct',
      'FR lifecycle',
      'FR direct',
    ]);
    expect(inTwo).toEqual(inOne);
  });

  it('stores nothing, and says why, when no zone has enough history', async () => {
    const path = join(dir, 'backtest-empty.db');
    await storeWithData(path, false);
    const result = await run(['backtest'], { DATABASE_URL: `sqlite:${path}` });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/nothing to evaluate: no zone has 14 days of history/);
    const stored = new SqliteStore(path);
    expect(await stored.newestBacktest()).toBeNull();
    await stored.close();
  });

  it.each([
    [['--zone', 'XX'], /unknown zone "XX"/],
    [['--from', 'yesterday'], /expected ISO 8601/],
    [['--from', '2026-02-01', '--to', '2026-01-01'], /--from must not be after --to/],
    [['--basis', 'market'], /expected lifecycle, direct or operator/],
    [['--workers', '0'], /expected a whole number from 1 to 64/],
  ])('refuses %j', async (args, message) => {
    // A file of its own: the cases run side by side.
    const path = join(mkdtempSync(join(dir, 'refused-')), 'x.db');
    const result = await run(['backtest', ...args], { DATABASE_URL: `sqlite:${path}` });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(message);
  });
});
