import { describe, expect, it } from 'vitest';
import { readFixture } from '../../../test/fixtures.js';
import { periodsXml, type PeriodSpec } from '../../../test/support/entsoe-xml.js';
import { readingAt, spreadsheet } from '../../../test/support/spreadsheet.js';
import type { GenerationByCode } from '../../core/generation.js';
import { computeReadings } from '../../core/method.js';
import { PSR_TYPES } from '../../core/production-types.js';
import { findZone } from '../../core/zones.js';
import { parseA75, type A75Result } from './parse.js';

const T = (text: string) => Date.parse(text) / 1000;

const mean = (...values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

function generationOf(result: A75Result, eic: string): GenerationByCode {
  if (result.kind !== 'generation') throw new Error(`expected generation, got ${result.kind}`);
  const generation = result.areas.get(eic);
  if (!generation) throw new Error(`no area ${eic} in the document`);
  return generation;
}

function eicOf(zone: string): string {
  const found = findZone(zone);
  if (!found) throw new Error(`unknown zone ${zone}`);
  return found.upstreamId;
}

function computeFixture(file: string, zone: string) {
  const result = parseA75(readFixture('europe-tso', file));
  return { result, ...computeReadings(zone, generationOf(result, eicOf(zone)), PSR_TYPES) };
}

describe('parseA75 on recorded payloads', () => {
  it('FI 2023, PT60M A01, no solar series at all', () => {
    const { result, readings, quality } = computeFixture(
      'entsoe_A75_FI_2023-05-08T0700Z_PT60M_A01.xml',
      'FI',
    );
    expect(result).toMatchObject({ kind: 'generation', dropped: [] });
    expect(quality).toEqual({
      zone: 'FI',
      pointsStored: 48,
      incompleteHours: 0,
      clampedNegatives: 0,
      unknownCodes: [],
    });
    expect(readings[0]?.ts).toBe(T('2023-05-08T07:00Z'));
    expect(readings.at(-1)?.ts).toBe(T('2023-05-10T06:00Z'));
    // A type absent from the whole document contributes nothing and does not make hours incomplete.
    expect(readings.every(({ complete, mix }) => complete && !('solar' in (mix ?? {})))).toBe(true);

    // Position 6 of every series.
    const noon = readingAt(readings, '2023-05-08T12:00Z');
    expect(noon.value).toBeCloseTo(
      spreadsheet([
        ['B01 biomass', 562, 230],
        ['B04 gas', 232, 490],
        ['B05 hard coal', 154, 820],
        ['B06 oil', 0, 650],
        ['B08 peat', 131, 820],
        ['B11 run-of-river', 2189, 24],
        ['B14 nuclear', 3465, 12],
        ['B20 other', 43, 700],
        ['B15 other renewable', 2, 230],
        ['B17 waste', 7, 230],
        ['B19 wind onshore', 1187, 11],
      ]),
      9,
    );
    expect(noon.mix).toEqual({
      coal: 154 + 131,
      gas: 232,
      oil: 0,
      biomass: 562 + 2 + 7,
      hydro: 2189,
      nuclear: 3465,
      'wind-onshore': 1187,
      other: 43,
    });

    // Position 40.
    expect(readingAt(readings, '2023-05-09T22:00Z').value).toBeCloseTo(
      spreadsheet([
        ['B01', 552, 230],
        ['B04', 178, 490],
        ['B05', 112, 820],
        ['B06', 0, 650],
        ['B08', 124, 820],
        ['B11', 1296, 24],
        ['B14', 3460, 12],
        ['B20', 54, 700],
        ['B15', 3, 230],
        ['B17', 7, 230],
        ['B19', 3636, 11],
      ]),
      9,
    );
  });

  it('FI 2023 with one wind Point removed: that hour is incomplete, its partial mix kept', () => {
    const xml = readFixture('europe-tso', 'entsoe_A75_FI_2023-05-08T0700Z_PT60M_A01.xml');
    const [head, windSeries] = xml.split('<psrType>B19</psrType>');
    const gap = /<Point>\s*<position>6<\/position>\s*<quantity>1187<\/quantity>\s*<\/Point>/;
    expect(windSeries).toMatch(gap);
    const result = parseA75(`${head}<psrType>B19</psrType>${windSeries?.replace(gap, '')}`);
    const { readings, quality } = computeReadings(
      'FI',
      generationOf(result, eicOf('FI')),
      PSR_TYPES,
    );
    const noon = readingAt(readings, '2023-05-08T12:00Z');
    expect(noon.complete).toBe(false);
    expect(noon.mix).not.toHaveProperty('wind-onshore');
    expect(quality).toMatchObject({ pointsStored: 48, incompleteHours: 1 });
  });

  it('FI 2025, PT15M A03: omitted positions repeat, the last Point holds to the Period end', () => {
    const { result, readings, quality } = computeFixture(
      'entsoe_A75_FI_2025-10-21T1200Z_PT15M_A03.xml',
      'FI',
    );
    expect(result).toMatchObject({ kind: 'generation', dropped: [] });
    // 3 days of 288 quarters each decode to 72 complete hours.
    expect(quality).toMatchObject({ pointsStored: 72, incompleteHours: 0, unknownCodes: [] });
    expect(readings.at(-1)?.ts).toBe(T('2025-10-24T11:00Z'));

    // Positions 1-4. B04 and B15 have one Point (position 1) for the whole hour; B06 changes at 2.
    expect(readingAt(readings, '2025-10-21T12:00Z').value).toBeCloseTo(
      spreadsheet([
        ['B01', mean(723.2, 737.97, 732.8, 731.12), 230],
        ['B04', mean(14.7, 14.7, 14.7, 14.7), 490],
        ['B05', mean(0, 0, 0, 0), 820],
        ['B06', mean(2.34, 0.6, 0.6, 0.6), 650],
        ['B08', mean(123.28, 121.39, 122.48, 122.26), 820],
        ['B11', mean(961.81, 933.71, 979.03, 1155), 24],
        ['B14', mean(4175.7, 4174.1, 4176.3, 4175.3), 12],
        ['B15', mean(6.4, 6.4, 6.4, 6.4), 230],
        ['B16', mean(236.28, 213.22, 191.79, 173.18), 48],
        ['B17', mean(53.4, 54.38, 55.5, 55.5), 230],
        ['B19', mean(4110.7, 4101.7, 4015, 4022.4), 11],
        ['B20', mean(138.61, 133.01, 128.73, 133.74), 700],
      ]),
      9,
    );

    // Positions 249-252: B15 still holds its last Point (position 21, 0 MW), B06 its last Point
    // (position 196, 0 MW); B04, B16 hold position 248; B05, B17 change inside the hour.
    expect(readingAt(readings, '2025-10-24T02:00Z').value).toBeCloseTo(
      spreadsheet([
        ['B01', mean(761.81, 765.84, 757.27, 730.81), 230],
        ['B04', 22.8, 490],
        ['B05', mean(0, 0.47973, 6.6426, 15.9), 820],
        ['B06', 0, 650],
        ['B08', mean(131.42, 133.28, 134.84, 147.54), 820],
        ['B11', mean(876.43, 928.59, 961.56, 1048.4), 24],
        ['B14', mean(4046, 4046.6, 4048.1, 4048.8), 12],
        ['B15', 0, 230],
        ['B16', 1.2, 48],
        ['B17', mean(55.9, 56.633, 58.933, 60.983), 230],
        ['B19', mean(1124.6, 1142.6, 1133.6, 1104.2), 11],
        ['B20', mean(154.89, 154.26, 152.3, 152.93), 700],
      ]),
      9,
    );

    // Positions 285-288, the end of the Period: B04's last Point is 287, B05's is 286.
    const lastHour = readingAt(readings, '2025-10-24T11:00Z');
    expect(lastHour.value).toBeCloseTo(
      spreadsheet([
        ['B01', mean(815.9, 803.53, 826.21, 859.47), 230],
        ['B04', mean(15.859, 28.218, 33.2, 33.2), 490],
        ['B05', mean(17.527, 16.7, 16.7, 16.7), 820],
        ['B06', 0, 650],
        ['B08', mean(207.9, 202.5, 196.27, 211.9), 820],
        ['B11', mean(1848, 1795.8, 1803.1, 1877.9), 24],
        ['B14', mean(4023.3, 4023, 4022, 4021.9), 12],
        ['B15', 0, 230],
        ['B16', mean(88.181, 80.427, 74.886, 69.748), 48],
        ['B17', mean(65.387, 64.117, 66.65, 69.353), 230],
        ['B19', mean(569.3, 573.07, 581.1, 580.87), 11],
        ['B20', mean(169.01, 168.9, 180.79, 179.69), 700],
      ]),
      9,
    );
    expect(lastHour.mix?.gas).toBeCloseTo(mean(15.859, 28.218, 33.2, 33.2), 9);
  });

  it('IT-CSUD: B10 in five split series, in and out, never enters the sums', () => {
    const { result, readings, quality } = computeFixture(
      'entsoe_A75_IT-CSUD_2023-01-17_PT60M_in-and-out-B10.xml',
      'IT-CSUD',
    );
    // The two in-series (07-13 and 16-23 UTC) merge on the time axis, positions restarting at 1
    // in every Period; the three out-series (pumping) are not generation at all.
    const storage = generationOf(result, eicOf('IT-CSUD')).get('B10');
    expect([...(storage?.keys() ?? [])]).toEqual([
      ...[7, 8, 9, 10, 11, 12].map((hour) => Date.UTC(2023, 0, 17, hour) / 1000),
      ...[16, 17, 18, 19, 20, 21, 22].map((hour) => Date.UTC(2023, 0, 17, hour) / 1000),
    ]);
    expect(storage?.get(T('2023-01-17T08:00Z'))).toBe(206);
    expect(quality).toMatchObject({ pointsStored: 24, incompleteHours: 0 });

    expect(readingAt(readings, '2023-01-17T03:00Z').value).toBeCloseTo(
      // B10 out: 307 MW of pumping, not generation.
      spreadsheet([
        ['B01', 97, 230],
        ['B04', 28, 490],
        ['B05', 625, 820],
        ['B06', 0, 650],
        ['B11', 472, 24],
        ['B12', 0, 24],
        ['B20', 233, 700],
        ['B16', 0, 48],
        ['B19', 1152, 11],
      ]),
      9,
    );
    const eight = readingAt(readings, '2023-01-17T08:00Z');
    expect(eight.value).toBeCloseTo(
      // B10 in: 206 MW, storage.
      spreadsheet([
        ['B01', 95, 230],
        ['B04', 866, 490],
        ['B05', 935, 820],
        ['B06', 0, 650],
        ['B11', 689, 24],
        ['B12', 10, 24],
        ['B20', 382, 700],
        ['B16', 51, 48],
        ['B19', 1646, 11],
      ]),
      9,
    );
    expect(Object.values(eight.mix ?? {}).reduce((a, b) => a + b, 0)).toBe(
      95 + 866 + 935 + 0 + 689 + 10 + 382 + 51 + 1646,
    );
    expect(readingAt(readings, '2023-01-17T23:00Z').value).toBeCloseTo(
      // B10 out: 40 MW of pumping, in a one-hour Period.
      spreadsheet([
        ['B01', 88, 230],
        ['B04', 49, 490],
        ['B05', 649, 820],
        ['B06', 0, 650],
        ['B11', 714, 24],
        ['B12', 0, 24],
        ['B20', 234, 700],
        ['B16', 0, 48],
        ['B19', 1385, 11],
      ]),
      9,
    );
  });

  it('NO-5: the missing last hour of the window gives no reading; B10 in-series excluded', () => {
    const { result, readings, quality } = computeFixture(
      'entsoe_A75_NO-5_2023-05-09T0900Z_PT60M_A01.xml',
      'NO-5',
    );
    expect(result).toMatchObject({ kind: 'generation', dropped: [] });
    // The document covers 09:00Z → 09:00Z, every Period stops at 08:00Z: nothing was published
    // for 08:00-09:00Z, so there is nothing to store for it.
    expect(quality).toMatchObject({ pointsStored: 47, incompleteHours: 0, clampedNegatives: 0 });
    expect(readings[0]?.ts).toBe(T('2023-05-09T09:00Z'));
    expect(readings.at(-1)?.ts).toBe(T('2023-05-11T07:00Z'));
    expect(readings.some(({ ts }) => ts === T('2023-05-11T08:00Z'))).toBe(false);

    expect(readingAt(readings, '2023-05-09T09:00Z').value).toBeCloseTo(
      spreadsheet([
        ['B04', 0, 490],
        ['B11', 296, 24],
        ['B12', 769, 24],
        ['B17', 15, 230],
        // B10: 61 MW, storage
      ]),
      9,
    );
    expect(readingAt(readings, '2023-05-10T18:00Z').value).toBeCloseTo(
      spreadsheet([
        ['B04', 0, 490],
        ['B11', 559, 24],
        ['B12', 2321, 24],
        ['B17', 10, 230],
        // B10: 33 MW, storage
      ]),
      9,
    );
    expect(readingAt(readings, '2023-05-11T07:00Z')).toMatchObject({
      complete: true,
      mix: { gas: 0, biomass: 9, hydro: 582 + 3095 },
    });
  });

  it('the "No matching data" acknowledgement is a tagged no-data result', () => {
    expect(
      parseA75(readFixture('europe-tso', 'entsoe_acknowledgement_no-matching-data.xml')),
    ).toEqual({ kind: 'no-data', message: 'No matching data found' });
  });
});

// ------------------------------------------------------------------------------------------------
// Small inline documents for each quirk of docs/upstreams.md §6.

interface SeriesSpec {
  psrType: string;
  direction?: 'in' | 'out';
  curveType?: string;
  area?: string;
  periods: readonly PeriodSpec[];
}

const AREA = '10YFI-1--------U';

function timeSeries({
  psrType,
  direction = 'in',
  curveType = 'A01',
  area = AREA,
  periods,
}: SeriesSpec) {
  const domain = `${direction}BiddingZone_Domain.mRID`;
  return `<TimeSeries>
    <businessType>A01</businessType>
    <${domain} codingScheme="A01">${area}</${domain}>
    <quantity_Measure_Unit.name>MAW</quantity_Measure_Unit.name>
    <curveType>${curveType}</curveType>
    <MktPSRType><psrType>${psrType}</psrType></MktPSRType>
    ${periodsXml(periods)}
  </TimeSeries>`;
}

function document(...series: string[]) {
  return `<?xml version="1.0" encoding="UTF-8"?>
<GL_MarketDocument xmlns="urn:iec62325.351:tc57wg16:451-6:generationloaddocument:3:0">
  <mRID>x</mRID><type>A75</type><process.processType>A16</process.processType>
  ${series.join('\n')}
</GL_MarketDocument>`;
}

/** hour start (ISO) → MW of one psrType, for compact assertions. */
function hourly(result: A75Result, psrType: string, area = AREA): Record<string, number> {
  const series = generationOf(result, area).get(psrType) ?? new Map<number, number>();
  return Object.fromEntries(
    [...series].map(([ts, mw]) => [new Date(ts * 1000).toISOString().slice(0, 16) + 'Z', mw]),
  );
}

const day = { start: '2025-01-01T00:00Z', end: '2025-01-01T04:00Z' };

/** parseA75 of one B04 series of AREA with one Period over `day`. */
function parseOneSeries(
  points: PeriodSpec['points'],
  { curveType = 'A01', resolution = 'PT60M' } = {},
): A75Result {
  return parseA75(
    document(timeSeries({ psrType: 'B04', curveType, periods: [{ ...day, resolution, points }] })),
  );
}

describe('parseA75 quirks (docs/upstreams.md §6)', () => {
  it('A03: a Point lasts until the next position, the last one until the Period end', () => {
    const result = parseOneSeries(
      [
        [1, 10],
        [3, 20],
      ],
      { curveType: 'A03' },
    );
    expect(hourly(result, 'B04')).toEqual({
      '2025-01-01T00:00Z': 10,
      '2025-01-01T01:00Z': 10,
      '2025-01-01T02:00Z': 20,
      '2025-01-01T03:00Z': 20,
    });
  });

  it('A03 at PT15M: blocks are expanded before the hourly mean', () => {
    const result = parseOneSeries(
      [
        [4, 8],
        [1, 4],
        [6, 12],
      ],
      { curveType: 'A03', resolution: 'PT15M' },
    );
    expect(hourly(result, 'B04')).toEqual({
      '2025-01-01T00:00Z': (4 + 4 + 4 + 8) / 4,
      '2025-01-01T01:00Z': (8 + 12 + 12 + 12) / 4,
      '2025-01-01T02:00Z': 12,
      '2025-01-01T03:00Z': 12,
    });
  });

  it('A01: a missing position is missing data, not a repeat and not zero', () => {
    const result = parseA75(
      document(
        timeSeries({
          psrType: 'B04',
          periods: [
            {
              ...day,
              resolution: 'PT60M',
              points: [
                [1, 10],
                [3, 0],
              ],
            },
          ],
        }),
        timeSeries({
          psrType: 'B14',
          periods: [
            {
              ...day,
              resolution: 'PT60M',
              points: [
                [1, 1],
                [2, 1],
                [3, 1],
              ],
            },
          ],
        }),
      ),
    );
    expect(hourly(result, 'B04')).toEqual({ '2025-01-01T00:00Z': 10, '2025-01-01T02:00Z': 0 });
    const { readings } = computeReadings('FI', generationOf(result, AREA), PSR_TYPES);
    expect(readings.map(({ complete }) => complete)).toEqual([true, false, true]);
  });

  it('PT30M averages two halves; a missing quarter of PT15M leaves the hour without a value', () => {
    const result = parseA75(
      document(
        timeSeries({
          psrType: 'B16',
          periods: [
            {
              ...day,
              resolution: 'PT30M',
              points: [
                [1, 10],
                [2, 30],
                [3, 5],
                [4, 7],
              ],
            },
          ],
        }),
        timeSeries({
          psrType: 'B19',
          periods: [
            {
              ...day,
              resolution: 'PT15M',
              points: [
                [1, 1],
                [2, 2],
                [3, 3],
                [4, 4],
                [5, 5],
                [6, 6],
                [8, 8],
              ],
            },
          ],
        }),
      ),
    );
    expect(hourly(result, 'B16')).toEqual({ '2025-01-01T00:00Z': 20, '2025-01-01T01:00Z': 6 });
    expect(hourly(result, 'B19')).toEqual({ '2025-01-01T00:00Z': 2.5 });
  });

  it('merges split Periods and split TimeSeries of one type; positions restart in each Period', () => {
    const result = parseA75(
      document(
        timeSeries({
          psrType: 'B10',
          periods: [
            {
              start: '2025-01-01T00:00Z',
              end: '2025-01-01T01:00Z',
              resolution: 'PT60M',
              points: [[1, 5]],
            },
            {
              start: '2025-01-01T02:00Z',
              end: '2025-01-01T03:00Z',
              resolution: 'PT60M',
              points: [[1, 7]],
            },
          ],
        }),
        timeSeries({
          psrType: 'B10',
          periods: [
            {
              start: '2025-01-01T03:00Z',
              end: '2025-01-01T04:00Z',
              resolution: 'PT15M',
              points: [
                [1, 1],
                [2, 1],
                [3, 3],
                [4, 3],
              ],
            },
          ],
        }),
      ),
    );
    expect(hourly(result, 'B10')).toEqual({
      '2025-01-01T00:00Z': 5,
      '2025-01-01T02:00Z': 7,
      '2025-01-01T03:00Z': 2,
    });
  });

  it('ignores outBiddingZone series: consumption, never generation', () => {
    const period = { ...day, resolution: 'PT60M', points: [[1, 400]] as const };
    const result = parseA75(
      document(
        timeSeries({ psrType: 'B10', direction: 'out', periods: [period] }),
        timeSeries({ psrType: 'B04', direction: 'out', periods: [period] }),
        timeSeries({ psrType: 'B04', periods: [{ ...period, points: [[1, 100]] }] }),
      ),
    );
    expect([...generationOf(result, AREA).keys()]).toEqual(['B04']);
    expect(hourly(result, 'B04')).toEqual({ '2025-01-01T00:00Z': 100 });
    expect(result).toMatchObject({ dropped: [] });
  });

  it('keeps series of different areas apart', () => {
    const period = { ...day, resolution: 'PT60M', points: [[1, 1]] as const };
    const result = parseA75(
      document(
        timeSeries({ psrType: 'B04', periods: [period] }),
        timeSeries({ psrType: 'B04', area: '10YNO-1--------2', periods: [period] }),
      ),
    );
    expect(result.kind === 'generation' && [...result.areas.keys()]).toEqual([
      AREA,
      '10YNO-1--------2',
    ]);
  });

  it('reads any namespace prefix and any whitespace', () => {
    const xml = `<ns2:GL_MarketDocument xmlns:ns2="urn:iec62325.351:tc57wg16:451-6:generationloaddocument:3:0">
        <ns2:type>
           A75
        </ns2:type>
      <ns2:TimeSeries><ns2:inBiddingZone_Domain.mRID codingScheme="A01">${AREA}</ns2:inBiddingZone_Domain.mRID>
      <ns2:quantity_Measure_Unit.name>MAW</ns2:quantity_Measure_Unit.name>
      <ns2:MktPSRType>
                    <ns2:psrType>B14</ns2:psrType></ns2:MktPSRType>
        <ns2:Period><ns2:timeInterval><ns2:start>2025-01-01T00:00Z</ns2:start>
      <ns2:end>2025-01-01T01:00Z</ns2:end></ns2:timeInterval><ns2:resolution>PT60M</ns2:resolution>
                   <ns2:Point>
          <ns2:position> 1 </ns2:position>
                                 <ns2:quantity>
            4021.9</ns2:quantity></ns2:Point></ns2:Period></ns2:TimeSeries>
    </ns2:GL_MarketDocument>`;
    expect(hourly(parseA75(xml), 'B14')).toEqual({ '2025-01-01T00:00Z': 4021.9 });
  });

  it('drops and lists a bad Point instead of failing the document', () => {
    const result = parseOneSeries([
      [1, 10],
      [2, 'n/a'],
      [5, 30],
      [0, 1],
      [1, 11],
      [3, 30],
    ]);
    expect(hourly(result, 'B04')).toEqual({ '2025-01-01T00:00Z': 10, '2025-01-01T02:00Z': 30 });
    expect(result.kind === 'generation' && result.dropped).toEqual([
      'TimeSeries #1: Point 2 has no readable quantity',
      'TimeSeries #1: Point position 5 outside its Period',
      'TimeSeries #1: Point position 0 outside its Period',
      'TimeSeries #1: Point position 1 repeated',
    ]);
  });

  it('an unreadable A03 quantity ends the previous block instead of extending it', () => {
    const result = parseOneSeries(
      [
        [1, 10],
        [2, ''],
        [4, 40],
      ],
      { curveType: 'A03' },
    );
    expect(hourly(result, 'B04')).toEqual({ '2025-01-01T00:00Z': 10, '2025-01-01T03:00Z': 40 });
  });

  it('drops and lists an unusable series or Period, and conflicting Points', () => {
    const period = { ...day, resolution: 'PT60M', points: [[1, 1]] as const };
    const result = parseA75(
      document(
        timeSeries({ psrType: 'B04', curveType: 'A02', periods: [period] }),
        timeSeries({ psrType: 'B05', periods: [{ ...period, resolution: 'P1D' }] }),
        timeSeries({ psrType: 'B06', periods: [{ ...period, end: '2025-01-01T03:30Z' }] }),
        timeSeries({ psrType: 'B14', periods: [period] }),
        timeSeries({ psrType: 'B14', periods: [{ ...period, points: [[1, 2]] }] }),
        timeSeries({ psrType: 'B16', periods: [period] }),
        timeSeries({ psrType: 'B16', periods: [period] }),
      ),
    );
    expect(result.kind === 'generation' && result.dropped).toEqual([
      'TimeSeries #1: curveType A02',
      'TimeSeries #2: Period without a readable timeInterval or resolution',
      'TimeSeries #3: Period is not a whole number of PT60M steps',
      'TimeSeries #5: 2025-01-01T00:00:00Z conflicts with another B14 series',
    ]);
    // Two values for one hour: neither is used. The same value twice is one value.
    expect(hourly(result, 'B14')).toEqual({});
    expect(hourly(result, 'B16')).toEqual({ '2025-01-01T00:00Z': 1 });
  });

  it.each([
    ['malformed XML', '<GL_MarketDocument><TimeSeries></GL_MarketDocument>'],
    ['a truncated body', document(timeSeries({ psrType: 'B04', periods: [] })).slice(0, 200)],
    [
      'an HTML error page',
      '<!DOCTYPE html><html><head><title>503 Service Unavailable</title></head><body><p>Try later<br></body></html>',
    ],
    ['well-formed HTML', '<html><body><h1>Unauthorized</h1></body></html>'],
    ['an empty body', ''],
    ['JSON', '{"error":"x"}'],
    [
      'another document type',
      '<Publication_MarketDocument><type>A44</type></Publication_MarketDocument>',
    ],
    ['an A65 load document', '<GL_MarketDocument><type>A65</type></GL_MarketDocument>'],
    ['an empty root', '<GL_MarketDocument/>'],
    [
      'an acknowledgement without a reason',
      '<Acknowledgement_MarketDocument><mRID>1</mRID></Acknowledgement_MarketDocument>',
    ],
  ])('%s is an invalid payload', (_name, xml) => {
    expect(parseA75(xml).kind).toBe('invalid-payload');
  });

  it('an acknowledgement other than "No matching data" is a permanent upstream error', () => {
    const ack = (code: string, text: string) =>
      `<Acknowledgement_MarketDocument xmlns="urn:iec62325.351:tc57wg16:451-1:acknowledgementdocument:7:0">
        <Reason><code>${code}</code><text>${text}</text></Reason></Acknowledgement_MarketDocument>`;
    expect(parseA75(ack('999', 'The amount of requested data exceeds allowed limit.'))).toEqual({
      kind: 'upstream-error',
      code: '999',
      message: 'The amount of requested data exceeds allowed limit.',
    });
    expect(parseA75(ack('B11', 'psrType B99 is not valid for this area'))).toMatchObject({
      kind: 'upstream-error',
      code: 'B11',
    });
    expect(
      parseA75(
        ack('999', 'No matching data found for Data item AGGREGATED_GENERATION_PER_TYPE_R3'),
      ),
    ).toMatchObject({ kind: 'no-data' });
  });
});
