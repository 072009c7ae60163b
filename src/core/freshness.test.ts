import { describe, expect, it } from 'vitest';
import { assessFreshness } from './freshness.js';
import type { IngestReport } from './reading.js';

const NOW = Date.UTC(2026, 10, 21, 13, 20) / 1000;
const RUN = NOW - 600;
const PROXY_URL = 'https://egress.corp.internal:8443/eia/v2/electricity/rto?api_key=REDACTED';

const report = (fields: Partial<IngestReport> & Pick<IngestReport, 'source'>): IngestReport => ({
  startedAt: RUN - 60,
  finishedAt: RUN,
  zones: 0,
  pointsStored: 0,
  incompleteHours: 0,
  errors: [],
  quality: [],
  ...fields,
});
const noteOf = (...reports: IngestReport[]) =>
  assessFreshness(
    new Map(),
    Object.fromEntries(reports.map((stored) => [stored.source, stored])),
    NOW,
  ).note;

// Issue 10, findings 8 and 9: the public note names the source and the kind of failure, never an
// upstream's URL or text (an operator's internal proxy), and says when answers were empty.
describe('the status note of the last runs', () => {
  it('names the source and the kind of failure of a run that read nothing, not its detail', () => {
    const note = noteOf(
      report({
        source: 'us-agency',
        errors: [`US, US-PJM: us-agency: GET ${PROXY_URL}: no complete answer within 60000 ms`],
        failures: [{ kind: 'timeout', zones: ['US', 'US-PJM'] }],
      }),
    );
    expect(note).toContain(
      'us-agency: last run failed: upstream timeout for US, US-PJM (run 2026-11-21T13:10:00Z).',
    );
    expect(note).not.toMatch(/egress|corp|internal|GET|api_key|60000/);
  });

  it.each([
    ['rate-limited', 'rate limited'],
    ['auth', 'authentication refused'],
    ['invalid-payload', 'invalid payload'],
    ['unreachable', 'upstream unreachable'],
    ['server-error', 'upstream server error'],
    ['no-data', 'no data returned'],
  ] as const)('words %s as "%s"', (kind, words) => {
    const note = noteOf(
      report({ source: 'europe-tso', errors: ['DE: detail'], failures: [{ kind, zones: ['DE'] }] }),
    );
    expect(note).toContain(`europe-tso: last run failed: ${words} for DE (run `);
  });

  it('names a zone once although several of its feeds failed (a report stored before the fix)', () => {
    const note = noteOf(
      report({
        source: 'uk-operator',
        errors: ['GB, GB, GB: detail'],
        failures: [{ kind: 'server-error', zones: ['GB', 'GB', 'GB'] }],
      }),
    );
    expect(note).toContain('uk-operator: last run failed: upstream server error for GB (run ');
  });

  it('counts zones beyond three, and counts the zones a run cut short did not fetch', () => {
    const zones = ['DE', 'FR', 'ES', 'PT'];
    const note = noteOf(
      report({
        source: 'europe-tso',
        zones: 2,
        pointsStored: 48,
        errors: ['DE, FR, ES, PT: europe-tso: GET ...: HTTP 502', 'interrupted after ...'],
        failures: [
          { kind: 'server-error', zones },
          { kind: 'interrupted', zones: ['NL', 'BE'] },
        ],
        zonesWithoutData: ['NO-5'],
      }),
    );
    expect(note).toContain(
      'last europe-tso run 2026-11-21T13:10:00Z: 2 zones, 48 points stored, 0 incomplete hours, ' +
        'errors: upstream server error for 4 zones; run interrupted, 2 zones not fetched; ' +
        'warning: no data returned for NO-5.',
    );
  });

  it('says when zones answered without data, even without errors', () => {
    const note = noteOf(
      report({ source: 'uk-operator', zones: 1, failures: [], zonesWithoutData: ['GB'] }),
    );
    expect(note).toContain(
      'last uk-operator run 2026-11-21T13:10:00Z: 1 zones, 0 points stored, 0 incomplete hours, ' +
        'no errors; warning: no data returned for GB.',
    );
  });

  it('says a source is not configured', () => {
    const note = noteOf(
      report({
        source: 'europe-tso',
        errors: ['not configured: ENTSOE_TOKEN is not set'],
        failures: [{ kind: 'not-configured', zones: [] }],
      }),
    );
    expect(note).toContain('europe-tso: not configured (its API key is not set), not ingested.');
  });

  it('reads reports stored before failures were recorded, without showing their raw errors', () => {
    // The stored JSON of a report of the previous format.
    const stored = JSON.parse(
      JSON.stringify({
        source: 'us-agency',
        startedAt: RUN - 60,
        finishedAt: RUN,
        zones: 0,
        pointsStored: 0,
        incompleteHours: 0,
        errors: [`US: us-agency: GET ${PROXY_URL}: HTTP 502`],
        quality: [],
      }),
    ) as IngestReport;
    const clean = { ...stored, source: 'uk-operator' as const, zones: 1, errors: [] };
    const note = noteOf(stored, clean);
    expect(note).toContain(
      'us-agency: last run failed: 1 error, detailed in the ingestion logs (run 2026-11-21T13:10:00Z).',
    );
    expect(note).toContain('last uk-operator run 2026-11-21T13:10:00Z: 1 zones, 0 points stored');
    expect(note).not.toMatch(/egress|HTTP 502/);
  });
});
