import { describe, expect, it } from 'vitest';
import { readFixture } from '../../../test/fixtures.js';
import { periodsXml, type PeriodSpec } from '../../../test/support/entsoe-xml.js';
import type { HourlySeries } from '../../core/generation.js';
import { parseA11, type A11Result } from './parse-flows.js';

const T = (text: string) => Date.parse(text) / 1000;
const H = 3600;

const DK1 = '10YDK-1--------W';
const GB = '10YGB----------A';
const SARD = '10Y1001A1001A74G';
const SACO_AC = '10Y1001A1001A885';
const SACO_DC = '10Y1001A1001A893';

function seriesOf(result: A11Result, outEic: string, inEic: string): HourlySeries {
  if (result.kind !== 'flows') throw new Error(`expected flows, got ${result.kind}`);
  const series = result.directions.get(outEic)?.get(inEic);
  if (!series) throw new Error(`no flow ${outEic} -> ${inEic} in the document`);
  return series;
}

/** Every direction a document holds, as `out -> in`. */
function directionsOf(result: A11Result): string[] {
  if (result.kind !== 'flows') throw new Error(`expected flows, got ${result.kind}`);
  return [...result.directions].flatMap(([out, byIn]) =>
    [...byIn.keys()].map((into) => `${out} -> ${into}`),
  );
}

/** hour start (ISO) -> MW, for compact assertions. */
const byHour = (series: HourlySeries) =>
  Object.fromEntries([...series].map(([ts, mw]) => [new Date(ts * 1000).toISOString(), mw]));

const recorded = (file: string) => parseA11(readFixture('europe-tso', file));

describe('parseA11 on recorded payloads', () => {
  const exports = recorded(
    'entsoe_A11_DK-1_to_GB_2023-12-20T1700Z_PT60M_3-timeseries-with-gaps.xml',
  );
  const imports = recorded(
    'entsoe_A11_GB_to_DK-1_2023-12-20T1700Z_PT60M_3-timeseries-with-gaps.xml',
  );

  it('DK1 -> GB: three TimeSeries merged on the time axis, the hours between them absent', () => {
    expect(exports).toMatchObject({ kind: 'flows', dropped: [] });
    // The quantity flows out of out_Domain (DK1) into in_Domain (GB).
    expect(directionsOf(exports)).toEqual([`${DK1} -> ${GB}`]);
    const flow = seriesOf(exports, DK1, GB);
    // 39 + 2 + 3 Points; Electricity Maps' snapshot of the same documents has 44 rows.
    expect(flow.size).toBe(44);
    expect(flow.get(T('2023-12-20T17:00Z'))).toBe(1362);
    expect(flow.get(T('2023-12-20T18:00Z'))).toBe(102);
    expect([...flow.keys()].at(-1)).toBe(T('2023-12-22T15:00Z'));
    for (const gap of ['2023-12-22T08:00Z', '2023-12-22T11:00Z', '2023-12-22T12:00Z']) {
      expect(flow.has(T(gap))).toBe(false);
    }
  });

  it('GB -> DK1: the other direction, never non-zero in the same hour; their difference is the net flow', () => {
    const exported = seriesOf(exports, DK1, GB);
    const imported = seriesOf(imports, GB, DK1);
    expect([...imported.keys()]).toEqual([...exported.keys()]);
    expect(Math.max(...imported.values())).toBe(1406);
    expect([...exported].filter(([ts, mw]) => mw > 0 && (imported.get(ts) ?? 0) > 0)).toEqual([]);
    // Electricity Maps' netFlow DK-DK1 -> GB (test_ENTSOE.ambr): +1362 first, -2 at 13:00Z.
    const net = (iso: string) => (exported.get(T(iso)) ?? NaN) - (imported.get(T(iso)) ?? NaN);
    expect(net('2023-12-20T17:00Z')).toBe(1362);
    expect(net('2023-12-22T13:00Z')).toBe(-2);
  });

  it('the two Corsica links: the data stop before the document interval ends', () => {
    const dc = seriesOf(
      recorded('entsoe_A11_IT-SACODC_to_IT-SARD_2023-12-27T1000Z_PT60M.xml'),
      SACO_DC,
      SARD,
    );
    const ac = seriesOf(
      recorded('entsoe_A11_IT-SARD_to_IT-SACOAC_2023-12-27T1000Z_PT60M.xml'),
      SARD,
      SACO_AC,
    );
    for (const link of [dc, ac]) {
      expect([...link.keys()]).toEqual(
        Array.from({ length: 47 }, (_, i) => T('2023-12-27T10:00Z') + i * H),
      );
    }
    // Electricity Maps' aggregated FR-COR -> IT-SAR snapshot: 47 (DC in) - 10 (AC out) = 37.
    const at10 = T('2023-12-27T10:00Z');
    expect((dc.get(at10) ?? NaN) - (ac.get(at10) ?? NaN)).toBe(37);
    expect(dc.get(T('2023-12-29T08:00Z'))).toBe(28);
  });

  it('"No matching data" is a tagged no-data result, not a failure', () => {
    expect(recorded('entsoe_acknowledgement_no-matching-data.xml')).toEqual({
      kind: 'no-data',
      message: 'No matching data found',
    });
  });
});

