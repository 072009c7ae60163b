import { describe, expect, it } from 'vitest';
import { formatTs, parseInstant, splitWindow } from './time.js';

describe('parseInstant', () => {
  it.each([
    ['2026-11-21', '2026-11-21T00:00:00.000Z'],
    ['2026-11-21T13:00Z', '2026-11-21T13:00:00.000Z'],
    ['2026-11-21T13:00:00Z', '2026-11-21T13:00:00.000Z'],
    ['2026-11-21T13:00:00.5Z', '2026-11-21T13:00:00.500Z'],
    // Digits past the millisecond round up, so that resolveWindow's whole-second ceiling holds.
    ['2026-11-21T13:00:00.123456789Z', '2026-11-21T13:00:00.124Z'],
    ['2026-11-20T13:00:00.0001Z', '2026-11-20T13:00:00.001Z'],
    ['2026-11-20T13:00:00.1230000Z', '2026-11-20T13:00:00.123Z'],
    ['2026-11-21T14:00:00+01:00', '2026-11-21T13:00:00.000Z'],
    ['2026-11-21T08:30:00-04:30', '2026-11-21T13:00:00.000Z'],
    ['2026-11-21T13:00:00', '2026-11-21T13:00:00.000Z'],
    ['2026-11-21t13:00z', '2026-11-21T13:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29', '2000-02-29T00:00:00.000Z'],
  ])('reads %s as %s', (text, expected) => {
    expect(new Date(parseInstant(text)!).toISOString()).toBe(expected);
  });

  it('keeps years below 100 as written', () => {
    expect(new Date(parseInstant('0050-01-01')!).getUTCFullYear()).toBe(50);
  });

  it.each([
    '',
    'junk',
    '2026-11-21 13:00',
    '2026-13-01',
    '2026-00-10',
    '2026-02-29',
    '1900-02-29',
    '2026-04-31',
    '2026-11-21T24:00Z',
    '2026-11-21T13:60Z',
    '2026-11-21T13:00:60Z',
    '2026-11-21T13Z',
    '2026-11-21T13:00+0100',
    '2026-11-21T13:00+24:00',
    '1700000000',
    '21/11/2026',
    '+2026-11-21',
    '2026-11-21T13:00:00.Z',
  ])('rejects %j', (text) => {
    expect(parseInstant(text)).toBeUndefined();
  });
});

describe('formatTs', () => {
  it('prints second precision with Z', () => {
    expect(formatTs(Date.UTC(2026, 10, 21, 13) / 1000)).toBe('2026-11-21T13:00:00Z');
    expect(formatTs(0)).toBe('1970-01-01T00:00:00Z');
  });
});

describe('splitWindow', () => {
  it('cuts at the limit and keeps the remainder', () => {
    expect(splitWindow({ fromTs: 0, toTs: 250 }, 100)).toEqual([
      { fromTs: 0, toTs: 100 },
      { fromTs: 100, toTs: 200 },
      { fromTs: 200, toTs: 250 },
    ]);
    expect(splitWindow({ fromTs: 0, toTs: 100 }, 100)).toEqual([{ fromTs: 0, toTs: 100 }]);
    expect(splitWindow({ fromTs: 5, toTs: 5 }, 100)).toEqual([]);
  });
});
