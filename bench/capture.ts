/**
 * What gridco2 answered to one scenario, captured with a real request, so that the baseline can
 * send the very same status, headers and body.
 */
import http from 'node:http';

export interface CapturedResponse {
  readonly path: string;
  readonly status: number;
  /** Header name and value pairs in the order and spelling gridco2 sent them. */
  readonly headers: readonly (readonly [string, string])[];
  /** gridco2's keep-alive timeout, so that the baseline keeps connections the same way. */
  readonly keepAliveSeconds: number | null;
  readonly bodyBase64: string;
}

// node:http writes these itself on every response (per connection or per second): replaying
// gridco2's copies would duplicate them.
const WRITTEN_BY_NODE = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

export interface HttpResponse {
  readonly status: number;
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
}

/**
 * A plain GET as wrk and autocannon send it: no Accept-Encoding, so that the capture is the
 * identity-encoded body the load generators will receive.
 */
export function get(url: string, agent: http.Agent, timeoutMs = 30_000): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent, timeout: timeoutMs }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          rawHeaders: response.rawHeaders,
          body: Buffer.concat(chunks),
        }),
      );
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`GET ${url} timed out`)));
    request.on('error', reject);
  });
}

const headerPairs = (rawHeaders: readonly string[]): [string, string][] => {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2)
    pairs.push([rawHeaders[i]!, rawHeaders[i + 1]!]);
  return pairs;
};

export async function captureResponse(
  baseUrl: string,
  path: string,
  agent: http.Agent,
): Promise<CapturedResponse> {
  const response = await get(baseUrl + path, agent);
  if (response.status !== 200) {
    throw new Error(
      `gridco2 answered ${path} with ${response.status}: ${response.body.toString()}`,
    );
  }
  const all = headerPairs(response.rawHeaders);
  const keepAlive = all.find(([name]) => name.toLowerCase() === 'keep-alive')?.[1];
  const timeout = keepAlive && /timeout=(\d+)/.exec(keepAlive)?.[1];
  return {
    path,
    status: response.status,
    headers: all.filter(([name]) => !WRITTEN_BY_NODE.has(name.toLowerCase())),
    keepAliveSeconds: timeout ? Number(timeout) : null,
    bodyBase64: response.body.toString('base64'),
  };
}

/**
 * Throws unless the baseline sends exactly the captured status, headers (but Date) and body.
 * Proves the two servers are compared on the same bytes.
 */
export async function verifyReplay(
  baseUrl: string,
  captured: CapturedResponse,
  agent: http.Agent,
): Promise<void> {
  const replayed = await get(baseUrl + captured.path, agent);
  const headersOf = (pairs: readonly (readonly [string, string])[]) =>
    JSON.stringify(pairs.filter(([name]) => name.toLowerCase() !== 'date'));
  const expected = headersOf([
    ...captured.headers,
    ...headerPairs(replayed.rawHeaders).filter(([name]) => WRITTEN_BY_NODE.has(name.toLowerCase())),
  ]);
  const problems = [
    replayed.status !== captured.status && `status ${replayed.status}`,
    headersOf(headerPairs(replayed.rawHeaders)) !== expected && 'headers differ',
    replayed.body.toString('base64') !== captured.bodyBase64 && 'body differs',
  ].filter(Boolean);
  if (problems.length > 0) {
    throw new Error(`baseline replay of ${captured.path} is not identical: ${problems.join(', ')}`);
  }
}
