import { beforeAll, describe, expect, it } from 'vitest';
import { replayDuringSuite } from '../../../test/support/suite-replay.js';
import { upstreamFailure } from '../../../test/support/upstream-failure.js';
import { findZone, type Zone } from '../../core/zones.js';
import { createUpstreamHttp } from '../http.js';
import { fetchNesoMixes, fetchNesoZone, type NesoClient } from './index.js';

const H = 3600;
const ANCHOR = Date.UTC(2026, 10, 20, 12) / 1000;
const GB = findZone('GB') as Zone;

const replay = replayDuringSuite({ anchorTs: ANCHOR, entsoeToken: 'unused', eiaApiKey: 'unused' });
let client: NesoClient;

beforeAll(() => {
  client = {
    http: createUpstreamHttp({ source: 'uk-operator', retries: 1, backoffMs: 1 }),
    baseUrl: replay.upstreams.nesoBaseUrl,
  };
});

describe('fetchNesoZone', () => {
  it('keeps settled half-hours of the window and one forecast for the half-hour in progress', async () => {
    const now = ANCHOR + 40 * 60;
    const window = { fromTs: ANCHOR - 12 * H, toTs: ANCHOR + H };
    const result = await fetchNesoZone(client, GB, window, now);
    const actual = result.readings;
    // The replay also sends the half hour before `from`, as NESO may: it is not the window's.
    expect(replay.upstreams.requests[0]?.url.pathname).toBe(
      '/intensity/2026-11-20T00:00Z/2026-11-20T13:00Z',
    );
    expect(actual.every((r) => r.method === 'upstream:uk-operator:actual')).toBe(true);
    expect(actual.map((r) => r.ts)).toEqual(
      Array.from({ length: 24 }, (_, index) => ANCHOR - 12 * H + index * 1800),
    );
    const recorded = replay.upstreams.payloads.nesoEntries.find(
      (entry) => Date.parse(entry.from) / 1000 === ANCHOR - 12 * H,
    );
    expect(actual[0]?.value).toBe(recorded?.intensity.actual);
    expect(result.forecasts).toEqual([
      expect.objectContaining({ ts: ANCHOR + 1800, kind: 'uk-operator:intensity', issuedAt: now }),
    ]);
  });

  it('asks long windows in 14-day requests', async () => {
    await fetchNesoZone(client, GB, { fromTs: ANCHOR - 20 * 24 * H, toTs: ANCHOR }, ANCHOR);
    expect(replay.upstreams.requests.map(({ url }) => url.pathname)).toEqual([
      '/intensity/2026-10-31T12:00Z/2026-11-14T12:00Z',
      '/intensity/2026-11-14T12:00Z/2026-11-20T12:00Z',
    ]);
  });

  it('rejects an error body as invalid', async () => {
    replay.fault = {
      status: 200,
      body: JSON.stringify({ error: { code: '400 Bad Request', message: 'Invalid date' } }),
    };
    const error = await upstreamFailure(
      fetchNesoZone(client, GB, { fromTs: ANCHOR - H, toTs: ANCHOR }, ANCHOR),
    );
    expect(error.kind).toBe('invalid');
  });
});

describe('fetchNesoMixes', () => {
  it('asks /generation in 14-day requests and keeps one mix per half-hour where they meet', async () => {
    // The replayed mix covers the 7 days (and one half-hour) before ANCHOR.
    const window = { fromTs: ANCHOR - 20 * 24 * H, toTs: ANCHOR };
    const { mixes, unknownCodes } = await fetchNesoMixes(client, GB, window);
    expect(replay.upstreams.requests.map(({ url }) => url.pathname)).toEqual([
      '/generation/2026-10-31T12:00Z/2026-11-14T12:00Z',
      '/generation/2026-11-14T12:00Z/2026-11-20T12:00Z',
    ]);
    // Each reply starts one half-hour before its `from`: 11:30Z on the 14th came twice.
    const starts = mixes.map(({ ts }) => ts);
    expect(starts).toHaveLength(7 * 48 + 1);
    expect(new Set(starts).size).toBe(starts.length);
    expect(starts[0]).toBe(ANCHOR - 7 * 24 * H - 1800);
    expect(starts.at(-1)).toBe(ANCHOR - 1800);
    expect(
      mixes.every(
        ({ zone, lifecycle, mix }) => zone === 'GB' && lifecycle !== null && !('imports' in mix),
      ),
    ).toBe(true);
    expect(unknownCodes).toEqual([]);
  });

  it('rejects an error body as refused, naming the feed', async () => {
    replay.fault = {
      status: 200,
      body: JSON.stringify({ error: { code: '400 Bad Request', message: 'Invalid date' } }),
    };
    const error = await upstreamFailure(
      fetchNesoMixes(client, GB, { fromTs: ANCHOR - H, toTs: ANCHOR }),
    );
    expect(error).toMatchObject({
      kind: 'invalid',
      failure: 'rejected',
      message: 'uk-operator: generation mix request refused: 400 Bad Request Invalid date',
    });
  });
});
