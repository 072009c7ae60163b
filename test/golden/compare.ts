import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { GoldenResponse } from './record.js';

const recorded = JSON.parse(
  readFileSync(new URL('v1-responses.json', import.meta.url), 'utf8'),
) as GoldenResponse[];

function isTruncatedHistory(response: GoldenResponse): boolean {
  const body = Buffer.from(response.body, 'base64').toString('utf8');
  return body !== '' && (JSON.parse(body) as { truncated?: boolean }).truncated === true;
}

/**
 * Asserts `answers` are the recorded ones: status, headers other than Date, body bytes. The one
 * change allowed is the extensions' section 0: a truncated history also carries `Link` (and
 * exposes it to CORS).
 */
export function expectGoldenAnswers(answers: readonly GoldenResponse[]): void {
  expect(answers.length).toBe(recorded.length);
  let links = 0;
  answers.forEach((answer, index) => {
    const before = recorded[index]!;
    const label = `${before.request.method ?? 'GET'} ${before.request.path}`;
    expect(answer.request, label).toEqual(before.request);
    expect(answer.status, label).toBe(before.status);
    const { link, ...headers }: Record<string, string> = { ...answer.headers };
    if (link !== undefined) {
      links++;
      expect(isTruncatedHistory(before), label).toBe(true);
      expect(link, label).toMatch(/^<\/v1\/intensity\?[^>]*from=\d{4}-[^>]*>; rel="next"$/);
      expect(headers['access-control-expose-headers'], label).toMatch(/, Link$/);
      headers['access-control-expose-headers'] = headers['access-control-expose-headers']!.replace(
        /, Link$/,
        '',
      );
    }
    expect(headers, label).toEqual(before.headers);
    expect(Buffer.from(answer.body, 'base64').toString('latin1'), label).toBe(
      Buffer.from(before.body, 'base64').toString('latin1'),
    );
  });
  expect(links).toBe(
    recorded.filter((response) => response.status === 200 && isTruncatedHistory(response)).length,
  );
}
