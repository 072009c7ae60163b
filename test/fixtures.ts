import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The shared folder sits beside the checkout (`../shared`), in CI as on every machine. */
export const SHARED_DIR = fileURLToPath(new URL('../../shared/', import.meta.url));

export type FixtureSource = 'europe-tso' | 'us-agency' | 'uk-operator';

/** Path of a real recorded upstream payload in ../shared/upstreams/fixtures/<source>/. */
export function fixturePath(source: FixtureSource, file: string): string {
  return fileURLToPath(
    new URL(`../../shared/upstreams/fixtures/${source}/${file}`, import.meta.url),
  );
}

export function readFixture(source: FixtureSource, file: string): string {
  return readFileSync(fixturePath(source, file), 'utf8');
}
