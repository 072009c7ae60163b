import { XMLValidator } from 'fast-xml-parser';
import { afterEach, describe, expect, it } from 'vitest';
import { simulatorDuringSuite } from '../../test/support/simulator-suite.js';
import { startSimulator } from './index.js';
import type { SourceId } from '../core/sources.js';

const NOW = Date.parse('2025-10-24T18:00:00Z');

const sim = simulatorDuringSuite({ seed: 3, now: () => NOW });
afterEach(() => sim.clearFaults());

const PATHS: Record<SourceId, string> = {
  'europe-tso':
    '/api?securityToken=t&documentType=A75&processType=A16&in_Domain=10YFI-1--------U&periodStart=202510200000&periodEnd=202510210000',
  'us-agency':
    '/v2/electricity/rto/fuel-type-data/data/?api_key=k&frequency=hourly&data[0]=value&facets[respondent][]=PJM&start=2025-10-20T00&end=2025-10-21T00',
  'uk-operator': '/intensity/2025-10-20T00:01Z/2025-10-21T00:00Z',
};
const SOURCES = Object.keys(PATHS) as SourceId[];

const request = (source: SourceId, init?: RequestInit) => fetch(`${sim.url}${PATHS[source]}`, init);

async function control(method: string, path: string, body?: unknown) {
  const response = await fetch(`${sim.url}/_sim/${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Whether a body reads as the source's format: XML for ENTSO-E, JSON for the others. */
function parses(source: SourceId, body: string): boolean {
  if (source === 'europe-tso') return XMLValidator.validate(body) === true;
  try {
    JSON.parse(body);
    return true;
  } catch {
    return false;
  }
}

describe.each(SOURCES)('faults of %s', (source) => {
  it('server-error: the chosen 5xx, for the next N requests only', async () => {
    await control('POST', 'faults', { source, fault: 'server-error', status: 502, count: 2 });
    expect((await request(source)).status).toBe(502);
    expect((await request(source)).status).toBe(502);
    expect((await request(source)).status).toBe(200);
  });

  it('rate-limited: 429 with Retry-After', async () => {
    sim.setFault({ source, fault: 'rate-limited', retryAfterSeconds: 7 });
    const response = await request(source);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
  });

  it('slow: the normal reply, late', async () => {
    sim.setFault({ source, fault: 'slow', delayMs: 150, count: 1 });
    const started = performance.now();
    const response = await request(source);
    expect(parses(source, await response.text())).toBe(true);
    expect(response.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('hang: no answer until the client gives up', async () => {
    sim.setFault({ source, fault: 'hang', count: 1 });
    await expect(request(source, { signal: AbortSignal.timeout(100) })).rejects.toThrow(/aborted/i);
    expect((await request(source)).status).toBe(200);
  });

  it('truncated: the connection drops halfway through the announced body', async () => {
    sim.setFault({ source, fault: 'truncated', count: 1 });
    const response = await request(source);
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
  });

  it('malformed: a complete reply whose body is cut, so it does not parse', async () => {
    sim.setFault({ source, fault: 'malformed', count: 1 });
    const response = await request(source);
    expect(response.status).toBe(200);
    expect(parses(source, await response.text())).toBe(false);
  });

  it('html-page: a maintenance page with 200', async () => {
    sim.setFault({ source, fault: 'html-page', count: 1 });
    const response = await request(source);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await response.text()).toMatch(/^<!DOCTYPE html>/);
  });

  it('empty: a valid answer without data', async () => {
    sim.setFault({ source, fault: 'empty', count: 1 });
    const response = await request(source);
    expect(response.status).toBe(200);
    const body = await response.text();
    if (source === 'europe-tso') expect(body).toMatch(/<text>No matching data found/);
    if (source === 'us-agency')
      expect(JSON.parse(body).response).toMatchObject({ total: '0', data: [] });
    if (source === 'uk-operator') expect(JSON.parse(body)).toEqual({ data: [] });
  });

  it('hits only its own source', async () => {
    sim.setFault({ source, fault: 'server-error' });
    for (const other of SOURCES.filter((candidate) => candidate !== source)) {
      expect((await request(other)).status).toBe(200);
    }
    expect((await request(source)).status).toBe(503);
  });
});

describe('control endpoint', () => {
  it('reports the clock, the active faults and the request counts per source', async () => {
    const before = (await control('GET', 'state')).body;
    await control('POST', 'faults', { source: 'us-agency', fault: 'rate-limited', count: 3 });
    await request('us-agency');
    await request('uk-operator');
    const after = (await control('GET', 'state')).body;
    expect(after).toMatchObject({
      now: '2025-10-24T18:00:00.000Z',
      seed: 3,
      faults: [{ source: 'us-agency', fault: 'rate-limited', count: 3, remaining: 2 }],
    });
    const counts = (state: Record<string, unknown>) => state.requests as Record<SourceId, number>;
    expect(counts(after)['us-agency']).toBe(counts(before)['us-agency'] + 1);
    expect(counts(after)['uk-operator']).toBe(counts(before)['uk-operator'] + 1);
    expect(counts(after)['europe-tso']).toBe(counts(before)['europe-tso']);
  });

  it('clears the faults of one source or of all', async () => {
    await control('POST', 'faults', { source: 'us-agency', fault: 'hang' });
    await control('POST', 'faults', { source: 'uk-operator', fault: 'hang' });
    const cleared = await control('DELETE', 'faults?source=us-agency');
    expect(cleared.body.faults).toEqual([expect.objectContaining({ source: 'uk-operator' })]);
    expect((await control('DELETE', 'faults')).body.faults).toEqual([]);
  });

  it('refuses a bad fault with the reason', async () => {
    const cases: [unknown, RegExp][] = [
      [{ source: 'mars', fault: 'hang' }, /source must be one of/],
      [{ source: 'us-agency', fault: 'explode' }, /fault must be one of/],
      [
        { source: 'us-agency', fault: 'server-error', status: 404 },
        /status must be a whole number from 500 to 599/,
      ],
      [{ source: 'us-agency', fault: 'hang', count: 0 }, /count must be/],
      ['hang', /JSON object/],
    ];
    for (const [body, message] of cases) {
      const reply = await control('POST', 'faults', body);
      expect([reply.status, reply.body.error]).toEqual([400, expect.stringMatching(message)]);
    }
    expect(() => sim.setFault({ source: 'us-agency', fault: 'slow', delayMs: -1 })).toThrow(
      /delayMs/,
    );
  });

  it('sets and advances the clock, which then stands still', async () => {
    const clocked = await startSimulator({ seed: 3 });
    try {
      const post = async (body: unknown) => {
        const response = await fetch(`${clocked.url}/_sim/clock`, {
          method: 'POST',
          body: JSON.stringify(body),
        });
        return {
          status: response.status,
          body: (await response.json()) as { now?: string; error?: string },
        };
      };
      expect((await post({ now: '2024-01-01T00:00:00Z' })).body.now).toBe(
        '2024-01-01T00:00:00.000Z',
      );
      expect((await post({ advanceMs: 90 * 60_000 })).body.now).toBe('2024-01-01T01:30:00.000Z');
      expect((await post({ now: Date.parse('2024-06-01T00:00:00Z') })).body.now).toBe(
        '2024-06-01T00:00:00.000Z',
      );
      expect(clocked.state().now).toBe('2024-06-01T00:00:00.000Z');
      expect((await post({ now: 'yesterday' })).status).toBe(400);
      // What the upstreams answer follows the simulated clock.
      const latest = await fetch(`${clocked.url}/intensity`);
      expect(((await latest.json()) as { data: { to: string }[] }).data[0]?.to).toBe(
        '2024-06-01T00:00Z',
      );
    } finally {
      await clocked.close();
    }
  });

  it('takes faults at start-up too', async () => {
    const faulty = await startSimulator({
      seed: 3,
      now: () => NOW,
      faults: [{ source: 'uk-operator', fault: 'server-error', status: 500, count: 1 }],
    });
    try {
      expect((await fetch(`${faulty.url}${PATHS['uk-operator']}`)).status).toBe(500);
      expect((await fetch(`${faulty.url}${PATHS['uk-operator']}`)).status).toBe(200);
    } finally {
      await faulty.close();
    }
  });

  it('closes promptly with a request hanging', async () => {
    const hanging = await startSimulator({ seed: 3, now: () => NOW });
    hanging.setFault({ source: 'uk-operator', fault: 'hang' });
    const pending = fetch(`${hanging.url}${PATHS['uk-operator']}`).catch((error: unknown) => error);
    await expect.poll(() => hanging.state().requests['uk-operator']).toBe(1);
    await hanging.close();
    expect(await pending).toBeInstanceOf(Error);
  });

  it("hits the operator's generation mix routes like its intensity routes", async () => {
    sim.setFault({ source: 'uk-operator', fault: 'server-error', status: 502, count: 2 });
    expect((await fetch(`${sim.url}/generation/2025-10-20T00:01Z/2025-10-21T00:00Z`)).status).toBe(
      502,
    );
    expect((await fetch(`${sim.url}/generation`)).status).toBe(502);
    expect((await fetch(`${sim.url}/generation`)).status).toBe(200);
    sim.setFault({ source: 'uk-operator', fault: 'empty', count: 1 });
    expect(await (await fetch(`${sim.url}/generation`)).json()).toEqual({ data: [] });
  });

  it('answers unknown paths with 404', async () => {
    expect((await fetch(`${sim.url}/nothing`)).status).toBe(404);
    expect((await control('GET', 'nothing')).status).toBe(404);
  });
});
