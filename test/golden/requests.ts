/**
 * Requests whose responses must not change when the read model changes (issue 11): every one uses
 * only the /v1 contract (no extension parameter or path). Recorded once from the release before
 * the extensions (`npm run golden:record`) into v1-responses.json; test/golden.test.ts replays
 * them against the current code and compares status, headers (other than Date) and bodies.
 */
export interface GoldenRequest {
  readonly method?: 'GET' | 'HEAD' | 'OPTIONS' | 'POST';
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export const GOLDEN_REQUESTS: readonly GoldenRequest[] = [
  { path: '/v1/health' },
  { path: '/v1/zones' },
  { path: '/v1/status' },
  { path: '/v1/intensity/latest' },
  { path: '/v1/intensity/latest?zone=DE' },
  { path: '/v1/intensity/latest?zone=gb' },
  { path: '/v1/intensity/latest?zone=%20us%20' },
  { path: '/v1/intensity/latest?zone=IE' },
  { path: '/v1/intensity/latest?zone=XX' },
  { path: '/v1/intensity/latest?zone=DE&zone=FR' },
  { path: '/v1/intensity/latest', headers: { 'accept-encoding': 'br' } },
  { path: '/v1/intensity/latest', headers: { 'accept-encoding': 'gzip' } },
  { path: '/v1/intensity?zone=DE' },
  { path: '/v1/intensity?zone=de&from=2026-11-01&to=2026-11-03' },
  { path: '/v1/intensity?zone=DE&from=2026-11-20T10:00:00%2B01:00' },
  { path: '/v1/intensity?zone=DE&to=2026-11-20T10:00Z' },
  { path: '/v1/intensity?zone=DE&from=2026-11-20T13:00:00.500Z&to=2026-11-21T00:00:00Z' },
  { path: '/v1/intensity?zone=FR&from=2020-01-01' },
  {
    path: '/v1/intensity?zone=FR&from=2020-01-01&to=2026-11-21',
    headers: { 'accept-encoding': 'gzip, br' },
  },
  { path: '/v1/intensity?zone=GB' },
  { path: '/v1/intensity?zone=US&from=2026-11-19' },
  { path: '/v1/intensity?zone=IE' },
  { path: '/v1/intensity?zone=NL&from=2026-11-01' },
  { path: '/v1/intensity?zone=DE&from=2030-01-01&to=2030-01-02' },
  { path: '/v1/intensity?zone=DE&unknown=1' },
  { path: '/v1/intensity?zone=XX' },
  { path: '/v1/intensity?zone=DE&from=yesterday' },
  { path: '/v1/intensity?zone=DE&to=2026-13-01' },
  { path: '/v1/intensity?zone=DE&from=2026-11-21&to=2026-11-20' },
  { path: '/v1/intensity?zone=DE&from=2026-11-20&from=2026-11-19' },
  { path: '/v1/intensity?zone=DE&zone=FR' },
  { path: '/v1/nope' },
  { path: '/nope' },
  { method: 'HEAD', path: '/v1/intensity?zone=DE' },
  { method: 'HEAD', path: '/v1/intensity/latest' },
  {
    method: 'OPTIONS',
    path: '/v1/intensity',
    headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' },
  },
  { method: 'POST', path: '/v1/intensity/latest' },
  { method: 'POST', path: '/v1/nope' },
  { path: '/v1/intensity/latest', headers: { 'if-none-match': '"not-it"' } },
];
