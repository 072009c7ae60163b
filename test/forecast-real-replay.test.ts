import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  firstHourAtOrAfter,
  loadRealHistory,
  type ZoneHistory,
} from '../bench/real-history/history.js';
import { startReplay, type Replay } from '../bench/real-history/replay.js';
import { findZone } from '../src/core/zones.js';
import { parseFuelTypeData } from '../src/sources/eia/parse.js';
import { eiaFuelTypeUrl } from '../src/sources/eia/request.js';
import { parseA75 } from '../src/sources/entsoe/parse.js';
import { parseEntsoeForecast } from '../src/sources/entsoe/parse-forecast.js';
import { entsoeA75Url, entsoeForecastUrl } from '../src/sources/entsoe/request.js';

/**
 * The real-history replay of `npm run bench:forecast` (bench/real-history) read back by gridco2's
 * own parsers, at the URLs gridco2 asks: what comes out is what the files hold.
 */

const H = 3600;
const FROM = Date.UTC(2020, 2, 1) / 1000;
const TO = FROM + 3 * 24 * H;

describe('real-history replay', () => {
  let replay: Replay;
  let histories: Map<string, ZoneHistory>;

  beforeAll(async () => {
    histories = new Map(loadRealHistory().map((history) => [history.zone, history]));
    replay = await startReplay([...histories.values()]);
  });
  afterAll(() => replay?.close());

  /** The file's value of `column` at each hour of the window, by hour start. */
  const fileValues = (zone: string, column: (history: ZoneHistory) => Float64Array) => {
    const history = histories.get(zone)!;
    const values = new Map<number, number>();
    for (let i = firstHourAtOrAfter(history, FROM); history.hours[i]! < TO; i++) {
      values.set(history.hours[i]!, column(history)[i]!);
    }
    return values;
  };

  it('holds ten zones of eighteen months', () => {
    expect([...histories.keys()].sort()).toEqual([
      'DE',
      'ES',
      'NL',
      'PL',
      'SE-3',
      'US-CAISO',
      'US-ERCOT',
      'US-ISONE',
      'US-MISO',
      'US-PJM',
    ]);
    for (const history of histories.values()) expect(history.hours.length).toBeGreaterThan(7000);
  });

  it('answers A75 with the files hour by hour, per production type', async () => {
    const eic = findZone('SE-3')!.upstreamId;
    const url = entsoeA75Url(replay.baseUrls['europe-tso'], 'replay', eic, {
      fromTs: FROM,
      toTs: TO,
    });
    const parsed = parseA75(await (await fetch(url)).text());
    if (parsed.kind !== 'generation') throw new Error(`not generation: ${parsed.kind}`);
    const nuclear = parsed.areas.get(eic)!.get('B14')!;
    const expected = fileValues('SE-3', (history) => history.generation.get('nuclear')!);
    expect(expected.size).toBeGreaterThan(60);
    expect(new Map([...nuclear])).toEqual(expected);
  });

  it("answers A69 with Sweden's day-ahead wind, and no data for a zone without one", async () => {
    const eic = findZone('SE-3')!.upstreamId;
    const base = replay.baseUrls['europe-tso'];
    const window = { fromTs: FROM, toTs: TO };
    const parsed = parseEntsoeForecast(
      await (await fetch(entsoeForecastUrl(base, 'replay', 'A69', eic, window))).text(),
    );
    if (parsed.kind !== 'forecast') throw new Error(`not a forecast: ${parsed.kind}`);
    const wind = new Map(
      parsed.areas
        .get(eic)!
        .get('wind')!
        .map((interval) => [interval.start, interval.mw]),
    );
    const expected = fileValues('SE-3', (history) => history.forecasts.get('wind_da_forecast_mw')!);
    for (const [ts, mw] of expected) expect(wind.get(ts), String(ts)).toBeCloseTo(mw, 1);
    const de = findZone('DE')!.upstreamId;
    const none = parseEntsoeForecast(
      await (await fetch(entsoeForecastUrl(base, 'replay', 'A69', de, window))).text(),
    );
    expect(none.kind).toBe('no-data');
  });

  it('answers EIA fuel-type-data pages with the files, labelled by the hour end', async () => {
    const url = eiaFuelTypeUrl({
      baseUrl: replay.baseUrls['us-agency'],
      apiKey: 'replay',
      respondents: ['PJM'],
      window: { fromTs: FROM, toTs: TO },
      offset: 0,
    });
    const parsed = parseFuelTypeData(await (await fetch(url)).text());
    if (parsed.kind !== 'generation') throw new Error(`not generation: ${parsed.kind}`);
    const gas = parsed.respondents.get('PJM')!.get('NG')!;
    const expected = fileValues('US-PJM', (history) => history.generation.get('gas')!);
    expect(new Map([...gas])).toEqual(
      new Map([...expected].map(([ts, mwh]) => [ts, Math.round(mwh)])),
    );
  });
});
