import { describe, expect, it } from 'vitest';
import { round1, round3, toTenths, wholeAsServed } from './units.js';

describe('round1', () => {
  it('rounds an exact decimal tie up, where toFixed rounds the binary double down', () => {
    expect((2491 / 20).toFixed(1)).toBe('124.5');
    expect(round1(2491 / 20)).toBe(124.6);
    expect(round1(0.15)).toBe(0.2);
    expect(round1(100.45)).toBe(100.5);
  });

  it('rounds every other value to the nearest tenth', () => {
    expect(round1(100.46)).toBe(100.5);
    expect(round1(100.44)).toBe(100.4);
    expect(round1(300.04567)).toBe(300);
    expect(round1(1e-7)).toBe(0);
  });

  it('rounds halves away from zero', () => {
    expect(round1(-1.25)).toBe(-1.3);
    expect(toTenths(-2491 / 20)).toBe(-1246);
  });

  it('gives tenths equal to ten times the rounded value, over every band', () => {
    for (let hundredths = 0; hundredths < 20_000; hundredths++) {
      const value = hundredths / 100;
      expect(toTenths(value)).toBe(Math.round(round1(value) * 10));
      // Printed with 1 decimal at most, so JSON carries exactly what was rounded.
      expect(String(round1(value))).toMatch(/^\d+(\.\d)?$/);
    }
  });

  it('agrees with rounding the printed decimal for values near and far from a tie, at every magnitude', () => {
    // The reference: the printed form with its decimal point shifted, then rounded half up.
    const reference = (value: number) => {
      const printed = String(Math.abs(value));
      const tenths = Math.round(
        printed.includes('e') ? Math.abs(value) * 10 : Number(`${printed}e1`),
      );
      return value < 0 ? -tenths : tenths;
    };
    let seed = 1;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const values: number[] = [];
    for (let i = 0; i < 20_000; i++) {
      const magnitude = 10 ** Math.floor(random() * 12 - 3);
      const hundredths = Math.floor(random() * 100_000);
      // Exact ties (x.x5), the doubles either side of them, and arbitrary values.
      const tie = (hundredths - (hundredths % 10) + 5) / 100;
      values.push(tie, tie + Number.EPSILON * tie, tie - Number.EPSILON * tie);
      values.push(random() * magnitude, -random() * magnitude, (hundredths / 100) * magnitude);
    }
    for (const value of values) expect(toTenths(value), String(value)).toBe(reference(value));
  });

  it('leaves values it cannot round as they are', () => {
    expect(round1(Number.NaN)).toBeNaN();
    expect(toTenths(Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('round3', () => {
  it('rounds an exact decimal tie at the third decimal up, where toFixed rounds it down', () => {
    expect((1.0005).toFixed(3)).toBe('1.000');
    expect(round3(1.0005)).toBe(1.001);
    expect(round3(-1.0005)).toBe(-1.001);
    expect(round3(0.12345)).toBe(0.123);
    expect(round3(2 / 3)).toBe(0.667);
  });

  it('agrees with rounding the printed decimal over every band of ten-thousandths', () => {
    for (let units = 0; units < 20_000; units++) {
      const value = units / 10_000;
      const printed = Math.round(Number(`${String(value)}e3`)) / 1000;
      expect(round3(value)).toBe(printed);
    }
  });
});

describe('wholeAsServed', () => {
  it('rounds the served tenth, not the raw value, to a whole number', () => {
    expect(Math.round(100.46)).toBe(100);
    expect(wholeAsServed(100.46)).toBe(101);
    expect(wholeAsServed(2491 / 20)).toBe(125);
    expect(wholeAsServed(100.44)).toBe(100);
  });
});
