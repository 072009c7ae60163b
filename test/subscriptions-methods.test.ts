import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startServer, type RunningServer } from '../src/server.js';
import { chromiumForTests } from './support/chromium.js';

/**
 * Browsers calling `POST /v1/subscriptions` and `DELETE /v1/subscriptions/{id}` from another
 * origin (issue 24; extensions: open CORS on every new path). A JSON POST and a DELETE with
 * Authorization are not "simple" requests: the browser first sends a preflight OPTIONS and calls
 * only if it allows the method and the headers. Checked on the wire, then in Chromium from a page
 * of another origin; the preflight of the rest of the API is unchanged (GET, HEAD, OPTIONS).
 * Other methods on these paths are 405, as on /v1, with the path's own methods in `Allow`.
 */

describe('methods and CORS of the subscription paths', () => {
  let dir: string;
  let server: RunningServer;
  let page: Server;
  let pageOrigin: string;
  let browser: Browser | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gridco2-subscriptions-cors-'));
    server = await startServer(
      loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: `sqlite:${join(dir, 'cors.db')}`,
        INGEST: 'off',
        LOG_LEVEL: 'silent',
        RATE_LIMIT_PER_MINUTE: '100000',
        WEBHOOKS: 'on',
        WEBHOOK_ALLOW: '127.0.0.1',
        METRICS: 'off',
        DASHBOARD: 'off',
      }),
      { cache: 'ready', webhooks: { turnMs: 3600_000 } },
    );
    // The page's own origin: another port, so every call to the API is cross-origin.
    page = createServer((_request, response) =>
      response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>x'),
    );
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://127.0.0.1:${(page.address() as { port: number }).port}`;
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await new Promise((resolve) => page?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const preflight = (path: string, method: string, headers?: string) =>
    fetch(`${server.url}${path}`, {
      method: 'OPTIONS',
      headers: {
        origin: pageOrigin,
        'access-control-request-method': method,
        ...(headers && { 'access-control-request-headers': headers }),
      },
    });

  it('allows POST with content-type, and GET and DELETE with authorization, in preflights', async () => {
    const create = await preflight('/v1/subscriptions', 'POST', 'content-type');
    expect(create.status).toBe(204);
    expect(create.headers.get('access-control-allow-origin')).toBe('*');
    expect(create.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    expect(create.headers.get('access-control-allow-headers')).toBe('content-type');
    const remove = await preflight('/v1/subscriptions/sub_abc', 'DELETE', 'authorization');
    expect(remove.status).toBe(204);
    expect(remove.headers.get('access-control-allow-origin')).toBe('*');
    expect(remove.headers.get('access-control-allow-methods')).toBe('GET, HEAD, DELETE, OPTIONS');
    expect(remove.headers.get('access-control-allow-headers')).toBe('authorization');
    // The rest of the API answers its preflights as before.
    const latest = await preflight('/v1/intensity/latest', 'GET');
    expect(latest.status).toBe(204);
    expect(latest.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS');
  });

  it('answers any other method 405 naming the methods of the path, as /v1 does', async () => {
    const cases = [
      ['GET', '/v1/subscriptions', 'POST, OPTIONS'],
      ['PUT', '/v1/subscriptions', 'POST, OPTIONS'],
      ['DELETE', '/v1/subscriptions', 'POST, OPTIONS'],
      ['POST', '/v1/subscriptions/sub_abc', 'GET, HEAD, DELETE, OPTIONS'],
      ['PATCH', '/v1/subscriptions/sub_abc', 'GET, HEAD, DELETE, OPTIONS'],
      ['PATCH', '/v1/intensity/latest', 'GET, HEAD, OPTIONS'],
    ] as const;
    for (const [method, path, allow] of cases) {
      const response = await fetch(`${server.url}${path}`, { method });
      expect([method, path, response.status, response.headers.get('allow')]).toEqual([
        method,
        path,
        405,
        allow,
      ]);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(await response.json()).toEqual({
        error: `method not allowed: ${method}`,
        hint: `use one of ${allow}`,
      });
    }
  });

  it('lets a page of another origin create, read and delete a subscription in Chromium', async () => {
    const chromiumUsed = await chromiumForTests();
    browser = await chromium.launch({
      executablePath: chromiumUsed.executablePath,
      env: chromiumUsed.env,
      args: [...chromiumUsed.args],
    });
    const tab = await browser.newPage();
    await tab.goto(`${pageOrigin}/`);
    const outcome = await tab.evaluate(async (api) => {
      const created = await fetch(`${api}/v1/subscriptions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          url: 'http://127.0.0.1:9/hook',
          zones: ['DE'],
          condition: { type: 'below', gco2eq_kwh: 100 },
        }),
      });
      const { id, secret } = (await created.json()) as { id: string; secret: string };
      const authorization = { authorization: `Bearer ${secret}` };
      const read = await fetch(`${api}/v1/subscriptions/${id}`, { headers: authorization });
      const readId = ((await read.json()) as { id: string }).id;
      const deleted = await fetch(`${api}/v1/subscriptions/${id}`, {
        method: 'DELETE',
        headers: authorization,
      });
      const gone = await fetch(`${api}/v1/subscriptions/${id}`, { headers: authorization });
      return {
        created: created.status,
        read: read.status,
        sameId: readId === id,
        deleted: deleted.status,
        gone: gone.status,
      };
    }, server.url);
    // A refused preflight would have thrown in the page ("Failed to fetch").
    expect(outcome).toEqual({ created: 201, read: 200, sameId: true, deleted: 204, gone: 404 });
    expect(await server.store.webhooks.subscriptions()).toEqual([]);
  });
});
