import { describe, expect, it } from 'vitest';
import { isPlainObject, parseDecimal, parseJson } from './payload.js';

describe('parseDecimal', () => {
  it.each([
    [12, 12],
    [-3.5, -3.5],
    ['1743', 1743],
    ['-231', -231],
    [' 0.47973 ', 0.47973],
    ['1e3', 1000],
    ['.5', 0.5],
  ])('reads %j as %j', (input, expected) => {
    expect(parseDecimal(input)).toBe(expected);
  });

  it.each([
    null,
    undefined,
    '',
    ' ',
    '0x1F',
    'Infinity',
    'NaN',
    '12 MW',
    '1,5',
    NaN,
    Infinity,
    {},
    [],
  ])('refuses %j', (input) => {
    expect(parseDecimal(input)).toBeUndefined();
  });
});

describe('parseJson and isPlainObject', () => {
  it('reports malformed JSON as undefined instead of throwing', () => {
    expect(parseJson('<html>')).toBeUndefined();
    expect(parseJson('{"a":1}')).toEqual({ a: 1 });
  });

  it('accepts objects only', () => {
    expect([{}, [], null, 'x', 1].map(isPlainObject)).toEqual([true, false, false, false, false]);
  });
});
