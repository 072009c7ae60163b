import { ConfigError } from '../config.js';

/**
 * Runs a command; a failure prints one clear line (no stack for configuration mistakes) and
 * exits non-zero.
 */
export async function exitOnError(run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const prefix = error instanceof ConfigError ? 'configuration error' : 'error';
    process.stderr.write(`gridco2: ${prefix}: ${message}\n`);
    process.exitCode = 1;
  }
}
