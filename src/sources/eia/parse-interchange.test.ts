import { describe, expect, it } from 'vitest';
import { readFixture } from '../../../test/fixtures.js';
import type { HourlySeries } from '../../core/generation.js';
import { parseInterchangeData, type InterchangeDataResult } from './parse-interchange.js';

const T = (text: string) => Date.parse(text) / 1000;
const H = 3600;

function reportOf(result: InterchangeDataResult, fromba: string, toba: string): HourlySeries {
  if (result.kind !== 'interchange') throw new Error(`expected interchange, got ${result.kind}`);
  const series = result.reported.get(fromba)?.get(toba);
  if (!series) throw new Error(`no report ${fromba} -> ${toba}`);
  return series;
}

const page = (data: unknown[], total: number | string = data.length) =>
  JSON.stringify({ response: { total, frequency: 'hourly', data }, apiVersion: '2.1.8' });

const row = (period: unknown, fromba: unknown, toba: unknown, value: unknown) => ({
  period,
  fromba,
  'fromba-name': 'name',
  toba,
  'toba-name': 'name',
  value,
  'value-units': 'megawatthours',
});

describe('parseInterchangeData on recorded payloads', () => {
  it('FPC -> FPL: 25 hour-ending periods become hour starts, negative values kept (FPC imports)', () => {
    const result = parseInterchangeData(
      readFixture(
        'us-agency',
        'eia_interchange-data_FPC-to-FPL_2020-01-06T06_to_2020-01-07T06_hourly.json',
      ),
    );
    expect(result).toMatchObject({
      kind: 'interchange',
      total: 25,
      rows: 25,
      truncated: false,
      dropped: [],
    });
    const report = reportOf(result, 'FPC', 'FPL');
    // `period` 2020-01-06T06 is the hour 05:00-06:00Z.
    expect([...report.keys()]).toEqual(
      Array.from({ length: 25 }, (_, i) => T('2020-01-06T05:00Z') + i * H),
    );
    expect(report.get(T('2020-01-06T05:00Z'))).toBe(-329);
    expect(report.get(T('2020-01-07T05:00Z'))).toBe(-368);
    expect(Math.max(...report.values())).toBe(-281);
    expect(Math.min(...report.values())).toBe(-679);
  });

  it('FPC -> NSB: positive values (FPC exports)', () => {
    const result = parseInterchangeData(
      readFixture(
        'us-agency',
        'eia_interchange-data_FPC-to-NSB_2020-01-06T06_to_2020-01-07T06_hourly.json',
      ),
    );
    const report = reportOf(result, 'FPC', 'NSB');
    expect(report.size).toBe(25);
    expect(report.get(T('2020-01-06T05:00Z'))).toBe(16);
    expect([...report.values()].reduce((sum, mw) => sum + mw, 0)).toBe(355);
  });

  it('an empty result is interchange of nothing', () => {
    const empty = readFixture('us-agency', 'eia_fuel-type-data_SC_NUC_empty-result.json');
    expect(parseInterchangeData(empty)).toEqual({
      kind: 'interchange',
      reported: new Map(),
      total: 0,
      rows: 0,
      truncated: false,
      dropped: [],
    });
  });
});

describe('parseInterchangeData rows', () => {
  it('keeps both reports of a pair as each reporter gave them, strings read, nulls left out', () => {
    const result = parseInterchangeData(
      page([
        row('2025-04-21T01', 'CISO', 'BPAT', '-1079'),
        row('2025-04-21T01', 'BPAT', 'CISO', 1079),
        row('2025-04-21T02', 'BPAT', 'CISO', '1050.5'),
        row('2025-04-21T02', 'CISO', 'BPAT', null),
        row('2025-04-21T01', 'BPAT', 'BCHA', 12),
      ]),
    );
    expect(result).toMatchObject({ kind: 'interchange', dropped: [] });
    expect(reportOf(result, 'CISO', 'BPAT')).toEqual(new Map([[T('2025-04-21T00:00Z'), -1079]]));
    expect(reportOf(result, 'BPAT', 'CISO')).toEqual(
      new Map([
        [T('2025-04-21T00:00Z'), 1079],
        [T('2025-04-21T01:00Z'), 1050.5],
      ]),
    );
    expect(reportOf(result, 'BPAT', 'BCHA').get(T('2025-04-21T00:00Z'))).toBe(12);
  });

  it('drops and lists a row it cannot use, and a repeat, keeping the rest', () => {
    const result = parseInterchangeData(
      page([
        row('2025-04-21T01', '', 'BPAT', 1),
        row('2025-04-21T01', 'CISO', null, 1),
        row('2025-04-21 01:00', 'CISO', 'BPAT', 1),
        row('2025-04-21T01', 'CISO', 'BPAT', 'n/a'),
        row('2025-04-21T01', 'CISO', 'BPAT', 5),
        row('2025-04-21T01', 'CISO', 'BPAT', 6),
        'not a row',
      ]),
    );
    expect(result).toMatchObject({
      dropped: [
        'row 0: no fromba',
        'row 1: no toba',
        'row 2: period "2025-04-21 01:00" is not YYYY-MM-DDTHH',
        'row 3: value "n/a" is not a number',
        'row 5: repeats CISO BPAT 2025-04-21T01',
        'row 6: not an object',
      ],
    });
    expect(reportOf(result, 'CISO', 'BPAT')).toEqual(new Map([[T('2025-04-21T00:00Z'), 5]]));
  });

  it('reads the paging warning and a string total', () => {
    const body = JSON.parse(page([row('2025-04-21T01', 'CISO', 'BPAT', 1)], '12000')) as {
      response: Record<string, unknown>;
    };
    body.response['warnings'] = [{ warning: 'incomplete return', description: '5000 rows' }];
    expect(parseInterchangeData(JSON.stringify(body))).toMatchObject({
      total: 12000,
      rows: 1,
      truncated: true,
    });
  });

  it.each([
    ['an HTML error page', '<html><body><h1>504 Gateway Time-out</h1></body></html>'],
    ['a truncated body', page([row('2025-04-21T01', 'CISO', 'BPAT', 1)]).slice(0, 60)],
    ['another shape', JSON.stringify({ data: [] })],
    ['local hours', page([]).replace('"hourly"', '"local-hourly"')],
  ])('%s is an invalid payload, never a value', (_, body) => {
    expect(parseInterchangeData(body).kind).toBe('invalid-payload');
  });

  it('an error body is a tagged upstream error, with the echoed key blanked', () => {
    const body = JSON.stringify({
      error: 'api_key k3y-42 is suspended',
      code: 403,
      request: { params: { api_key: 'k3y-42' } },
    });
    expect(parseInterchangeData(body)).toEqual({
      kind: 'upstream-error',
      code: '403',
      message: 'api_key REDACTED is suspended',
    });
  });
});
