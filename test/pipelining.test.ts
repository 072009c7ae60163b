import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { fillFixedStore, FR_FIRST, HOUR_NOW, iso } from './support/fixed-store.js';
import { type ServeProcess, ServeProcesses } from './support/processes.js';

/**
 * Clients that pipeline many requests for large, distinct windows and never read the answers
 * (issue 10): the server's memory must stay bounded and /v1/health must keep answering. The
 * server is its own process, so its RSS is its own.
 */

const CONNECTIONS = 200;
const PIPELINED = 50;
const ATTACK_MS = 15_000;
const MIB = 1024 * 1024;

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('pipelined clients that never read', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gridco2-pipelining-'));
  const processes = new ServeProcesses();
  let server: ServeProcess;

  beforeAll(async () => {
    const file = join(dir, 'fixed.db');
    const store = new SqliteStore(file);
    await fillFixedStore(store);
    await store.close();
    server = await processes.start('pipelining', {
      PORT: '0',
      DATABASE_URL: `sqlite:${file}`,
      INGEST: 'off',
      // Every request is served, none refused by the limit: the worst case for memory.
      RATE_LIMIT_PER_MINUTE: '1000000000',
      LOG_LEVEL: 'info',
    });
    // Served from memory once the reading cache is loaded: the fast path, as in production.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const response = await fetch(`${server.url}/v1/intensity/latest?zone=FR`);
      if (response.status === 200) break;
      await sleep(200);
    }
  });
  afterAll(async () => {
    await processes.killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    `holds RSS within 300 MiB of its start under ${CONNECTIONS} x ${PIPELINED} pipelined non-readers`,
    { timeout: 180_000 },
    async () => {
      const { hostname, port } = new URL(server.url);
      const before = rssBytes(server.pid);
      const sockets: Socket[] = [];
      for (let c = 0; c < CONNECTIONS; c++) {
        const socket = connect({ host: hostname, port: Number(port) });
        socket.on('error', () => undefined);
        socket.pause(); // never reads: answers pile up in the kernel, then in the server
        const requests = Array.from({ length: PIPELINED }, (_, i) => {
          const from = iso(FR_FIRST + c * PIPELINED + i); // a distinct 5000-point window each
          return `GET /v1/intensity?zone=FR&from=${from}&to=${iso(HOUR_NOW)} HTTP/1.1\r\nHost: a\r\n\r\n`;
        });
        socket.write(requests.join(''));
        sockets.push(socket);
      }

      let peak = before;
      const probes: number[] = [];
      const end = Date.now() + ATTACK_MS;
      while (Date.now() < end) {
        peak = Math.max(peak, rssBytes(server.pid));
        const health = await fetch(`${server.url}/v1/health`, {
          signal: AbortSignal.timeout(60_000),
        });
        probes.push(health.status);
        await sleep(250);
      }
      for (const socket of sockets) socket.destroy();
      peak = Math.max(peak, rssBytes(server.pid));

      expect(probes.length).toBeGreaterThan(0);
      expect(probes.every((status) => status === 200)).toBe(true);
      expect((peak - before) / MIB).toBeLessThan(300);
      // Still alive, and answering data correctly, once the clients are gone.
      const after = await fetch(`${server.url}/v1/intensity?zone=FR&from=${iso(FR_FIRST)}`);
      expect(after.status).toBe(200);
      expect(((await after.json()) as { count: number }).count).toBe(5000);
      expect(server.alive()).toBe(true);
    },
  );
});
