import { beforeAll, describe, expect, it } from 'vitest';
import { readFixture } from '../../../test/fixtures.js';
import { replayDuringSuite } from '../../../test/support/suite-replay.js';
import { upstreamFailure } from '../../../test/support/upstream-failure.js';
import { computeReadings } from '../../core/method.js';
import { PSR_TYPES } from '../../core/production-types.js';
import { findZone, type Zone } from '../../core/zones.js';
import { createUpstreamHttp } from '../http.js';
import { fetchEntsoeZone, type EntsoeClient } from './index.js';
import { parseA75 } from './parse.js';

const H = 3600;
const ANCHOR = Date.UTC(2026, 10, 20) / 1000;
const TOKEN = 'entsoe-token-71c2';
const zone = (code: string) => findZone(code) as Zone;

const replay = replayDuringSuite({ anchorTs: ANCHOR, entsoeToken: TOKEN, eiaApiKey: 'unused' });
let client: EntsoeClient;

beforeAll(() => {
  client = {
    http: createUpstreamHttp({ source: 'europe-tso', secrets: [TOKEN], retries: 1, backoffMs: 1 }),
    baseUrl: replay.upstreams.entsoeBaseUrl,
    token: TOKEN,
  };
});

describe('fetchEntsoeZone', () => {
  it('computes the zone of the document with the method', async () => {
    const fi = zone('FI');
    const result = await fetchEntsoeZone(client, fi, { fromTs: ANCHOR - 7 * 24 * H, toTs: ANCHOR });
    const document = parseA75(replay.upstreams.payloads.entsoe.get(fi.upstreamId) ?? '');
    if (document.kind !== 'generation') throw new Error(document.kind);
    const expected = computeReadings(
      'FI',
      document.areas.get(fi.upstreamId) ?? new Map(),
      PSR_TYPES,
    );
    expect(result).toEqual(expected);
    expect(result.readings).toHaveLength(72);
    expect(result.readings.every((reading) => reading.complete)).toBe(true);
  });

  it('keeps only the hours of the requested window', async () => {
    const result = await fetchEntsoeZone(client, zone('FI'), {
      fromTs: ANCHOR - 24 * H,
      toTs: ANCHOR,
    });
    expect(result.readings.map((reading) => reading.ts)).toEqual(
      Array.from({ length: 24 }, (_, hour) => ANCHOR - 24 * H + hour * H),
    );
    expect(result.quality.pointsStored).toBe(24);
  });

  it('asks at most one year per request', async () => {
    const fromTs = Date.UTC(2024, 0, 1) / 1000;
    const result = await fetchEntsoeZone(client, zone('DE'), {
      fromTs,
      toTs: fromTs + 400 * 24 * H,
    });
    expect(result.readings).toEqual([]);
    expect(replay.upstreams.requests.map(({ url }) => url.searchParams.get('periodStart'))).toEqual(
      ['202401010000', '202412310000'],
    );
    expect(replay.upstreams.requests.map(({ url }) => url.searchParams.get('periodEnd'))).toEqual([
      '202412310000',
      '202502040000',
    ]);
  });

  it('reads "no matching data" as no readings, also when it comes with HTTP 400', async () => {
    const window = { fromTs: ANCHOR - 24 * H, toTs: ANCHOR };
    const empty = await fetchEntsoeZone(client, zone('DE'), window);
    expect(empty.readings).toEqual([]);
    replay.fault = {
      status: 400,
      body: readFixture('europe-tso', 'entsoe_acknowledgement_no-matching-data.xml'),
    };
    expect((await fetchEntsoeZone(client, zone('FI'), window)).readings).toEqual([]);
  });

  it.each([
    [
      'an Acknowledgement refusing the request',
      readFixture('europe-tso', 'entsoe_acknowledgement_no-matching-data.xml').replace(
        'No matching data found',
        'The amount of requested data exceeds allowed limit',
      ),
      /request refused: The amount of requested data exceeds allowed limit/,
    ],
    ['an HTML page', '<html><body>maintenance</body></html>', /unusable A75 payload/],
    ['a truncated document', '<GL_MarketDocument><type>A75</type>', /unusable A75 payload/],
  ])('rejects %s as invalid', async (_name, body, message) => {
    replay.fault = { status: 200, body };
    const error = await upstreamFailure(
      fetchEntsoeZone(client, zone('FI'), { fromTs: ANCHOR - H, toTs: ANCHOR }),
    );
    expect(error.kind).toBe('invalid');
    expect(error.message).toMatch(message);
  });

  it('reports refused credentials as auth, without the token', async () => {
    const wrong = {
      ...client,
      http: createUpstreamHttp({ source: 'europe-tso', secrets: ['not-the-token'], retries: 1 }),
      token: 'not-the-token',
    };
    const error = await upstreamFailure(
      fetchEntsoeZone(wrong, zone('FI'), { fromTs: ANCHOR - H, toTs: ANCHOR }),
    );
    expect(error.kind).toBe('auth');
    expect(error.message).toContain('HTTP 401');
    expect(error.message).toContain('securityToken=REDACTED');
    expect(error.message).not.toContain('not-the-token');
    expect(replay.upstreams.requests).toHaveLength(1);
  });
});
