import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/http/app.js';
import { createStore } from '../src/storage/create-store.js';

/**
 * The served OpenAPI document passes Redocly's recommended rules with no error and no warning:
 * what client generators and API catalogues expect of it (operation ids, 4xx responses, the
 * security statement, a description on every response).
 */

const REDOCLY = fileURLToPath(new URL('../node_modules/.bin/redocly', import.meta.url));

describe('the OpenAPI document', () => {
  it('lints clean with @redocly/cli', async () => {
    const store = await createStore('sqlite::memory:');
    const app = await buildApp({ config: loadConfig({}), store });
    const dir = mkdtempSync(join(tmpdir(), 'gridco2-openapi-'));
    try {
      const response = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
      const file = join(dir, 'openapi.json');
      writeFileSync(file, response.body);
      const lint = spawnSync(REDOCLY, ['lint', file, '--format=stylish'], {
        encoding: 'utf8',
        timeout: 120_000,
      });
      const output = `${lint.stdout}\n${lint.stderr}`;
      expect(lint.status, output).toBe(0);
      expect(output).toMatch(/Your API description is valid/);
      // Stylish lines read `1:5461  warning  rule-name  message`.
      expect(output).not.toMatch(/^\s*\d+:\d+\s+(error|warning)\s/m);

      const document = response.json<{
        paths: Record<
          string,
          { get: { responses: Record<string, { description?: string; headers?: object }> } }
        >;
      }>();
      for (const [path, { get }] of Object.entries(document.paths)) {
        for (const [status, described] of Object.entries(get.responses)) {
          expect(described.description, `${path} ${status}`).toBeTruthy();
          expect(described.description, `${path} ${status}`).not.toBe('Default Response');
          expect(described.headers, `${path} ${status} headers`).toHaveProperty('Cache-Control');
        }
      }
      const history = document.paths['/v1/intensity']!.get.responses;
      expect(Object.keys(history['200']!.headers!)).toEqual(
        expect.arrayContaining(['ETag', 'Cache-Control', 'RateLimit-Limit', 'Link']),
      );
      expect(history['200']!.description).toMatch(/count: 0/);
      expect(Object.keys(history['429']!.headers!)).toContain('Retry-After');
      expect(Object.keys(history['503']!.headers!)).toContain('Retry-After');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await app.close();
      await store.close();
    }
  });
});
