import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PostgresStore } from '../src/storage/postgres/postgres-store.js';
import type { ThrowawayDatabase } from './support/postgres.js';
import { createThrowawayDatabase, isPostgresAvailable } from './support/postgres.js';

// Issue 10, finding 11: a plain-text `postgres: idle connection lost` line among the JSON ones.
describe.skipIf(!(await isPostgresAvailable('postgres logging suite')))(
  'postgres store logging',
  () => {
    let database: ThrowawayDatabase;
    beforeAll(async () => {
      database = await createThrowawayDatabase();
    });
    afterAll(() => database.drop());

    it('logs a lost idle connection as one JSON line through the given logger', async () => {
      const lines: string[] = [];
      const logger = pino(
        { base: { service: 'gridco2' } },
        new Writable({
          write(chunk: Buffer, _encoding, done) {
            lines.push(...chunk.toString().split('\n').filter(Boolean));
            done();
          },
        }),
      );
      const printed = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
      const store = await PostgresStore.open(database.url, { logger });
      try {
        await store.ping(); // one idle connection in the pool, which the server then ends
        expect(await database.terminateConnections()).toBeGreaterThan(0);
        await vi.waitFor(() => expect(lines.length).toBeGreaterThan(0), { timeout: 20_000 });
        const entry = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
        expect(entry).toMatchObject({
          level: 40,
          service: 'gridco2',
          msg: 'postgres: idle connection lost',
          err: { message: expect.stringMatching(/terminat/) as unknown },
        });
        expect(printed).not.toHaveBeenCalled();
        // The pool opens a new connection on demand.
        await store.ping();
      } finally {
        printed.mockRestore();
        await store.close();
      }
    });
  },
);
