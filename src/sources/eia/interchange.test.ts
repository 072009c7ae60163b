import { describe, expect, it } from 'vitest';
import { US_NODES } from '../../core/grid-graph/us.js';
import { createUpstreamHttp, UpstreamError } from '../http.js';
import { fetchEiaInterchange, type EiaClient } from './index.js';

const T = (text: string) => Date.parse(text) / 1000;
const H = 3600;
const KEY = 'eia-key-interchange';

const row = (period: string, fromba: string, toba: string, value: number | null) => ({
  period,
  fromba,
  toba,
  value,
  'value-units': 'megawatthours',
});

/**
 * A client whose upstream serves `rows` in pages of at most `pageRows`, by the offset asked
 * (or answers every request with `body`).
 */
function clientServing(rows: readonly unknown[], { pageRows = 5000, body = '' } = {}) {
  const urls: URL[] = [];
  const fakeFetch = async (input: string | URL | Request): Promise<Response> => {
    const url = new URL(String(input));
    urls.push(url);
    const offset = Number(url.searchParams.get('offset'));
    const served = rows.slice(offset, offset + pageRows);
    const page = JSON.stringify({
      response: { total: String(rows.length), frequency: 'hourly', data: served },
      apiVersion: '2.1.8',
    });
    return new Response(body || page, { headers: { 'content-type': 'application/json' } });
  };
  const client: EiaClient = {
    http: createUpstreamHttp({
      source: 'us-agency',
      secrets: [KEY],
      fetch: fakeFetch as typeof fetch,
      retries: 0,
    }),
    baseUrl: 'http://eia.test/v2',
    apiKey: KEY,
  };
  return { client, urls };
}

const WINDOW = { fromTs: T('2025-04-21T00:00Z'), toTs: T('2025-04-21T02:00Z') };

describe('fetchEiaInterchange', () => {
  it('asks every balancing authority of the graph as reporter, never a foreign one', async () => {
    const { client, urls } = clientServing([]);
    expect(await fetchEiaInterchange(client, WINDOW)).toEqual({
      flows: [],
      unknownCodes: [],
      unlistedPairs: [],
    });
    const reporters = urls[0]?.searchParams.getAll('facets[fromba][]');
    expect(reporters).toHaveLength(66);
    expect(reporters).toContain('BPAT');
    expect(reporters).not.toContain('BCHA');
    expect(reporters).not.toContain('US48');
    expect(reporters).toEqual(
      US_NODES.filter((node) => node.role !== 'boundary').map((node) => node.upstreamId),
    );
    expect(urls[0]?.searchParams.get('start')).toBe('2025-04-21T01');
    expect(urls[0]?.searchParams.get('end')).toBe('2025-04-21T02');
  });

  it('reads every page, keeps both reports of a pair, and names what is no node', async () => {
    const rows = [
      row('2025-04-21T01', 'BPAT', 'CISO', 1079),
      row('2025-04-21T01', 'CISO', 'BPAT', -1070),
      row('2025-04-21T01', 'BPAT', 'BCHA', -300),
      row('2025-04-21T01', 'BPAT', 'CAN', -300),
      row('2025-04-21T02', 'BPAT', 'CISO', 1000),
      row('2025-04-21T02', 'CISO', 'BPAT', null),
      // Outside the window asked: EIA's range is inclusive, the hour before is not ours.
      row('2025-04-21T00', 'BPAT', 'CISO', 5),
    ];
    const { client, urls } = clientServing(rows, { pageRows: 3 });
    const result = await fetchEiaInterchange(client, WINDOW);
    expect(urls.map((url) => url.searchParams.get('offset'))).toEqual(['0', '3', '6']);
    expect(result.flows).toEqual([
      { from: 'US-BPA', to: 'US-CAISO', ts: T('2025-04-21T00:00Z'), mw: 1079 },
      { from: 'US-BPA', to: 'US-CAISO', ts: T('2025-04-21T01:00Z'), mw: 1000 },
      { from: 'US-BPA', to: 'BCHA', ts: T('2025-04-21T00:00Z'), mw: -300 },
      { from: 'US-CAISO', to: 'US-BPA', ts: T('2025-04-21T00:00Z'), mw: -1070 },
    ]);
    expect(result.unknownCodes).toEqual(['CAN']);
    expect(result.unlistedPairs).toEqual([]);
  });

  it('rejects an error body as a refusal and garbage as invalid, never a value', async () => {
    const refused = clientServing([], {
      body: JSON.stringify({ error: 'Invalid facet fromba', code: 400 }),
    });
    const error = await fetchEiaInterchange(refused.client, WINDOW).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind: 'invalid', failure: 'rejected' });
    const garbage = clientServing([], { body: '<html>maintenance</html>' });
    const invalid = await fetchEiaInterchange(garbage.client, WINDOW).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ kind: 'invalid', failure: 'invalid-payload' });
  });

  it('reports a refused key as auth, without the key', async () => {
    const { client } = clientServing([], {
      body: JSON.stringify({ error: { code: 'API_KEY_INVALID', message: `bad key ${KEY}` } }),
    });
    const error = (await fetchEiaInterchange(client, {
      fromTs: WINDOW.fromTs,
      toTs: WINDOW.fromTs + H,
    }).catch((e: unknown) => e)) as UpstreamError;
    expect(error.kind).toBe('auth');
    expect(error.message).not.toContain(KEY);
  });
});
