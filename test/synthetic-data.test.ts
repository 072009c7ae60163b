import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/http/app.js';
import { runIngestion } from '../src/ingest/run-ingestion.js';
import { createSourceAdapter } from '../src/ingest/sources.js';
import { startSimulator, type Simulator } from '../src/simulator/index.js';
import { createStore } from '../src/storage/create-store.js';
import type { Store } from '../src/storage/store.js';

/**
 * Synthetic data is never served as real (issue 22): the simulator signs every answer, ingestion
 * refuses signed answers unless DEMO=on, and with DEMO=on every response carries a label.
 */

const logger = pino({ level: 'silent' });
let simulator: Simulator;

beforeAll(async () => {
  simulator = await startSimulator({ seed: 2 });
});
afterAll(() => simulator.close());

const upstreamEnv = () => ({
  ENTSOE_BASE_URL: simulator.baseUrls['europe-tso'],
  EIA_BASE_URL: simulator.baseUrls['us-agency'],
  NESO_BASE_URL: simulator.baseUrls['uk-operator'],
  // Keys are scrubbed from messages: none that is a word of them.
  ENTSOE_TOKEN: 'token-5e1f',
  EIA_API_KEY: 'key-9a2c',
});

describe('the upstream simulator', () => {
  it.each([
    'api?documentType=A75&processType=A16&in_Domain=10YFR-RTE------C&periodStart=202601010000&periodEnd=202601020000',
    'intensity/2026-01-01T00:00Z/2026-01-01T06:00Z',
    'nothing-here',
    '_sim/state',
  ])('signs its answer to /%s', async (path) => {
    const response = await fetch(`${simulator.url}/${path}?securityToken=x`);
    await response.arrayBuffer();
    expect(response.headers.get('gridco2-simulated')).toBe('1');
  });
});

describe('ingestion from the simulator', () => {
  const ingestGb = async (env: Record<string, string>) => {
    const store = await createStore('sqlite::memory:');
    try {
      const config = loadConfig({ ...upstreamEnv(), ...env });
      const before = simulator.state().requests['uk-operator'];
      const report = await runIngestion({
        store,
        adapter: createSourceAdapter(config, 'uk-operator', { logger }),
        logger,
      });
      return {
        report,
        requests: simulator.state().requests['uk-operator'] - before,
        stored: (await store.readStored('GB', 0, 2 ** 31)).length,
      };
    } finally {
      await store.close();
    }
  };

  it('refuses signed answers, naming DEMO and the base URL variable, without retrying', async () => {
    const { report, requests, stored } = await ingestGb({});
    expect(stored).toBe(0);
    // GB's feeds fail alike; the zone is named once (issue 22: "GB, GB, GB").
    expect(report.errors[0]).toBe(
      `GB: uk-operator: the upstream at NESO_BASE_URL=${simulator.baseUrls['uk-operator']} signs ` +
        'its answers as simulated (gridco2 simulate-upstreams), and synthetic data is never ' +
        'ingested as real: set DEMO=on to serve it as a demo (every response labelled, the store ' +
        'marked synthetic), or point NESO_BASE_URL at the real upstream',
    );
    expect(report.failures).toEqual([{ kind: 'invalid-payload', zones: ['GB'] }]);
    // One request per feed: a signed answer is not asked again.
    expect(requests).toBeLessThanOrEqual(3);
  });

  it('takes them with DEMO=on', async () => {
    const { report, stored } = await ingestGb({ DEMO: 'on' });
    expect(report.errors).toEqual([]);
    expect(stored).toBeGreaterThan(0);
  });
});

/** What a listener answers to `request` sent as is on a socket: status and headers (lower case). */
function rawExchange(url: string, request: string) {
  const { hostname, port } = new URL(url);
  return new Promise<{ status: number; headers: Map<string, string> }>((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.end(request));
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [statusLine = '', ...lines] = text.split('\r\n\r\n')[0]!.split('\r\n');
      const headers = new Map(
        lines.map((line) => {
          const colon = line.indexOf(':');
          return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
        }),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers });
    });
  });
}

describe.each([
  ['on', 'demo'],
  ['off', null],
])('responses with DEMO=%s', (demo, label) => {
  let store: Store;
  let app: FastifyInstance;
  let url: string;
  /** The listener of its own that serves /metrics (METRICS_ADDR). */
  let metricsUrl: string;
  beforeAll(async () => {
    store = await createStore('sqlite::memory:');
    const lines: { metricsUrl?: string }[] = [];
    const listening = pino(
      { level: 'info' },
      { write: (line: string) => lines.push(JSON.parse(line)) },
    );
    app = await buildApp({
      config: loadConfig({ DEMO: demo, METRICS_ADDR: '127.0.0.1:0' }),
      store,
      logger: listening,
    });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
    metricsUrl = new URL(lines.find((line) => line.metricsUrl)!.metricsUrl!).origin;
  });
  afterAll(async () => {
    await app.close();
    await store.close();
  });

  it.each([
    '/v1',
    '/v1/status',
    '/v1/intensity/latest',
    '/v1/intensity/forecast?zone=DE',
    '/v1/export?zones=DE',
    '/v1/nothing-here',
    '/metrics',
    '/compat/electricitymaps/v3/carbon-intensity/latest?zone=DE',
    '/compat/carbon-aware/emissions/bylocation?location=DE',
    '/',
  ])(`label %s with ${String(label)}`, async (path) => {
    const response = await fetch(`${url}${path}`);
    await response.arrayBuffer();
    expect(response.headers.get('gridco2-data')).toBe(label);
  });

  it(`labels every answer of the metrics listener with ${String(label)}`, async () => {
    for (const [path, status] of [
      ['/metrics', 200],
      ['/elsewhere', 404],
    ] as const) {
      const response = await fetch(`${metricsUrl}${path}`);
      const body = await response.text();
      expect(response.status, path).toBe(status);
      expect(response.headers.get('gridco2-data'), path).toBe(label);
      if (status === 200) expect(body).toContain('grid_intensity_carbon_average');
    }
  });

  it(`labels what the HTTP parser refuses with ${String(label)}, on both listeners`, async () => {
    for (const listener of [url, metricsUrl]) {
      for (const request of [
        'NOT A REQUEST\r\n\r\n',
        `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      ]) {
        const answer = await rawExchange(listener, request);
        expect([answer.status, answer.headers.get('gridco2-data') ?? null], listener).toEqual([
          request.startsWith('GET') ? 431 : 400,
          label,
        ]);
      }
    }
    const expectation = await rawExchange(
      url,
      'GET /v1 HTTP/1.1\r\nHost: x\r\nExpect: later\r\n\r\n',
    );
    expect([expectation.status, expectation.headers.get('gridco2-data') ?? null]).toEqual([
      417,
      label,
    ]);
  });

  it(`labels an event stream with ${String(label)}`, async () => {
    const stop = new AbortController();
    const response = await fetch(`${url}/v1/stream?zones=DE`, { signal: stop.signal });
    expect(response.headers.get('gridco2-data')).toBe(label);
    stop.abort();
  });
});
