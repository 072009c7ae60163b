import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';

/**
 * Clients of /v1/export from a loopback address of their own (Linux routes all of 127/8 to lo),
 * so that each is its own client without a trusted proxy: test/export-slots.test.ts and
 * bench/export-slots.ts.
 */

/**
 * Opens `path` from `address` on a raw socket (added to `sockets`, for the caller to destroy)
 * and resolves with its status once the first bytes came.
 */
export function openExport(
  port: number,
  address: string,
  path: string,
  sockets: Socket[],
): Promise<{ socket: Socket; status: number }> {
  const socket = connect({ host: '127.0.0.1', port, localAddress: address });
  sockets.push(socket);
  socket.on('error', () => undefined);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  return new Promise((resolve, reject) => {
    socket.once('readable', () => {
      const head = (socket.read(12) as Buffer | null)?.toString() ?? '';
      resolve({ socket, status: Number(head.slice(9, 12)) });
    });
    socket.once('close', () => reject(new Error(`closed before answering ${address}`)));
  });
}

/** From now on reads nothing: the kernel buffers fill, then the socket takes nothing. */
export const neverRead = (socket: Socket) => socket.pause();

/** Reads 1 KiB a second until the socket closes. */
export const readSlowly = (socket: Socket) => {
  const timer = setInterval(() => socket.read(1024), 1000);
  socket.once('close', () => clearInterval(timer));
};

/** A whole export from `address` read as fast as it comes: status and byte count. */
export function downloadExport(
  port: number,
  address: string,
  path: string,
): Promise<{ status: number; bytes: number; ended: boolean; retryAfter?: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, localAddress: address });
    req.on('response', (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () =>
        resolve({
          status: response.statusCode!,
          bytes,
          ended: true,
          retryAfter: response.headers['retry-after'],
        }),
      );
      response.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