// ------------------------------------------------------------------------------------------------
// Small inline documents.

function timeSeries(
  periods: readonly PeriodSpec[],
  { out = DK1, into = GB, curveType = 'A01', unit = 'MAW' } = {},
) {
  const domain = (name: string, eic: string | null) =>
    eic === null ? '' : `<${name}.mRID codingScheme="A01">${eic}</${name}.mRID>`;
  return `<TimeSeries>
    <mRID>1</mRID><businessType>A66</businessType>
    ${domain('in_Domain', into)}${domain('out_Domain', out)}
    <quantity_Measure_Unit.name>${unit}</quantity_Measure_Unit.name>
    <curveType>${curveType}</curveType>
    ${periodsXml(periods)}
  </TimeSeries>`;
}

function document(...series: string[]) {
  return `<?xml version="1.0" encoding="UTF-8"?>
<Publication_MarketDocument xmlns="urn:iec62325.351:tc57wg16:451-3:publicationdocument:7:0">
  <mRID>x</mRID><revisionNumber>1</revisionNumber><type>A11</type>
  <period.timeInterval><start>2026-03-01T00:00Z</start><end>2026-03-01T03:00Z</end></period.timeInterval>
  ${series.join('\n')}
</Publication_MarketDocument>`;
}

const quarters = (...values: number[]) => values.map((mw, i) => [i + 1, mw] as const);

