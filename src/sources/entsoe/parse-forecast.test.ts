import { describe, expect, it } from 'vitest';
import { readFixture } from '../../../test/fixtures.js';
import { periodsXml } from '../../../test/support/entsoe-xml.js';
import { findZone, type Zone } from '../../core/zones.js';
import { entsoeStoredForecasts, keepLatestRevision } from './index.js';
import {
  parseEntsoeForecast,
  type EntsoeForecastQuantity,
  type EntsoeForecastResult,
  type ForecastInterval,
} from './parse-forecast.js';

/**
 * Every recorded forecast payload of test/fixtures/upstreams/europe-tso. Expected values were
 * read off the XML by hand (Period starts, Point positions and quantities).
 */

const T = (text: string) => Date.parse(text) / 1000;
const H = 3600;
const parse = (file: string) => parseEntsoeForecast(readFixture('europe-tso', file));

function forecastOf(result: EntsoeForecastResult) {
  if (result.kind !== 'forecast') throw new Error(`expected a forecast, got ${result.kind}`);
  return result;
}

function series(result: EntsoeForecastResult, eic: string, quantity: EntsoeForecastQuantity) {
  const intervals = forecastOf(result).areas.get(eic)?.get(quantity);
  if (!intervals) throw new Error(`no ${quantity} for ${eic}`);
  return intervals;
}

const at = (intervals: readonly ForecastInterval[], iso: string) =>
  intervals.find(({ start }) => start === T(iso));

