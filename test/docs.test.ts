import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { LEVEL_THRESHOLDS, LEVELS } from '../src/core/level.js';
import { buildApp } from '../src/http/app.js';
import { createStore } from '../src/storage/create-store.js';
import type { Store } from '../src/storage/store.js';

/**
 * docs/api.md is the reference client authors read; /v1/openapi.json is generated from the route
 * schemas. This keeps the two listing the same endpoints and the same query parameters, so that a
 * route added, renamed or given a parameter cannot ship without its documentation.
 */

const API_MD = readFileSync(fileURLToPath(new URL('../docs/api.md', import.meta.url)), 'utf8');

/** The document's own path: served, listed in docs/api.md, but hidden from the document itself. */
const OPENAPI_PATH = '/v1/openapi.json';

interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly required?: boolean;
}
interface OpenApiDocument {
  readonly paths: Record<string, Record<string, { parameters?: Parameter[] }>>;
}

interface EndpointRow {
  readonly path: string;
  /** The "Query parameters" cell. */
  readonly query: string;
}

/** The rows of the endpoint table in section 2 of docs/api.md: path and query-parameter cell. */
function endpointTable(markdown: string): EndpointRow[] {
  const lines = markdown.split('\n');
  const header = lines.findIndex((line) =>
    /^\|\s*Endpoint\s*\|\s*Query parameters\s*\|/.test(line),
  );
  expect(
    header,
    'docs/api.md has an endpoint table with "Endpoint | Query parameters"',
  ).toBeGreaterThan(-1);
  const rows: EndpointRow[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line.split('|').map((cell) => cell.trim());
    const path = /^`([^`]+)`$/.exec(cells[1] ?? '')?.[1];
    expect(path, `first cell of "${line}" is one path in backticks`).toBeDefined();
    rows.push({ path: path!, query: cells[2] ?? '' });
  }
  return rows;
}

/** The query parameters of an OpenAPI path, over all its operations. */
function queryParameters(document: OpenApiDocument, path: string): Parameter[] {
  return Object.values(document.paths[path] ?? {}).flatMap((operation) =>
    (operation.parameters ?? []).filter((parameter) => parameter.in === 'query'),
  );
}

let store: Store;
let app: FastifyInstance;
let document: OpenApiDocument;

beforeAll(async () => {
  store = await createStore('sqlite::memory:');
  app = await buildApp({ config: loadConfig({}), store });
  const response = await app.inject({ method: 'GET', url: OPENAPI_PATH });
  expect(response.statusCode).toBe(200);
  document = response.json<OpenApiDocument>();
});

afterAll(async () => {
  await app?.close();
  await store?.close();
});

describe('docs/api.md and the OpenAPI document', () => {
  it('list the same endpoints', () => {
    const documented = endpointTable(API_MD).map((row) => row.path);
    const served = Object.keys(document.paths);
    expect(served.length).toBeGreaterThan(0);
    for (const path of served) expect(documented, `${path} in docs/api.md`).toContain(path);
    for (const path of documented) {
      if (path === OPENAPI_PATH) continue;
      expect(served, `${path} of docs/api.md in the OpenAPI document`).toContain(path);
    }
    expect(documented).toContain(OPENAPI_PATH);
    expect(new Set(documented).size).toBe(documented.length);
  });

  it('name every query parameter, in the endpoint table and in the text', () => {
    const rows = new Map(endpointTable(API_MD).map((row) => [row.path, row.query]));
    for (const path of Object.keys(document.paths)) {
      const cell = rows.get(path) ?? '';
      const parameters = queryParameters(document, path);
      for (const { name, required } of parameters) {
        const where = `${path} ?${name}`;
        expect(API_MD, `${where} named in docs/api.md`).toContain(`\`${name}\``);
        expect(cell, `${where} in the endpoint table`).toContain(`\`${name}\``);
        const stated = new RegExp(`\`${name}\` \\((required|optional)\\)`).exec(cell)?.[1];
        expect(stated, `${where} marked (required) or (optional)`).toBe(
          required ? 'required' : 'optional',
        );
      }
      // And nothing the document does not have: every backticked name in the cell is a parameter.
      const named = [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]);
      expect(named.sort(), `query parameters of ${path}`).toEqual(
        parameters.map((parameter) => parameter.name).sort(),
      );
    }
  });
});

describe('the level thresholds (extensions §11)', () => {
  it('are one table: the code, docs/api.md and the OpenAPI description agree', () => {
    const lines = API_MD.split('\n');
    const header = lines.indexOf('| `level`     | percentile `p` |');
    expect(header, 'docs/api.md has the level table').toBeGreaterThan(-1);
    const rows: (string | number | null)[][] = [];
    for (const line of lines.slice(header + 2)) {
      if (!line.startsWith('|')) break;
      const [word, band] = line
        .split('|')
        .slice(1, 3)
        .map((cell) => cell.trim());
      const lower = /^(\d+) <= p/.exec(band!)?.[1] ?? /^p >= (\d+)$/.exec(band!)?.[1];
      const upper = /p < (\d+)$/.exec(band!)?.[1];
      rows.push([
        word!.replaceAll('`', ''),
        lower ? Number(lower) : null,
        upper ? Number(upper) : null,
      ]);
    }
    // Each word from the bound of the one before it up to its own.
    const bounds = Object.values(LEVEL_THRESHOLDS);
    expect(rows).toEqual(
      LEVELS.map((level, i) => [level, bounds[i - 1] ?? null, bounds[i] ?? null]),
    );
    const operation = document.paths['/v1/intensity/level']?.['get'] as { description?: string };
    for (const [level, upper] of Object.entries(LEVEL_THRESHOLDS)) {
      expect(operation.description).toContain(`${level} below ${upper}`);
    }
    expect(operation.description).toContain(`very-high from ${LEVEL_THRESHOLDS.high}`);
  });
});

describe('the configuration tables', () => {
  // Every variable loadConfig reads, recorded as it reads them.
  const read = new Set<string>();
  loadConfig(new Proxy({}, { get: (_env, name) => void read.add(String(name)) }), null);
  const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
  const deploy = readFileSync(fileURLToPath(new URL('../docs/deploy.md', import.meta.url)), 'utf8');
  /** The variables named in the first cell of a table row, as `NAME`. */
  const documented = (markdown: string) =>
    new Set([...markdown.matchAll(/^\|\s*`([A-Z][A-Z0-9_]+)`\s*\|/gm)].map((match) => match[1]!));

  it.each([
    ['README.md', readme],
    ['docs/deploy.md', deploy],
  ])('in %s name exactly the variables the code reads', (_file, markdown) => {
    expect(read.size).toBeGreaterThan(20);
    expect([...documented(markdown)].sort()).toEqual([...read].sort());
  });
});
