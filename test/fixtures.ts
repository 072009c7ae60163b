import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type FixtureSource = 'europe-tso' | 'us-agency' | 'uk-operator';

/**
 * Path of a real recorded upstream payload, kept byte for byte in
 * test/fixtures/upstreams/<source>/ (provenance: SOURCES.md in each folder).
 */
function fixturePath(source: FixtureSource, file: string): string {
  return fileURLToPath(new URL(`fixtures/upstreams/${source}/${file}`, import.meta.url));
}

export function readFixture(source: FixtureSource, file: string): string {
  return readFileSync(fixturePath(source, file), 'utf8');
}