describe('parseEntsoeForecast on the recorded payloads', () => {
  it('A69 BE day-ahead: two CET days for a one-day request, wind = B18 + B19 per hour', () => {
    const result = parse('entsoe_A69_BE_2015-12-30T2300Z_PT60M_day-ahead-A01_2days.xml');
    expect(forecastOf(result)).toMatchObject({
      documentType: 'A69',
      revision: 1,
      createdAt: T('2022-08-10T10:04:01Z'),
      dropped: [],
      ignored: [],
    });
    const wind = series(result, '10YBE----------2', 'wind');
    const solar = series(result, '10YBE----------2', 'solar');
    // 2 days x 24 hours, from 2015-12-30T23:00Z (the day before the asked window) on.
    expect(wind).toHaveLength(48);
    expect(solar).toHaveLength(48);
    expect(wind[0]).toEqual({
      start: T('2015-12-30T23:00Z'),
      end: T('2015-12-31T00:00Z'),
      mw: 650 + 826,
      marketDayStart: T('2015-12-30T23:00Z'),
    });
    expect(at(wind, '2015-12-31T00:00Z')?.mw).toBe(630 + 803);
    // Day 1 position 24 and day 2 position 1, across the merge of the daily TimeSeries.
    expect(at(wind, '2015-12-31T22:00Z')).toMatchObject({
      mw: 558 + 581,
      marketDayStart: T('2015-12-30T23:00Z'),
    });
    expect(at(wind, '2015-12-31T23:00Z')).toMatchObject({
      mw: 565 + 643,
      marketDayStart: T('2015-12-31T23:00Z'),
    });
    expect(wind.at(-1)).toMatchObject({ start: T('2016-01-01T22:00Z'), mw: 564 + 481 });
    // Solar B16 (businessType A94): position 10 of day 1 is 08:00Z, 153 MW; night hours 0.
    expect(at(solar, '2015-12-31T08:00Z')?.mw).toBe(153);
    expect(at(solar, '2015-12-31T09:00Z')?.mw).toBe(440);
    expect(at(solar, '2015-12-30T23:00Z')?.mw).toBe(0);
  });

  it('A69 BE as stored: filtered to the asked window, issued the afternoon before each day', () => {
    const result = forecastOf(
      parse('entsoe_A69_BE_2015-12-30T2300Z_PT60M_day-ahead-A01_2days.xml'),
    );
    // BE is not one of our zones: a stand-in zone with BE's EIC.
    const zone = { ...(findZone('NL') as Zone), code: 'BE', upstreamId: '10YBE----------2' };
    const window = { fromTs: T('2015-12-31T22:00Z'), toTs: T('2016-01-01T22:00Z') };
    const stored = entsoeStoredForecasts(result, zone, window, T('2022-08-10T10:04:01Z'));
    const wind = stored.filter(({ kind }) => kind === 'europe-tso:wind');
    expect(wind).toHaveLength(24);
    expect(stored.filter(({ kind }) => kind === 'europe-tso:solar')).toHaveLength(24);
    expect(wind[0]).toEqual({
      zone: 'BE',
      ts: T('2015-12-31T22:00Z'),
      kind: 'europe-tso:wind',
      // Day of 30/31 December: it starts 2015-12-30T23:00Z, published 6 h before.
      issuedAt: T('2015-12-30T17:00Z'),
      value: 558 + 581,
    });
    expect(wind[1]).toMatchObject({ ts: T('2015-12-31T23:00Z'), issuedAt: T('2015-12-31T17:00Z') });
    expect(wind.at(-1)?.ts).toBe(T('2016-01-01T21:00Z'));
  });

  it('A69 FI day-ahead: PT15M kept at 15 minutes, CET days at 23:00Z, onshore wind only', () => {
    const result = parse('entsoe_A69_FI_2024-02-07T2300Z_PT15M_day-ahead-A01_3days.xml');
    const wind = series(result, '10YFI-1--------U', 'wind');
    expect(wind).toHaveLength(3 * 96);
    expect(wind[0]).toEqual({
      start: T('2024-02-07T23:00Z'),
      end: T('2024-02-07T23:15Z'),
      mw: 2224,
      marketDayStart: T('2024-02-07T23:00Z'),
    });
    expect(wind[1]?.mw).toBe(2223);
    expect(at(wind, '2024-02-08T22:45Z')?.mw).toBe(1549);
    expect(at(wind, '2024-02-08T23:00Z')).toMatchObject({
      mw: 1727,
      marketDayStart: T('2024-02-08T23:00Z'),
    });
    expect(wind.at(-1)).toMatchObject({ start: T('2024-02-10T22:45Z'), mw: 1362 });
    expect(series(result, '10YFI-1--------U', 'solar')).toHaveLength(3 * 96);
  });

  it('A69 FI current (A18) and intraday (A40) are not day-ahead: refused, never stored', () => {
    expect(parse('entsoe_A69_FI_2024-02-07T2200Z_PT15M_current-A18_partial-last-day.xml')).toEqual({
      kind: 'not-day-ahead',
      documentType: 'A69',
      processType: 'A18',
    });
    expect(
      parse('entsoe_A69_FI_2024-02-07T2200Z_PT15M_intraday-A40_partial-last-period.xml'),
    ).toEqual({
      kind: 'not-day-ahead',
      documentType: 'A69',
      processType: 'A40',
    });
  });

  // Hourly series of one quantity: how many hours, the first and the last, and MW between.
  it.each([
    {
      title:
        'A71 CZ: only the in-series is generation, the out-series (scheduled consumption) is ignored',
      file: 'entsoe_A71_CZ_2015-12-30T2300Z_PT60M_day-ahead-A01_in-and-out.xml',
      area: '10YCZ-CEPS-----N',
      quantity: 'generation',
      ignored: 2,
      hours: 48,
      first: ['2015-12-30T23:00Z', 7416],
      between: { '2015-12-31T00:00Z': 6979, '2015-12-31T22:00Z': 7677, '2015-12-31T23:00Z': 6873 },
      last: ['2016-01-01T22:00Z', 6957],
    },
    {
      title: 'A71 SE-3: three days of in-series only',
      file: 'entsoe_A71_SE-3_2023-12-27T2300Z_PT60M_day-ahead-A01_3days.xml',
      area: '10Y1001A1001A46L',
      quantity: 'generation',
      ignored: 0,
      hours: 72,
      first: ['2023-12-27T23:00Z', 9958],
      between: { '2023-12-28T23:00Z': 9693 },
      last: ['2023-12-30T22:00Z', 9598],
    },
    {
      title: 'A65 DK-2: load from the outBiddingZone series, four days',
      file: 'entsoe_A65_DK-2_2023-12-27T2300Z_PT60M_day-ahead-A01_4days.xml',
      area: '10YDK-2--------M',
      quantity: 'load',
      ignored: 0,
      hours: 96,
      first: ['2023-12-27T23:00Z', 1554],
      between: { '2023-12-28T23:00Z': 1454, '2023-12-30T23:00Z': 1372 },
      last: ['2023-12-31T22:00Z', 1432],
    },
  ] as const)('$title', ({ file, area, quantity, ignored, hours, first, between, last }) => {
    const result = parse(file);
    expect(forecastOf(result).ignored).toHaveLength(ignored);
    expect(forecastOf(result).dropped).toEqual([]);
    // The area carries this quantity and no other.
    expect([...forecastOf(result).areas.get(area)!.keys()]).toEqual([quantity]);
    const intervals = series(result, area, quantity);
    expect(intervals).toHaveLength(hours);
    expect(intervals[0]).toMatchObject({ start: T(first[0]), mw: first[1] });
    for (const [iso, mw] of Object.entries(between)) expect(at(intervals, iso)?.mw).toBe(mw);
    expect(intervals.at(-1)).toMatchObject({ start: T(last[0]), mw: last[1] });
  });

  it('A65 CZ 2016: 366 daily series merged, DST days of 23 and 25 hours', () => {
    const result = parse('entsoe_A65_CZ_2016_PT60M_day-ahead-A01_full-year_DST.xml');
    const load = series(result, '10YCZ-CEPS-----N', 'load');
    expect(load).toHaveLength(8784);
    expect(load[0]).toMatchObject({ start: T('2015-12-30T23:00Z'), mw: 6102 });
    expect(load.at(-1)).toMatchObject({ start: T('2016-12-31T22:00Z'), mw: 6590 });
    const day = (dayStart: string) =>
      load.filter(({ marketDayStart }) => marketDayStart === T(dayStart));
    // 27 March: 23 hours, the day ends at 22:00Z; 30 October: 25 hours, ends at 23:00Z.
    expect(day('2016-03-26T23:00Z')).toHaveLength(23);
    expect(day('2016-03-26T23:00Z').at(-1)).toMatchObject({
      start: T('2016-03-27T21:00Z'),
      mw: 6100,
    });
    expect(at(load, '2016-03-27T22:00Z')?.marketDayStart).toBe(T('2016-03-27T22:00Z'));
    expect(day('2016-10-29T22:00Z')).toHaveLength(25);
    expect(day('2016-10-29T22:00Z')[0]?.mw).toBe(5734);
    expect(day('2016-10-29T22:00Z').at(-1)).toMatchObject({
      start: T('2016-10-30T22:00Z'),
      mw: 6767,
    });
    // The hours run on through both changes; the one hole is a day the recording lacks
    // (no TimeSeries for the market day of 6 October 2016): a gap, never a zero.
    const holes = load.filter((interval, i) => i > 0 && interval.start !== load[i - 1]?.end);
    expect(holes.map(({ start }) => start)).toEqual([T('2016-10-06T22:00Z')]);
    expect(at(load, '2016-10-06T10:00Z')).toBeUndefined();
  });

  it('A65 DK-1 realised load (A16) is an actual, not a forecast: refused', () => {
    expect(parse('entsoe_A65_DK-1_2023-12-28T1500Z_PT60M_actual-A16_tail-missing.xml')).toEqual({
      kind: 'not-day-ahead',
      documentType: 'A65',
      processType: 'A16',
    });
  });

  it('Acknowledgements: "no matching data" is an empty result, a refusal is an upstream error', () => {
    expect(parse('entsoe_acknowledgement_A69-A18_CZ_no-matching-data.xml')).toMatchObject({
      kind: 'no-data',
      message: expect.stringMatching(
        /^No matching data found for Data item Current Generation Forecasts/,
      ),
    });
    expect(parse('entsoe_acknowledgement_no-matching-data.xml')).toMatchObject({ kind: 'no-data' });
    expect(parse('entsoe_acknowledgement_HTTP400_missing-parameter.xml')).toEqual({
      kind: 'upstream-error',
      code: '999',
      message: 'Mandatory parameter OutBiddingZone_Domain is missing or is empty.',
    });
  });

  it('a malformed, an empty and a foreign payload are invalid', () => {
    const half = readFixture(
      'europe-tso',
      'entsoe_A71_SE-3_2023-12-27T2300Z_PT60M_day-ahead-A01_3days.xml',
    );
    expect(parseEntsoeForecast(half.slice(0, half.length / 2)).kind).toBe('invalid-payload');
    expect(parseEntsoeForecast('').kind).toBe('invalid-payload');
    expect(parseEntsoeForecast('<html><body>Maintenance</body></html>').kind).toBe(
      'invalid-payload',
    );
    // An A75 is not a forecast document.
    expect(parse('entsoe_A75_FI_2023-05-08T0700Z_PT60M_A01.xml')).toMatchObject({
      kind: 'invalid-payload',
      detail: expect.stringMatching(/type A75/),
    });
  });
});

