import { describe, expect, it } from 'vitest';
import { readFixture } from '../../../test/fixtures.js';
import { readingAt, spreadsheet } from '../../../test/support/spreadsheet.js';
import type { GenerationByCode } from '../../core/generation.js';
import { computeReadings } from '../../core/method.js';
import { eiaFuelTypesOf } from '../../core/production-types.js';
import { ZONES, zonesOfSource } from '../../core/zones.js';
import { parseFuelTypeData, type FuelTypeDataResult } from './parse.js';

const T = (text: string) => Date.parse(text) / 1000;

function respondentOf(result: FuelTypeDataResult, respondent: string): GenerationByCode {
  if (result.kind !== 'generation') throw new Error(`expected generation, got ${result.kind}`);
  const generation = result.respondents.get(respondent);
  if (!generation) throw new Error(`no respondent ${respondent}`);
  return generation;
}

describe('parseFuelTypeData on the 5000-row page of all respondents (2025-04-20T17 … 21T03)', () => {
  const result = parseFuelTypeData(
    readFixture(
      'us-agency',
      'eia_fuel-type-data_all-respondents_2025-04-20T17_to_2025-04-21T03_hourly.json',
    ),
  );
  const compute = (zoneCode: string) => {
    const zone = ZONES.find(({ code }) => code === zoneCode);
    if (!zone) throw new Error(`unknown zone ${zoneCode}`);
    const respondent = zone.upstreamId;
    return computeReadings(zoneCode, respondentOf(result, respondent), eiaFuelTypesOf(respondent));
  };

  it('reads the envelope: string total, paging warning, every row kept', () => {
    expect(result).toMatchObject({
      kind: 'generation',
      total: 21591700,
      rows: 5000,
      truncated: true,
      dropped: [],
    });
    if (result.kind !== 'generation') return;
    expect(result.respondents.size).toBe(75);
    for (const zone of zonesOfSource('us-agency')) {
      expect(result.respondents.has(zone.upstreamId)).toBe(true);
    }
  });

  it('keys readings on the hour START: period 2025-04-21T03 is 02:00-03:00Z', () => {
    const { readings, quality } = compute('US-PJM');
    expect(readings[0]?.ts).toBe(T('2025-04-20T16:00Z'));
    expect(readings.at(-1)?.ts).toBe(T('2025-04-21T02:00Z'));
    expect(quality).toEqual({
      zone: 'US-PJM',
      pointsStored: 11,
      incompleteHours: 0,
      clampedNegatives: 0,
      unknownCodes: [],
    });
    const last = readingAt(readings, '2025-04-21T02:00Z');
    expect(last.value).toBeCloseTo(
      spreadsheet([
        ['COL', 13311, 820],
        ['NG', 28216, 490],
        ['NUC', 27510, 12],
        ['OIL', 715, 650],
        ['OTH', 1122, 700],
        ['SUN', 13, 48],
        ['WAT', 2394, 24],
        ['WND', 7643, 11],
      ]),
      9,
    );
    expect(last.mix).toEqual({
      coal: 13311,
      gas: 28216,
      oil: 715,
      hydro: 2394,
      nuclear: 27510,
      solar: 13,
      'wind-onshore': 7643,
      other: 1122,
    });
  });

  it('US-CAISO: OTH is storage, excluded (and its negatives are not clamped)', () => {
    const { readings, quality } = compute('US-CAISO');
    expect(quality).toMatchObject({ pointsStored: 11, incompleteHours: 0, clampedNegatives: 0 });
    const hour = readingAt(readings, '2025-04-21T01:00Z'); // period 2025-04-21T02
    expect(hour.value).toBeCloseTo(
      spreadsheet([
        ['COL', 0, 820],
        ['NG', 4191, 490],
        ['NUC', 1136, 12],
        ['OIL', 46, 650],
        // OTH: -231, storage for CISO
        ['SUN', 11740, 48],
        ['WAT', 1840, 24],
        ['WND', 1625, 11],
      ]),
      9,
    );
    expect(hour.mix).not.toHaveProperty('other');
  });

  it('US-TVA: a negative SUN counts as 0; storage codes (BAT, PS, OES) are left out', () => {
    const { readings, quality } = compute('US-TVA');
    // SUN -2 at periods T02 and T03, WND -1 at period 2025-04-20T18. PS -1 is storage.
    expect(quality.clampedNegatives).toBe(3);
    expect(readingAt(readings, '2025-04-21T02:00Z').value).toBeCloseTo(
      spreadsheet([
        ['COL', 2743, 820],
        ['GEO', 0, 38],
        ['NG', 5648, 490],
        ['NUC', 4886, 12],
        ['OIL', 0, 650],
        ['OTH', 25, 700],
        ['SNB', 2, 48],
        ['SUN', 0, 48], // -2
        ['UNK', 0, 700],
        ['WAT', 1012, 24],
        ['WNB', 0, 11],
        ['WND', 0, 11],
      ]),
      9,
    );
  });

  it('US (US48): every code, storage out, a negative OTH clamped', () => {
    const { readings, quality } = compute('US');
    expect(readingAt(readings, '2025-04-20T23:00Z').value).toBeCloseTo(
      spreadsheet([
        // BAT 124, OES 0, PS 4245, UES -145: storage
        ['COL', 62749, 820],
        ['GEO', 494, 38],
        ['NG', 166320, 490],
        ['NUC', 78890, 12],
        ['OIL', 820, 650],
        ['OTH', 2426, 700],
        ['SNB', 222, 48],
        ['SUN', 43128, 48],
        ['UNK', 0, 700],
        ['WAT', 31026, 24],
        ['WNB', 0, 11],
        ['WND', 51442, 11],
      ]),
      9,
    );
    const clamped = readingAt(readings, '2025-04-20T20:00Z'); // period T21: OTH -195
    expect(clamped.value).toBeCloseTo(
      spreadsheet([
        ['COL', 53543, 820],
        ['GEO', 488, 38],
        ['NG', 131723, 490],
        ['NUC', 78676, 12],
        ['OIL', 803, 650],
        ['OTH', 0, 700], // -195
        ['SNB', 577, 48],
        ['SUN', 78524, 48],
        ['UNK', 0, 700],
        ['WAT', 26964, 24],
        ['WNB', 0, 11],
        ['WND', 60487, 11],
      ]),
      9,
    );
    expect(clamped.mix?.other).toBe(0);
    // US48 OTH is negative at periods T19, T20, T21.
    expect(quality.clampedNegatives).toBe(3);
  });

  it('the oldest hour, cut by the 5000-row limit, is incomplete for the respondent cut in two', () => {
    // Rows of period 2025-04-20T17 stop inside SOCO (after SNB): SUN, WAT and WND are missing.
    const soco = compute('US-SOCO');
    expect(soco.quality).toMatchObject({ pointsStored: 11, incompleteHours: 1 });
    const cut = readingAt(soco.readings, '2025-04-20T16:00Z');
    expect(cut.complete).toBe(false);
    expect(cut.value).toBeCloseTo(
      spreadsheet([
        ['COL', 4769, 820],
        ['NG', 10303, 490],
        ['NUC', 6872, 12],
        ['OIL', 0, 650],
        ['OTH', 57, 700],
        ['SNB', 1, 48],
      ]),
      9,
    );
    expect(readingAt(soco.readings, '2025-04-20T17:00Z').complete).toBe(true);

    // Respondents sorted before the cut are whole; those after it have no row at all for that
    // hour, so there is nothing to store for it.
    expect(readingAt(compute('US-PJM').readings, '2025-04-20T16:00Z').complete).toBe(true);
    for (const zone of ['US', 'US-SPP', 'US-TVA']) {
      const { readings, quality } = compute(zone);
      expect(readings[0]?.ts).toBe(T('2025-04-20T17:00Z'));
      expect(quality).toMatchObject({ pointsStored: 10, incompleteHours: 0 });
    }
  });

  it('computes a complete reading for every other hour of all 11 zones', () => {
    for (const zone of zonesOfSource('us-agency')) {
      const { readings } = compute(zone.code);
      const afterCut = readings.filter(({ ts }) => ts > T('2025-04-20T16:00Z'));
      expect(afterCut.length).toBe(10);
      expect(afterCut.every(({ complete, value }) => complete && value !== null)).toBe(true);
    }
  });
});

