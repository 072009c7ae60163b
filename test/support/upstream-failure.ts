import { expect } from 'vitest';
import { UpstreamError } from '../../src/sources/http.js';

/** The UpstreamError `promise` rejects with; the test fails if it resolves or rejects otherwise. */
export async function upstreamFailure(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}
