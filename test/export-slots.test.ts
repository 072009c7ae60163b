import { mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { StoredReading } from '../src/core/reading.js';
import { ZONES } from '../src/core/zones.js';
import { startServer, type RunningServer } from '../src/server.js';
import { createStore } from '../src/storage/create-store.js';
import { downloadExport, neverRead, openExport, readSlowly } from './support/export-clients.js';
import { H, HOUR_NOW, iso, NOW } from './support/fixed-store.js';

/**
 * Export slots against clients that never read or read slowly (issue 22), and an export whose
 * client takes every chunk at once yielding to the event loop between chunks (issue 21). Real
 * sockets from distinct loopback source addresses (Linux routes all of 127/8 to lo), so every
 * client is its own address without a trusted proxy.
 */

const HOURS = 2000;
const FIRST = HOUR_NOW - HOURS * H;
// Every zone, 2000 hours with a mix: an NDJSON export with its mix (~25 MB) far outlasts what the
// kernel buffers for a client that does not read.
const ROWS: StoredReading[] = ZONES.flatMap((zone, index) =>
  Array.from({ length: HOURS }, (_, hour): StoredReading => {
    const value = 100 + ((index * 31 + hour * 7) % 500) / 10;
    return {
      zone: zone.code,
      ts: FIRST + hour * H,
      value,
      method: 'computed:v1',
      complete: true,
      mix: { coal: hour % 97, gas: 10.5, hydro: 3.25, nuclear: 40, solar: hour % 13, biomass: 1 },
      lifecycle: value,
      direct: value / 2,
    };
  }),
);
const PATH = `/v1/export?zones=all&format=ndjson&include=mix&from=${iso(FIRST)}`;
/** How long a wait for a freed slot may last: a net for a slot that never comes back. */
const SLOT_PATIENCE_MS = 180_000;

describe('export slots against clients that do not read', () => {
  let dir: string;
  let server: RunningServer;
  let port: number;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gridco2-export-slots-'));
    const url = `sqlite:${join(dir, 'slots.db')}`;
    const store = await createStore(url);
    for (let start = 0; start < ROWS.length; start += 10_000) {
      await store.upsertReadings(ROWS.slice(start, start + 10_000));
    }
    await store.close();
    server = await startServer(
      loadConfig({
        PORT: '0',
        DATABASE_URL: url,
        INGEST: 'off',
        LOG_LEVEL: 'silent',
        RATE_LIMIT_PER_MINUTE: '1000000',
      }),
      // The production read-rate limits (10 s windows, 16 KiB/s).
      { clock: () => NOW },
    );
    port = Number(new URL(server.url).port);
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = (address: string) => openExport(port, address, PATH, sockets);
  const download = (address: string, path = PATH) => downloadExport(port, address, path);

  it(
    '20 never-reading and 20 slow-reading exports from 8 addresses: a ninth address gets its export once a slot is freed',
    async () => {
      // From the first attacker's request: REPORT_FIGURES prints how long the ninth waited, and
      // `npm run bench` reports it against issue 22's 30 s (bench/export-slots.ts).
      const started = Date.now();
      const attackers = Array.from({ length: 8 }, (_, i) => `127.0.0.${11 + i}`);
      // Five exports per address at once, alternately of each kind: 20 and 20.
      const opened = await Promise.all(
        attackers.flatMap((address, i) =>
          Array.from({ length: 5 }, async (_, j) => {
            const { socket, status } = await open(address);
            if ((i + j) % 2 === 0) neverRead(socket);
            else readSlowly(socket);
            return status;
          }),
        ),
      );
      const statuses = opened;
      // Every slot is held (2 per address, 16 in all); the rest were refused.
      expect(statuses.filter((status) => status === 200)).toHaveLength(16);
      expect(statuses.filter((status) => status === 429)).toHaveLength(24);

      const ninth = '127.0.0.19';
      // Every zone as CSV over 30 days, without the mix: the wait for a slot is what is timed.
      const csv = `/v1/export?zones=all&from=${iso(HOUR_NOW - 30 * 24 * H)}`;
      const first = await download(ninth, csv);
      // Refused while the slots are held (a slow machine may have freed one already), with one
      // read-rate window as Retry-After: a slot held by a client that stopped reading is free by
      // then. Asked more often here, to time when the first slot came back.
      expect([first.status, first.retryAfter]).toEqual(
        first.status === 503 ? [503, '10'] : [200, undefined],
      );
      // Without the read-rate cut-off a slot held by a client that stopped reading never comes
      // back, and this wait runs out; how soon it comes back is a figure (REPORT_FIGURES), not
      // asserted: a busy machine serves the attackers' bytes later.
      let result = first;
      while (result.status !== 200 && Date.now() - started < SLOT_PATIENCE_MS) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        result = await download(ninth, csv);
      }
      expect(result.status).toBe(200);
      expect(result.ended).toBe(true);
      expect(result.bytes).toBeGreaterThan(1_000_000);
      if (process.env.REPORT_FIGURES)
        console.log(`ninth address served after ${Date.now() - started} ms`);

      // Every slot came back, the slow readers' too: 16 new exports from 8 fresh addresses, opened
      // at once, all get one.
      const fresh = Array.from({ length: 8 }, (_, i) => `127.0.0.${31 + i}`);
      const deadline = Date.now() + SLOT_PATIENCE_MS;
      let held = 0;
      while (held < 16 && Date.now() < deadline) {
        const batch = await Promise.all(fresh.flatMap((address) => [open(address), open(address)]));
        held = batch.filter(({ status }) => status === 200).length;
        for (const { socket } of batch) socket.destroy();
        if (held < 16) await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(held).toBe(16);
    },
    3 * SLOT_PATIENCE_MS,
  );

  it('yields to the event loop while it writes an all-zone NDJSON export with its mix (issue 21)', async () => {
    // Loop turns while a client in this process reads the export as fast as it comes; each turn
    // counts once, however many callbacks it runs.
    let turns = 0;
    let counting = true;
    const count = () => {
      turns++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const cpuBefore = process.cpuUsage();
    const started = Date.now();
    const result = await download('127.0.0.51');
    counting = false;
    if (process.env.REPORT_FIGURES) {
      const cpu = process.cpuUsage(cpuBefore);
      console.log(
        `export: ${result.bytes} bytes, ${turns} turns, ${Date.now() - started} ms, cpu ${(cpu.user + cpu.system) / 1000} ms`,
      );
    }
    expect(result.status).toBe(200);
    const cpu = process.cpuUsage(cpuBefore);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    expect(result.bytes).toBeGreaterThan(10_000_000);
    // The process's CPU time per loop turn (this client's reading included), on average: work,
    // not wall time. Holding the loop for the whole export gave 11 turns for seconds of CPU.
    expect(turns).toBeGreaterThan(cpuMs / 50);
  });
});