describe('parseFuelTypeData on other replies', () => {
  it('an empty result (total 0, data []) is valid, not an error', () => {
    const result = parseFuelTypeData(
      readFixture('us-agency', 'eia_fuel-type-data_SC_NUC_empty-result.json'),
    );
    expect(result).toEqual({
      kind: 'generation',
      respondents: new Map(),
      total: 0,
      rows: 0,
      truncated: false,
      dropped: [],
    });
  });

  const page = (data: unknown[], extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      response: { total: data.length, frequency: 'hourly', data, ...extra },
      request: { params: { frequency: 'hourly', api_key: 'sEcReT-KeY-123' } },
      apiVersion: '2.1.8',
    });
  const row = (fueltype: string, value: unknown, period = '2025-04-21T03') => ({
    period,
    respondent: 'PJM',
    'respondent-name': 'PJM Interconnection, LLC',
    fueltype,
    'type-name': 'whatever wording',
    value,
    'value-units': 'megawatthours',
  });

  it('reads value as a number, a numeric string or null (no value for that hour)', () => {
    const result = parseFuelTypeData(
      page([
        row('NG', 19405),
        row('COL', '30683'),
        row('NUC', null),
        row('NUC', '7', '2025-04-21T02'),
      ]),
    );
    const pjm = respondentOf(result, 'PJM');
    const hour = T('2025-04-21T02:00Z');
    expect(pjm.get('NG')?.get(hour)).toBe(19405);
    expect(pjm.get('COL')?.get(hour)).toBe(30683);
    expect(pjm.get('NUC')?.has(hour)).toBe(false);
    expect(pjm.get('NUC')?.get(hour - 3600)).toBe(7);
    // NUC reports in the window but not at 02:00Z: that hour is incomplete.
    const { readings } = computeReadings('US-PJM', pjm, eiaFuelTypesOf('PJM'));
    expect(readings.map(({ complete }) => complete)).toEqual([false, false]);
  });

  it('reads total as a number or a string', () => {
    expect(parseFuelTypeData(page([], { total: '25' }))).toMatchObject({ total: 25 });
    expect(parseFuelTypeData(page([], { total: 25 }))).toMatchObject({ total: 25 });
    expect(parseFuelTypeData(page([], { total: 'many' })).kind).toBe('invalid-payload');
  });

  it.each(['incomplete return', 'parameter out of range'])(
    'detects the paging warning "%s"',
    (warning) => {
      const warnings = [
        { warning, description: 'The API can only return 5000 rows in JSON format.' },
      ];
      expect(parseFuelTypeData(page([], { warnings }))).toMatchObject({ truncated: true });
    },
  );

  it('drops and lists bad rows, keeps the rest', () => {
    const result = parseFuelTypeData(
      page([
        row('NG', 1),
        row('NG', '1,5', '2025-04-21T02'),
        row('NG', 2, '2025-04-21T03-07'),
        { ...row('', 3) },
        row('NG', 4),
        'nonsense',
      ]),
    );
    expect(result.kind === 'generation' && result.dropped).toEqual([
      'row 1: value "1,5" is not a number',
      'row 2: period "2025-04-21T03-07" is not YYYY-MM-DDTHH',
      'row 3: no fueltype',
      'row 4: repeats PJM NG 2025-04-21T03',
      'row 5: not an object',
    ]);
    expect(respondentOf(result, 'PJM').get('NG')?.get(T('2025-04-21T02:00Z'))).toBe(1);
  });

  it('never keeps the echoed api_key', () => {
    const result = parseFuelTypeData(page([row('NG', 1)]));
    const everything = JSON.stringify(result, (_key, value: unknown) =>
      value instanceof Map ? [...value] : value,
    );
    expect(everything).not.toContain('sEcReT');
    expect(everything).not.toContain('api_key');
  });

  it.each([
    [
      'the gateway/key shape',
      { error: { code: 'API_KEY_INVALID', message: 'An invalid api_key was supplied.' } },
      { code: 'API_KEY_INVALID', message: 'An invalid api_key was supplied.' },
    ],
    [
      'the parameter shape',
      { error: 'Invalid frequency provided. Valid frequencies: hourly, local-hourly', code: 400 },
      {
        code: '400',
        message: 'Invalid frequency provided. Valid frequencies: hourly, local-hourly',
      },
    ],
    [
      'a message that echoes the key',
      {
        error: 'api_key sEcReT-KeY-123 is suspended',
        code: 403,
        request: { params: { api_key: 'sEcReT-KeY-123' } },
      },
      { code: '403', message: 'api_key REDACTED is suspended' },
    ],
  ])(
    'an error body (%s), even with HTTP 200, is a tagged upstream error',
    (_name, body, expected) => {
      expect(parseFuelTypeData(JSON.stringify(body))).toEqual({
        kind: 'upstream-error',
        ...expected,
      });
    },
  );

  it.each([
    ['an HTML error page', '<html><body><h1>504 Gateway Time-out</h1></body></html>'],
    ['a truncated body', page([row('NG', 1)]).slice(0, 80)],
    ['an empty body', ''],
    ['a JSON list', '[]'],
    ['no response', '{"apiVersion":"2.1.8"}'],
    ['no data list', '{"response":{"total":0}}'],
    ['local-hourly periods', page([], { frequency: 'local-hourly' })],
  ])('%s is an invalid payload', (_name, body) => {
    expect(parseFuelTypeData(body).kind).toBe('invalid-payload');
  });
});
