import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/http/app.js';
import { DEFAULT_WEB_ROOT } from '../src/http/routes/dashboard.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';

/**
 * How the server hands out the dashboard's files (src/http/routes/dashboard.ts), on a small built site
 * made here: the encodings built beside each file, caching, ETags, the JSON 404 for anything
 * else, and DASHBOARD=off. The page itself is tested in a browser in dashboard.browser.test.ts.
 */

const dir = mkdtempSync(join(tmpdir(), 'gridco2-dashboard-'));
const site = join(dir, 'web');
const PAGE = '<!doctype html><title>gridco2</title><script src="/assets/app-AbC_12-x.js"></script>';
const SCRIPT = 'console.log("gridco2 dashboard");'.repeat(20);
const STYLE = 'body{margin:0}';

function writeSite(): void {
  mkdirSync(join(site, 'assets'), { recursive: true });
  const write = (path: string, body: string, compressed: boolean) => {
    writeFileSync(join(site, path), body);
    if (!compressed) return;
    writeFileSync(join(site, `${path}.br`), brotliCompressSync(body));
    writeFileSync(join(site, `${path}.gz`), gzipSync(body));
  };
  write('index.html', PAGE, true);
  write('assets/app-AbC_12-x.js', SCRIPT, true);
  // Built without compressed variants: served as it is.
  write('assets/style-Zz9.css', STYLE, false);
}

