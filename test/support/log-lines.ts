import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

/** A debug-level pino logger that keeps every line it writes, as JSON text, in `lines`. */
export function loggerInto(lines: string[]): Logger {
  return pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  );
}
