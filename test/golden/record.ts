import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { fillFixedStore, NOW } from '../support/fixed-store.js';
import { GOLDEN_REQUESTS, type GoldenRequest } from './requests.js';

/** One recorded exchange: what the release answered, headers other than Date. */
export interface GoldenResponse {
  readonly request: GoldenRequest;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The body bytes, base64, after content decoding (fetch undoes gzip and br). */
  readonly body: string;
}

const IGNORED_HEADERS = new Set(['date', 'connection', 'keep-alive']);

/**
 * Serves the fixed store with a pinned clock and answers every golden request over real HTTP:
 * a store written by this code, or the one at `databaseUrl` (holding the fixed data).
 */
export async function answerGoldenRequests(
  cache: 'off' | 'ready',
  databaseUrl?: string,
): Promise<GoldenResponse[]> {
  const dir = mkdtempSync(join(tmpdir(), 'gridco2-golden-'));
  const file = join(dir, 'fixed.db');
  if (databaseUrl === undefined) {
    const store = new SqliteStore(file);
    await fillFixedStore(store);
    await store.close();
  }
  const config = loadConfig({
    PORT: '0',
    DATABASE_URL: databaseUrl ?? `sqlite:${file}`,
    LOG_LEVEL: 'silent',
    INGEST: 'off',
    RATE_LIMIT_PER_MINUTE: '1000000',
  });
  const server = await startServer(config, { clock: () => NOW, cache });
  try {
    const answers: GoldenResponse[] = [];
    for (const request of GOLDEN_REQUESTS) {
      const response = await fetch(`${server.url}${request.path}`, {
        method: request.method ?? 'GET',
        headers: request.headers ?? {},
      });
      const body = Buffer.from(await response.arrayBuffer());
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        if (!IGNORED_HEADERS.has(name)) headers[name] = value;
      });
      answers.push({ request, status: response.status, headers, body: body.toString('base64') });
    }
    return answers;
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// `npm run golden:record`: only run on the release whose answers become the reference.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const answers = await answerGoldenRequests('off');
  const target = fileURLToPath(new URL('v1-responses.json', import.meta.url));
  writeFileSync(target, JSON.stringify(answers, null, 1) + '\n');
  process.stdout.write(`recorded ${answers.length} responses into ${target}\n`);
}
