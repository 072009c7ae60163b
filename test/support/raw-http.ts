import { connect } from 'node:net';

/** One HTTP/1.1 response read off a raw socket. */
export interface RawResponse {
  readonly status: number;
  /** Lower-case names; a repeated header keeps its last value. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export interface Exchange {
  readonly responses: RawResponse[];
  /** Bytes after the last complete response (a response cut by a closed connection). */
  readonly leftover: number;
}

/**
 * Writes `chunks` to a fresh connection (pausing between them, so each may arrive as its own TCP
 * segment) and reads until the server closes it or `idleMs` pass without data. The responses
 * are parsed knowing which requests were HEAD (their responses have no body).
 */
export function exchange(
  url: string,
  chunks: readonly (string | Buffer)[],
  headRequests: readonly boolean[],
  idleMs = 5_000,
): Promise<Exchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    const socket = connect({ host: hostname, port: Number(port) });
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(parseResponses(Buffer.concat(received), headRequests));
    };
    socket.setTimeout(idleMs, finish);
    socket.on('data', (data) => received.push(data));
    socket.on('close', finish);
    socket.on('error', finish);
    const writeChunks = async () => {
      for (const chunk of chunks) {
        if (socket.destroyed) return;
        socket.write(chunk);
        if (chunks.length > 1) await new Promise((next) => setImmediate(next));
      }
    };
    socket.on('connect', () => void writeChunks());
  });
}

/** Splits a byte stream into HTTP/1.1 responses (Content-Length or chunked; interim 1xx skipped). */
function parseResponses(data: Buffer, headRequests: readonly boolean[]): Exchange {
  const responses: RawResponse[] = [];
  let offset = 0;
  while (offset < data.length) {
    const end = data.indexOf('\r\n\r\n', offset);
    if (end < 0) break;
    const [statusLine = '', ...lines] = data.subarray(offset, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
    if (!Number.isFinite(status)) break;
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let position = end + 4;
    if (status < 200) {
      offset = position;
      continue;
    }
    const head = headRequests[responses.length] ?? false;
    let body: Buffer = Buffer.alloc(0);
    if (!head && status !== 204 && status !== 304) {
      if (headers['transfer-encoding'] === 'chunked') {
        const parts: Buffer[] = [];
        for (;;) {
          const lineEnd = data.indexOf('\r\n', position);
          if (lineEnd < 0) return { responses, leftover: data.length - offset };
          const size = parseInt(data.subarray(position, lineEnd).toString('latin1'), 16);
          position = lineEnd + 2;
          if (size === 0) {
            position += 2;
            break;
          }
          parts.push(data.subarray(position, position + size));
          position += size + 2;
        }
        body = Buffer.concat(parts);
      } else {
        const length = Number(headers['content-length'] ?? data.length - position);
        if (position + length > data.length) break;
        body = data.subarray(position, position + length);
        position += length;
      }
    }
    responses.push({ status, headers, body });
    offset = position;
  }
  return { responses, leftover: data.length - offset };
}