describe('parseEntsoeForecast on inline documents', () => {
  const doc = (series: string, extra = '') => `<?xml version="1.0" encoding="UTF-8"?>
<GL_MarketDocument xmlns="urn:iec62325.351:tc57wg16:451-6:generationloaddocument:3:0">
  <revisionNumber>3</revisionNumber><type>A69</type><process.processType>A01</process.processType>${extra}
  ${series}
</GL_MarketDocument>`;
  const ts = (psrType: string, periods: string, curveType = 'A01') => `<TimeSeries>
    <inBiddingZone_Domain.mRID codingScheme="A01">10YNO-2--------T</inBiddingZone_Domain.mRID>
    <quantity_Measure_Unit.name>MAW</quantity_Measure_Unit.name><curveType>${curveType}</curveType>
    <MktPSRType><psrType>${psrType}</psrType></MktPSRType>${periods}</TimeSeries>`;
  const period = (start: string, end: string, resolution: string, points: [number, string][]) =>
    periodsXml([{ start, end, resolution, points }]);

  it('A03 with a resolution change inside one TimeSeries (NO-2 2025): each Period holds its value', () => {
    const result = parseEntsoeForecast(
      doc(
        ts(
          'B16',
          period('2025-01-01T23:00Z', '2025-01-02T03:00Z', 'PT60M', [
            [1, '0'],
            [3, '17.13'],
          ]) + period('2025-01-02T03:00Z', '2025-01-02T04:00Z', 'PT15M', [[1, '5']]),
          'A03',
        ),
      ),
    );
    expect(forecastOf(result).revision).toBe(3);
    const solar = series(result, '10YNO-2--------T', 'solar');
    expect(
      solar.map(({ start, end, mw }) => [start - T('2025-01-01T23:00Z'), end - start, mw]),
    ).toEqual([
      [0, H, 0],
      [H, H, 0],
      [2 * H, H, 17.13],
      [3 * H, H, 17.13],
      [4 * H, 900, 5],
      [4 * H + 900, 900, 5],
      [4 * H + 1800, 900, 5],
      [4 * H + 2700, 900, 5],
    ]);
  });

  it('wind sums the types published; a type that has started and misses an hour drops it', () => {
    const result = parseEntsoeForecast(
      doc(
        ts(
          'B19',
          period('2025-09-09T22:00Z', '2025-09-10T02:00Z', 'PT60M', [
            [1, '10'],
            [2, '11'],
            [3, '12'],
            [4, '13'],
          ]),
        ) +
          // Offshore only from the second hour on, and without its fourth hour.
          ts(
            'B18',
            period('2025-09-09T23:00Z', '2025-09-10T02:00Z', 'PT60M', [
              [1, '100'],
              [2, '101'],
            ]),
          ),
      ),
    );
    const wind = series(result, '10YNO-2--------T', 'wind');
    expect(wind.map(({ start, mw }) => [start - T('2025-09-09T22:00Z'), mw])).toEqual([
      [0, 10],
      [H, 111],
      [2 * H, 113],
    ]);
    expect(forecastOf(result).dropped).toEqual([
      expect.stringMatching(/^wind 2025-09-10T01:00:00Z: not every published wind type/),
    ]);
  });

  it('gaps between Periods stay gaps; two values for one interval drop it', () => {
    const result = parseEntsoeForecast(
      doc(
        ts(
          'B16',
          period('2025-01-01T00:00Z', '2025-01-01T02:00Z', 'PT60M', [
            [1, '1'],
            [2, '2'],
          ]) + period('2025-01-01T05:00Z', '2025-01-01T06:00Z', 'PT60M', [[1, '5']]),
        ) + ts('B16', period('2025-01-01T01:00Z', '2025-01-01T02:00Z', 'PT60M', [[1, '9']])),
      ),
    );
    const solar = series(result, '10YNO-2--------T', 'solar');
    expect(solar.map(({ start, mw }) => [(start - T('2025-01-01T00:00Z')) / H, mw])).toEqual([
      [0, 1],
      [5, 5],
    ]);
  });
});

describe('keepLatestRevision', () => {
  it('keeps the higher revision of one interval, the later document on a tie', () => {
    const forecast = (value: number) => ({
      zone: 'NO-2',
      ts: 0,
      kind: 'europe-tso:wind' as const,
      issuedAt: -6 * H,
      value,
    });
    expect(
      keepLatestRevision([
        { revision: 3, forecasts: [forecast(3)] },
        { revision: 1, forecasts: [forecast(1)] },
      ]),
    ).toEqual([forecast(3)]);
    expect(
      keepLatestRevision([
        { revision: 2, forecasts: [forecast(2)] },
        { revision: 2, forecasts: [forecast(22)] },
      ]),
    ).toEqual([forecast(22)]);
  });
});
