import fc from 'fast-check';
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

  const isoSecond = (epochSeconds: number) =>
    new Date(epochSeconds * 1000).toISOString().slice(0, 19) + 'Z';

  it('prints what toISOString prints, to the second, at the edges of years, months and leap days', () => {
    const edges = [
      '0000-01-01T00:00:00Z',
      '0000-02-29T12:00:00Z',
      '0000-03-01T00:00:00Z',
      '0001-01-01T00:00:00Z',
      '0099-12-31T23:59:59Z',
      '0100-03-01T00:00:00Z',
      '1582-10-15T00:00:00Z',
      '1899-12-31T23:59:59Z',
      '1900-02-28T23:59:59Z',
      '1900-03-01T00:00:00Z',
      '1969-12-31T23:59:59Z',
      '1970-01-01T00:00:01Z',
      '2000-02-29T23:59:59Z',
      '2000-03-01T00:00:00Z',
      '2024-02-29T00:00:00Z',
      '2038-01-19T03:14:08Z',
      '2100-02-28T23:59:59Z',
      '2100-03-01T00:00:00Z',
      '2400-02-29T00:00:00Z',
      '9999-12-31T23:59:59Z',
    ];
    for (const text of edges) expect(formatTs(Date.parse(text) / 1000)).toBe(text);
    // Every day's first and last second from 1900 to 2200: one assertion over all of them.
    const differing = [];
    const firstDay = Date.UTC(1900, 0, 1) / 86_400_000;
    for (let day = firstDay; day < Date.UTC(2200, 0, 1) / 86_400_000; day++) {
      for (const ts of [day * 86_400, day * 86_400 + 86_399]) {
        if (formatTs(ts) !== isoSecond(ts)) differing.push(ts);
      }
    }
    expect(differing).toEqual([]);
  });

  it('prints what toISOString prints for any whole second of years 0000 to 9999', () => {
    const first = Date.parse('0000-01-01T00:00:00Z') / 1000;
    const last = Date.parse('9999-12-31T23:59:59Z') / 1000;
    fc.assert(
      fc.property(fc.integer({ min: first, max: last }), (ts) => formatTs(ts) === isoSecond(ts)),
      { numRuns: 20_000 },
    );
  });

  it('prints what toISOString prints for fractions of a second and years past 9999', () => {
    for (const ts of [1.5, -0.0005, -1.5, 1_700_000_000.999, -62_167_219_201, 253_402_300_800]) {
      expect(formatTs(ts)).toBe(isoSecond(ts));
    }
    expect(() => formatTs(Number.NaN)).toThrow(RangeError);
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
