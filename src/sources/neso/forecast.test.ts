import { describe, expect, it } from 'vitest';
import { readFixture } from '../../../test/fixtures.js';
import { findZone, type Zone } from '../../core/zones.js';
import { nesoStoredForecasts } from './index.js';
import { parseIntensity } from './parse.js';

const T = (text: string) => Date.parse(text) / 1000;
const GB = findZone('GB') as Zone;

describe('NESO fw48h as stored forecasts (the recorded reply, fetched at 12:01Z)', () => {
  const parsed = parseIntensity(
    readFixture('uk-operator', 'neso_national_fw48h_2023-03-14T1200Z_to_2023-03-16T1200Z.json'),
  );
  if (parsed.kind !== 'half-hours') throw new Error(parsed.kind);

  it('stores all 96 half hours as uk-operator:fw48h, issued at the half hour of the fetch', () => {
    const stored = nesoStoredForecasts(GB, parsed.halfHours, T('2023-03-14T12:01Z'));
    expect(stored).toHaveLength(96);
    expect(stored[0]).toEqual({
      zone: 'GB',
      ts: T('2023-03-14T12:00Z'),
      kind: 'uk-operator:fw48h',
      issuedAt: T('2023-03-14T12:00Z'),
      value: 93,
    });
    expect(stored.at(-1)?.ts).toBe(T('2023-03-16T11:30Z'));
    expect(new Set(stored.map(({ issuedAt }) => issuedAt))).toEqual(
      new Set([T('2023-03-14T12:00Z')]),
    );
    // The 17:00Z slot, 177 in this issue (it read 152 the next night: forecasts are re-issued).
    expect(stored.find(({ ts }) => ts === T('2023-03-14T17:00Z'))?.value).toBe(177);
  });

  it('a half hour already over at the fetch is not a forecast any more', () => {
    const stored = nesoStoredForecasts(GB, parsed.halfHours, T('2023-03-14T12:31Z'));
    expect(stored).toHaveLength(95);
    expect(stored[0]?.ts).toBe(T('2023-03-14T12:30Z'));
  });
});
