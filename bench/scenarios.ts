/**
 * The measured requests. Windows are fixed (not relative to now) and lie inside both stores, so
 * the small and the large store answer them with the same bytes (see dataset.ts).
 */
export interface Scenario {
  readonly name: string;
  readonly path: string;
  /** What the captured body must show, so that a dataset or window drift cannot go unnoticed. */
  readonly expected: string;
  holds(body: { data?: unknown[]; count?: number; truncated?: boolean }): boolean;
}

/** The largest body: also the window the defences bench shifts by a second per request. */
export const TRUNCATED_HISTORY: Scenario = {
  name: 'history, 5000 points (truncated)',
  path: '/v1/intensity?zone=DE&from=2026-03-01T00:00:00Z&to=2026-10-31T00:00:00Z',
  expected: '5000 points, truncated',
  holds: (body) => body.truncated === true && body.count === 5000,
};

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'latest, all zones',
    path: '/v1/intensity/latest',
    expected: '45 readings',
    holds: (body) => body.data?.length === 45,
  },
  {
    name: 'latest, one zone',
    path: '/v1/intensity/latest?zone=DE',
    expected: '1 reading',
    holds: (body) => body.data?.length === 1,
  },
  {
    name: 'history, 30 days',
    path: '/v1/intensity?zone=DE&from=2026-10-01T00:00:00Z&to=2026-10-31T00:00:00Z',
    // 720 hours less the odd incomplete hour, which is stored but not served.
    expected: '700 to 720 points, not truncated',
    holds: (body) =>
      body.truncated === false &&
      body.count !== undefined &&
      body.count >= 700 &&
      body.count <= 720,
  },
  TRUNCATED_HISTORY,
];
