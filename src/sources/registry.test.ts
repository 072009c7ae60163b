import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { UPSTREAMS } from './registry.js';
import { SOURCES } from '../core/sources.js';

describe('the upstream registry', () => {
  it('has one entry for every source of the core, and nothing else', () => {
    expect(Object.keys(UPSTREAMS)).toEqual([...SOURCES]);
  });

  it('names each environment variable once', () => {
    const variables = SOURCES.flatMap((source) => {
      const { baseUrl, credential } = UPSTREAMS[source].settings;
      return [baseUrl.variable, ...(credential ? [credential.variable] : [])];
    });
    expect(variables).toEqual([
      'ENTSOE_BASE_URL',
      'ENTSOE_TOKEN',
      'EIA_BASE_URL',
      'EIA_API_KEY',
      'NESO_BASE_URL',
    ]);
  });

  it('gives configuration its defaults', () => {
    const { sources } = loadConfig({});
    for (const source of SOURCES) {
      expect(sources[source]).toEqual({
        baseUrl: UPSTREAMS[source].settings.baseUrl.default,
        credential: null,
      });
    }
  });
});
