import { describe, it } from 'vitest';
import { expectGoldenAnswers } from './golden/compare.js';
import { answerGoldenRequests } from './golden/record.js';

/**
 * Requests that use no extension get exactly the answer of the release before the extensions
 * (recorded in test/golden/v1-responses.json at commit a592c6c): status, headers other than Date,
 * and body bytes, from the store and from memory. The one change allowed is the extensions'
 * section 0: a truncated history also carries `Link: <...>; rel="next"` (and exposes it to CORS).
 */

describe.each(['off', 'ready'] as const)('the /v1 contract, reading cache %s', (cache) => {
  it('answers every recorded request exactly as the previous release did', async () => {
    expectGoldenAnswers(await answerGoldenRequests(cache));
  });
});
