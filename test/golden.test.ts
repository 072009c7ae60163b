import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { answerGoldenRequests, type GoldenResponse } from './golden/record.js';

/**
 * Requests that use no extension get exactly the answer of the release before the extensions
 * (recorded in test/golden/v1-responses.json at commit a592c6c): status, headers other than Date,
 * and body bytes, from the store and from memory.
 */
const recorded = JSON.parse(
  readFileSync(new URL('golden/v1-responses.json', import.meta.url), 'utf8'),
) as GoldenResponse[];

describe.each(['off', 'ready'] as const)('the /v1 contract, reading cache %s', (cache) => {
  it('answers every recorded request exactly as the previous release did', async () => {
    const answers = await answerGoldenRequests(cache);
    expect(answers.length).toBe(recorded.length);
    answers.forEach((answer, index) => {
      const before = recorded[index]!;
      const label = `${before.request.method ?? 'GET'} ${before.request.path}`;
      expect(answer.request, label).toEqual(before.request);
      expect(answer.status, label).toBe(before.status);
      expect(answer.headers, label).toEqual(before.headers);
      expect(Buffer.from(answer.body, 'base64').toString('latin1'), label).toBe(
        Buffer.from(before.body, 'base64').toString('latin1'),
      );
    });
  });
});