describe('parseA11 quirks (docs/upstreams.md §9.2)', () => {
  it.each<[string, PeriodSpec[], { curveType?: string }, Record<string, number>]>([
    [
      'PT15M: quarters averaged into hours; an hour missing a quarter gets no value',
      [
        {
          start: '2026-03-01T00:00Z',
          end: '2026-03-01T02:00Z',
          resolution: 'PT15M',
          points: [...quarters(100, 200, 300, 400), [5, 10], [6, 20], [8, 40]],
        },
      ],
      {},
      { '2026-03-01T00:00:00.000Z': 250 },
    ],
    [
      'A03 with decimals: a Point holds until the next one, then quarters are averaged',
      [
        {
          start: '2026-03-01T00:00Z',
          end: '2026-03-01T02:00Z',
          resolution: 'PT15M',
          points: [
            [1, '2967.4375'],
            [3, '1485.2'],
            [7, '273.70667'],
          ],
        },
      ],
      { curveType: 'A03' },
      {
        '2026-03-01T00:00:00.000Z': (2 * 2967.4375 + 2 * 1485.2) / 4,
        '2026-03-01T01:00:00.000Z': (2 * 1485.2 + 2 * 273.70667) / 4,
      },
    ],
    [
      'a border that changes resolution inside one window: PT60M, then PT15M',
      [
        {
          start: '2026-03-01T00:00Z',
          end: '2026-03-01T01:00Z',
          resolution: 'PT60M',
          points: [[1, 80]],
        },
        {
          start: '2026-03-01T01:00Z',
          end: '2026-03-01T02:00Z',
          resolution: 'PT15M',
          points: quarters(10, 20, 30, 40),
        },
      ],
      {},
      { '2026-03-01T00:00:00.000Z': 80, '2026-03-01T01:00:00.000Z': 25 },
    ],
  ])('%s', (_, periods, options, hourly) => {
    const result = parseA11(document(timeSeries(periods, options)));
    expect(byHour(seriesOf(result, DK1, GB))).toEqual(hourly);
  });

  it('keeps each direction apart, and two series disagreeing on an hour leave it without a value', () => {
    const hour = (start: string, end: string, mw: number): PeriodSpec => ({
      start,
      end,
      resolution: 'PT60M',
      points: [[1, mw]],
    });
    const result = parseA11(
      document(
        timeSeries([hour('2026-03-01T00:00Z', '2026-03-01T01:00Z', 5)]),
        timeSeries([hour('2026-03-01T00:00Z', '2026-03-01T01:00Z', 7)], { out: GB, into: DK1 }),
        timeSeries([hour('2026-03-01T01:00Z', '2026-03-01T02:00Z', 1)]),
        timeSeries([hour('2026-03-01T01:00Z', '2026-03-01T02:00Z', 2)]),
      ),
    );
    expect(directionsOf(result)).toEqual([`${DK1} -> ${GB}`, `${GB} -> ${DK1}`]);
    expect(byHour(seriesOf(result, DK1, GB))).toEqual({ '2026-03-01T00:00:00.000Z': 5 });
    expect(byHour(seriesOf(result, GB, DK1))).toEqual({ '2026-03-01T00:00:00.000Z': 7 });
    expect(result).toMatchObject({
      dropped: [`TimeSeries #4: 2026-03-01T01:00:00Z conflicts with another ${GB} series`],
    });
  });

  it('drops and lists an unusable series, and keeps the rest', () => {
    const period: PeriodSpec = {
      start: '2026-03-01T00:00Z',
      end: '2026-03-01T01:00Z',
      resolution: 'PT60M',
      points: [[1, 3]],
    };
    const result = parseA11(
      document(
        timeSeries([period], { out: null as unknown as string }),
        timeSeries([period], { into: DK1 }),
        timeSeries([period], { unit: 'MWH' }),
        timeSeries([period], { curveType: 'A02' }),
        timeSeries([{ ...period, points: [[1, 'n/a']] }], { out: GB, into: DK1 }),
        timeSeries([period]),
      ),
    );
    expect(result).toEqual({
      kind: 'flows',
      directions: new Map([
        [DK1, new Map([[GB, new Map([[T('2026-03-01T00:00Z'), 3]])]])],
        [GB, new Map([[DK1, new Map()]])],
      ]),
      dropped: [
        'TimeSeries #1: needs an in_Domain and another out_Domain',
        'TimeSeries #2: needs an in_Domain and another out_Domain',
        'TimeSeries #3: unit MWH is not MAW',
        'TimeSeries #4: curveType A02',
        'TimeSeries #5: Point 1 has no readable quantity',
      ],
    });
  });

  it('an empty document is flows of nothing', () => {
    expect(parseA11(document())).toEqual({ kind: 'flows', directions: new Map(), dropped: [] });
  });
});

describe('parseA11 refuses what is not an A11 document', () => {
  const a75 = readFixture('europe-tso', 'entsoe_A75_NO-5_2023-05-09T0900Z_PT60M_A01.xml');
  it.each([
    [
      'an HTML error page',
      '<html><body>502 Bad Gateway</body></html>',
      'unexpected root element <html>',
    ],
    ['a truncated document', document(timeSeries([])).slice(0, 300), 'not well-formed XML'],
    ['plain text', 'Service Unavailable', 'not well-formed XML'],
    ['an A75 generation document', a75, 'unexpected root element <GL_MarketDocument>'],
    [
      'a schedule (A09) in the same envelope',
      document().replace('<type>A11</type>', '<type>A09</type>'),
      'Publication_MarketDocument of type A09, not A11',
    ],
  ])('%s is an invalid payload', (_, xml, detail) => {
    const result = parseA11(xml);
    expect(result.kind).toBe('invalid-payload');
    expect(result).toHaveProperty('detail', expect.stringContaining(detail));
  });

  it('an Acknowledgement other than "No matching data" is an upstream error', () => {
    const refusal = `<Acknowledgement_MarketDocument xmlns="urn:iec62325.351:tc57wg16:451-1:acknowledgementdocument:7:0">
      <mRID>x</mRID><Reason><code>999</code><text>Unauthorized. Missing or invalid security token</text></Reason>
    </Acknowledgement_MarketDocument>`;
    expect(parseA11(refusal)).toEqual({
      kind: 'upstream-error',
      code: '999',
      message: 'Unauthorized. Missing or invalid security token',
    });
  });
});
