import { describe, expect, it } from 'vitest';
import { readFixture } from '../../../test/fixtures.js';
import { replayDuringSuite, type SuiteReplay } from '../../../test/support/suite-replay.js';
import { upstreamFailure } from '../../../test/support/upstream-failure.js';
import { zonesOfSource } from '../../core/zones.js';
import { createUpstreamHttp } from '../http.js';
import { fetchEiaZones, type EiaClient } from './index.js';

const H = 3600;
const ANCHOR = Date.UTC(2026, 10, 20) / 1000;
const KEY = 'eia-key-90d1b2';
const ZONES = zonesOfSource('us-agency');
const WINDOW = { fromTs: ANCHOR - 24 * H, toTs: ANCHOR };

const options = { anchorTs: ANCHOR, entsoeToken: 'unused', eiaApiKey: KEY };
const replay = replayDuringSuite(options);
const smallPages = replayDuringSuite({ ...options, eiaMaxRows: 100 });

const clientOf = (suite: SuiteReplay, apiKey = KEY): EiaClient => ({
  http: createUpstreamHttp({ source: 'us-agency', secrets: [apiKey], retries: 1, backoffMs: 1 }),
  baseUrl: suite.upstreams.eiaBaseUrl,
  apiKey,
});

describe('fetchEiaZones', () => {
  it('asks every respondent in one query and computes each zone', async () => {
    const result = await fetchEiaZones(clientOf(replay), ZONES, WINDOW);
    expect(replay.upstreams.requests).toHaveLength(1);
    expect([...result.keys()]).toEqual(ZONES.map((zone) => zone.code));
    const pjm = result.get('US-PJM');
    // Ten complete recorded hours, plus the oldest one where the 5000-row cut left PJM whole.
    expect(pjm?.readings.filter((reading) => reading.complete)).toHaveLength(11);
    expect(pjm?.readings.at(-1)?.ts).toBe(ANCHOR - H);
  });

  it('pages by offset until the total, with the same result as one page', async () => {
    const onePage = await fetchEiaZones(clientOf(replay), ZONES, WINDOW);
    const paged = await fetchEiaZones(clientOf(smallPages), ZONES, WINDOW);
    expect(paged).toEqual(onePage);
    const offsets = smallPages.upstreams.requests.map(({ url }) =>
      Number(url.searchParams.get('offset')),
    );
    expect(offsets.length).toBeGreaterThan(10);
    expect(offsets).toEqual(offsets.map((_, page) => page * 100));
  });

  it('reads a valid empty result as no readings', async () => {
    replay.fault = {
      status: 200,
      body: readFixture('us-agency', 'eia_fuel-type-data_SC_NUC_empty-result.json'),
    };
    const result = await fetchEiaZones(clientOf(replay), ZONES, WINDOW);
    expect([...result.values()].every((zone) => zone.readings.length === 0)).toBe(true);
  });

  it('reads a key error sent with HTTP 200 as auth, with the echoed key scrubbed', async () => {
    replay.fault = {
      status: 200,
      body: JSON.stringify({
        error: { code: 'API_KEY_INVALID', message: `key ${KEY} is not valid` },
        request: { params: { api_key: KEY } },
      }),
    };
    const error = await upstreamFailure(fetchEiaZones(clientOf(replay), ZONES, WINDOW));
    expect(error.kind).toBe('auth');
    expect(error.message).not.toContain(KEY);
  });

  it('reads the error code, not the text: a parameter error naming api_key is no auth failure', async () => {
    replay.fault = {
      status: 200,
      body: JSON.stringify({ error: 'Invalid parameter: api_key=REDACTED&frequency=x', code: 400 }),
    };
    const error = await upstreamFailure(fetchEiaZones(clientOf(replay), ZONES, WINDOW));
    expect(error.kind).toBe('invalid');
    expect(error.failure).toBe('rejected');
  });

  it('reports a wrong key (HTTP 403) as auth without retrying', async () => {
    const error = await upstreamFailure(
      fetchEiaZones(clientOf(replay, 'wrong-key'), ZONES, WINDOW),
    );
    expect(error.kind).toBe('auth');
    expect(error.message).toContain('api_key=REDACTED');
    expect(replay.upstreams.requests).toHaveLength(1);
  });

  it('refuses a page that is empty before the announced total', async () => {
    replay.fault = {
      status: 200,
      body: JSON.stringify({ response: { total: '12', frequency: 'hourly', data: [] } }),
    };
    const error = await upstreamFailure(fetchEiaZones(clientOf(replay), ZONES, WINDOW));
    expect(error.kind).toBe('invalid');
  });
});
