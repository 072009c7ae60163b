import { describe, expect, it } from 'vitest';
import { entsoeA11Url, entsoeA75Url, entsoePeriod } from './request.js';

const at = (iso: string) => Date.parse(iso) / 1000;

describe('entsoeA75Url', () => {
  it('asks for A75, realised, one area, whole UTC hours (upstreams README §1.1)', () => {
    const window = { fromTs: at('2025-10-21T12:00Z'), toTs: at('2025-10-24T12:00Z') };
    expect(
      entsoeA75Url('https://web-api.tp.entsoe.eu/api', 'tok', '10YFI-1--------U', window),
    ).toBe(
      'https://web-api.tp.entsoe.eu/api?securityToken=tok&documentType=A75&processType=A16' +
        '&in_Domain=10YFI-1--------U&periodStart=202510211200&periodEnd=202510241200',
    );
  });

  it('encodes the token', () => {
    const window = { fromTs: at('2025-01-01T00:00Z'), toTs: at('2025-01-01T01:00Z') };
    expect(entsoeA75Url('http://h/api', 'a+b/c=', '10Y1001C--00096J', window)).toContain(
      'securityToken=a%2Bb%2Fc%3D&',
    );
  });
});

describe('entsoeA11Url', () => {
  it('asks for A11, one direction: the flow out of out_Domain into in_Domain, no processType', () => {
    const window = { fromTs: at('2023-12-20T17:00Z'), toTs: at('2023-12-23T17:00Z') };
    const direction = { outEic: '10YDK-1--------W', inEic: '10YGB----------A' };
    // The URL Electricity Maps' test registers for DK1 -> GB (flows.md §1.1), with our window.
    expect(entsoeA11Url('https://web-api.tp.entsoe.eu/api', 'tok', direction, window)).toBe(
      'https://web-api.tp.entsoe.eu/api?securityToken=tok&documentType=A11' +
        '&in_Domain=10YGB----------A&out_Domain=10YDK-1--------W' +
        '&periodStart=202312201700&periodEnd=202312231700',
    );
  });
});

describe('entsoePeriod', () => {
  it.each([
    ['2025-01-01T00:00Z', '202501010000'],
    ['2024-02-29T23:00Z', '202402292300'],
  ])('%s → %s', (iso, period) => {
    expect(entsoePeriod(at(iso))).toBe(period);
  });

  it('refuses anything but whole hours', () => {
    expect(() => entsoePeriod(at('2025-01-01T00:15Z'))).toThrow(RangeError);
  });
});
