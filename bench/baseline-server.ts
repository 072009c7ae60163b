/**
 * The baseline: a bare node:http server that replays gridco2's captured responses verbatim, the
 * fastest any Node server can send the same bytes. Run as its own process:
 *   node --import tsx bench/baseline-server.ts <captures.json>
 * Prints `listening <port>` once it accepts connections on 127.0.0.1.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { CapturedResponse } from './capture.js';

const capturesFile = process.argv[2];
if (!capturesFile) throw new Error('usage: baseline-server.ts <captures.json>');
const captures = JSON.parse(readFileSync(capturesFile, 'utf8')) as CapturedResponse[];

const responses = new Map(
  captures.map((captured) => [
    captured.path,
    {
      status: captured.status,
      // The flat [name, value, ...] form keeps gridco2's order, spelling and repeated names.
      headers: captured.headers.flat(),
      body: Buffer.from(captured.bodyBase64, 'base64'),
    },
  ]),
);

const server = http.createServer((request, response) => {
  const found = responses.get(request.url ?? '');
  if (!found) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(found.status, found.headers).end(found.body);
});

const keepAliveSeconds = captures.find(
  (captured) => captured.keepAliveSeconds !== null,
)?.keepAliveSeconds;
if (keepAliveSeconds) server.keepAliveTimeout = keepAliveSeconds * 1000;

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (typeof address === 'object' && address) console.log(`listening ${address.port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
