import { describe, expect, it } from 'vitest';
import { eiaFuelTypeUrl, eiaHour, eiaInterchangeUrl } from './request.js';

const at = (iso: string) => Date.parse(iso) / 1000;
/** A request for the first page of `window` with key `k`, at EIA's own base URL. */
const firstPage = (respondents: string[], fromIso: string, toIso: string) => ({
  baseUrl: 'https://api.eia.gov/v2',
  apiKey: 'k',
  respondents,
  window: { fromTs: at(fromIso), toTs: at(toIso) },
  offset: 0,
});

describe('eiaFuelTypeUrl', () => {
  it('turns hour starts [a, b) into the inclusive hour-ending labels a+1h … b (README §2.3)', () => {
    const url = eiaFuelTypeUrl({
      ...firstPage(['US48', 'PJM'], '2025-04-20T00:00Z', '2025-04-21T00:00Z'),
      apiKey: 'k&y',
      offset: 5000,
    });
    expect(url).toBe(
      'https://api.eia.gov/v2/electricity/rto/fuel-type-data/data/?api_key=k%26y' +
        '&frequency=hourly&data[0]=value&facets[respondent][]=US48&facets[respondent][]=PJM' +
        '&start=2025-04-20T01&end=2025-04-21T00&sort[0][column]=period&sort[0][direction]=asc' +
        '&offset=5000&length=5000',
    );
    // What a server reads back from it.
    const query = new URL(url).searchParams;
    expect(query.getAll('facets[respondent][]')).toEqual(['US48', 'PJM']);
    expect(query.get('api_key')).toBe('k&y');
  });

  it('asks a single hour as start = end', () => {
    const url = eiaFuelTypeUrl(firstPage(['CISO'], '2025-04-20T23:00Z', '2025-04-21T00:00Z'));
    expect(url).toContain('&start=2025-04-21T00&end=2025-04-21T00&');
  });
});

describe('eiaInterchangeUrl', () => {
  it('asks what the reporters give as fromba, sorted by period, reporter and neighbour', () => {
    const url = eiaInterchangeUrl(
      firstPage(['FPC', 'FPL'], '2020-01-06T05:00Z', '2020-01-07T06:00Z'),
    );
    expect(url).toBe(
      'https://api.eia.gov/v2/electricity/rto/interchange-data/data/?api_key=k' +
        '&frequency=hourly&data[0]=value&facets[fromba][]=FPC&facets[fromba][]=FPL' +
        '&start=2020-01-06T06&end=2020-01-07T06&sort[0][column]=period&sort[0][direction]=asc' +
        '&sort[1][column]=fromba&sort[1][direction]=asc&sort[2][column]=toba' +
        '&sort[2][direction]=asc&offset=0&length=5000',
    );
  });
});

describe('eiaHour', () => {
  it('formats YYYY-MM-DDTHH and refuses parts of hours', () => {
    expect(eiaHour(at('2025-04-21T03:00Z'))).toBe('2025-04-21T03');
    expect(() => eiaHour(at('2025-04-21T03:30Z'))).toThrow(RangeError);
  });
});
