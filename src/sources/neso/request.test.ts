import { describe, expect, it } from 'vitest';
import { splitWindow } from '../../core/time.js';
import { NESO_MAX_WINDOW_SECONDS, nesoGenerationUrl, nesoRangeUrl } from './request.js';

const at = (iso: string) => Date.parse(iso) / 1000;

describe('nesoRangeUrl', () => {
  it('puts UTC bounds in the path as YYYY-MM-DDThh:mmZ (README §3.1)', () => {
    const window = { fromTs: at('2023-03-13T12:00Z'), toTs: at('2023-03-14T12:30Z') };
    expect(nesoRangeUrl('https://api.carbonintensity.org.uk', window)).toBe(
      'https://api.carbonintensity.org.uk/intensity/2023-03-13T12:00Z/2023-03-14T12:30Z',
    );
  });
});

describe('nesoGenerationUrl', () => {
  it('asks /generation/{from}/{to} with the same UTC instants', () => {
    const window = { fromTs: at('2026-06-01T00:00Z'), toTs: at('2026-06-20T12:30Z') };
    expect(nesoGenerationUrl('https://api.carbonintensity.org.uk', window)).toBe(
      'https://api.carbonintensity.org.uk/generation/2026-06-01T00:00Z/2026-06-20T12:30Z',
    );
  });
});

describe.each([
  ['intensity', nesoRangeUrl],
  ['generation', nesoGenerationUrl],
])('/%s', (path, url) => {
  it('is asked at most 14 days at a time', () => {
    const pieces = splitWindow(
      { fromTs: at('2023-01-01T00:00Z'), toTs: at('2023-01-31T00:00Z') },
      NESO_MAX_WINDOW_SECONDS,
    ).map((window) => url('', window));
    expect(pieces).toEqual([
      `/${path}/2023-01-01T00:00Z/2023-01-15T00:00Z`,
      `/${path}/2023-01-15T00:00Z/2023-01-29T00:00Z`,
      `/${path}/2023-01-29T00:00Z/2023-01-31T00:00Z`,
    ]);
  });
});