interface Raw {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** Over a real socket, without any decoding: the bytes the server sent. */
function get(
  base: string,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    const req = httpRequest(
      { host: url.hostname, port: url.port, path, method, headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const logs: { msg: string }[] = [];
const stores: SqliteStore[] = [];
async function start(env: Record<string, string>, webRoot: string): Promise<FastifyInstance> {
  const store = new SqliteStore(join(dir, `s-${Math.random().toString(36).slice(2)}.db`));
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const app = await buildApp({
    config: loadConfig({ LOG_LEVEL: 'warn', INGEST: 'off', ...env }),
    store,
    webRoot,
    logger: pino({ level: 'warn' }, sink),
  });
  stores.push(store);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app;
}
const urlOf = (app: FastifyInstance) => {
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening');
  return `http://127.0.0.1:${address.port}`;
};

let on: FastifyInstance;
let off: FastifyInstance;
let unbuilt: FastifyInstance;

beforeAll(async () => {
  writeSite();
  on = await start({}, site);
  off = await start({ DASHBOARD: 'off' }, site);
  unbuilt = await start({}, join(dir, 'never-built'));
});
afterAll(async () => {
  await Promise.all([on?.close(), off?.close(), unbuilt?.close()]);
  await Promise.all(stores.map((store) => store.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('GET / and /assets/ with DASHBOARD=on', () => {
  it.each([
    ['br, gzip, deflate', 'br'],
    ['gzip', 'gzip'],
    ['br;q=0, gzip;q=0.5', 'gzip'],
    ['*', 'br'],
    ['identity', undefined],
    ['', undefined],
  ])('serves the page built for Accept-Encoding "%s" (%s)', async (accept, encoding) => {
    const response = await get(urlOf(on), '/', accept ? { 'accept-encoding': accept } : {});
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['content-encoding']).toBe(encoding);
    expect(response.headers['vary']).toMatch(/accept-encoding/i);
    expect(response.headers['cache-control']).toBe('no-cache');
    expect(response.headers['content-security-policy']).toContain("script-src 'self'");
    const decoded =
      encoding === 'br'
        ? brotliDecompressSync(response.body)
        : encoding === 'gzip'
          ? gunzipSync(response.body)
          : response.body;
    expect(decoded.toString()).toBe(PAGE);
    // The bytes built beside the page, not compressed again per request.
    expect(response.headers['content-length']).toBe(String(response.body.length));
  });

  it('gives every encoding its own ETag and answers a matching If-None-Match with 304', async () => {
    const br = await get(urlOf(on), '/', { 'accept-encoding': 'br' });
    const plain = await get(urlOf(on), '/');
    expect(br.headers['etag']).toMatch(/^".+-br"$/);
    expect(plain.headers['etag']).not.toBe(br.headers['etag']);
    const again = await get(urlOf(on), '/', {
      'accept-encoding': 'br',
      'if-none-match': String(br.headers['etag']),
    });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    // The identity tag does not match the brotli body.
    const other = await get(urlOf(on), '/', {
      'accept-encoding': 'br',
      'if-none-match': String(plain.headers['etag']),
    });
    expect(other.status).toBe(200);
  });

  it('serves hashed assets with immutable caching, compressed when built so', async () => {
    const script = await get(urlOf(on), '/assets/app-AbC_12-x.js', { 'accept-encoding': 'gzip' });
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(script.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(script.body).toString()).toBe(SCRIPT);
    const style = await get(urlOf(on), '/assets/style-Zz9.css', { 'accept-encoding': 'br, gzip' });
    expect(style.status).toBe(200);
    expect(style.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(style.headers['content-encoding']).toBeUndefined();
    expect(style.body.toString()).toBe(STYLE);
  });

  it('answers HEAD without a body', async () => {
    const head = await get(urlOf(on), '/', {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(head.body.length).toBe(0);
  });

  it.each([
    '/assets/nope.js',
    '/assets/app-AbC_12-x.js.br',
    '/assets/',
    '/assets/../package.json',
    '/assets/%2e%2e/%2e%2e/package.json',
    '/assets/..%2F..%2Fpackage.json',
    '/index.html',
    '/web/index.html',
  ])('answers %s with the JSON 404 and no file', async (path) => {
    const response = await get(urlOf(on), path);
    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-store');
    const body = JSON.parse(response.body.toString()) as { error: string; hint: string };
    expect(body.error).toMatch(/^not found: /);
    expect(body.hint).toBe('see /v1 for the endpoints');
  });

  it('answers another method on / with the JSON 405', async () => {
    const response = await get(urlOf(on), '/', {}, 'POST');
    expect(response.status).toBe(405);
    expect(response.headers['allow']).toBe('GET, HEAD, OPTIONS');
    expect(JSON.parse(response.body.toString())).toEqual({
      error: 'method not allowed: POST',
      hint: 'use one of GET, HEAD, OPTIONS',
    });
  });

  it('keeps the page out of the OpenAPI document', async () => {
    const response = await get(urlOf(on), '/v1/openapi.json');
    const document = JSON.parse(response.body.toString()) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths).filter((path) => !path.startsWith('/v1'))).toEqual([]);
  });
});

describe('where the page is looked for', () => {
  it('is dist/web of the repository, wherever the route module sits', () => {
    const repository = resolve(dirname(fileURLToPath(import.meta.url)), '..');
    expect(DEFAULT_WEB_ROOT).toBe(join(repository, 'dist', 'web'));
  });
});

describe('DASHBOARD=off, and a page never built', () => {
  it.each(['/', '/assets/app-AbC_12-x.js'])('DASHBOARD=off: %s is the JSON 404', async (path) => {
    const response = await get(urlOf(off), path);
    expect(response.status).toBe(404);
    expect(JSON.parse(response.body.toString())).toEqual({
      error: `not found: ${path}`,
      hint: 'see /v1 for the endpoints',
    });
  });

  it('not built: / says so in a JSON 404, and the log says how to build it', async () => {
    const response = await get(urlOf(unbuilt), '/');
    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(response.body.toString())).toEqual({
      error: 'not found: /',
      hint: 'the dashboard is not built on this server (run npm run build); the API is at /v1',
    });
    expect(logs.map((line) => line.msg)).toContain(
      'dashboard not built: GET / answers 404; run `npm run build` (or set DASHBOARD=off)',
    );
  });
});
