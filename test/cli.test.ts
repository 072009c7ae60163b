import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/** The compiled CLI, run as a user runs it (`npm test` builds it first). */
const BIN = fileURLToPath(new URL('../bin/gridco2.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'gridco2-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });

describe('gridco2 CLI', () => {
  it('prints its commands with --help', () => {
    const result = run(['--help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/Usage: gridco2/);
    expect(result.stdout).toMatch(/serve/);
  });

  it.each([
    ['PORT', 'http'],
    ['DATABASE_URL', 'mysql://x'],
    ['TRUST_PROXY', 'everyone'],
  ])('refuses to serve with %s=%s, naming the variable, without a stack', (name, value) => {
    const result = run(['serve'], { [name]: value });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`^gridco2: configuration error: ${name} `));
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('serves an empty store, then shuts down cleanly on SIGTERM', async () => {
    const database = join(dir, 'nested', 'serve.db');
    const child = spawn(process.execPath, [BIN, 'serve'], {
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
      const timer = setTimeout(() => reject(new Error(`no start: ${output}`)), 15_000);
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
});
