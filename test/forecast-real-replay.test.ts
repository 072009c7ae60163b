import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  firstHourAtOrAfter,
  loadRealHistory,
  parseHistory,
  type ZoneHistory,
} from '../bench/real-history/history.js';
import { startReplay, type Replay } from '../bench/real-history/replay.js';
import { findZone } from '../src/core/zones.js';
import { parseFuelTypeData } from '../src/sources/eia/parse.js';
import { parseRegionData } from '../src/sources/eia/parse-region.js';
import { eiaFuelTypeUrl, eiaRegionDataUrl } from '../src/sources/eia/request.js';
import { parseA75 } from '../src/sources/entsoe/parse.js';
import {
  type EntsoeForecastQuantity,
  parseEntsoeForecast,
} from '../src/sources/entsoe/parse-forecast.js';
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

  /** A replay's ENTSO-E forecast document of one zone over the window, read by gridco2's parser. */
  const forecastDocument = async (base: string, documentType: 'A65' | 'A69', zone: string) => {
    const eic = findZone(zone)!.upstreamId;
    const url = entsoeForecastUrl(base, 'replay', documentType, eic, { fromTs: FROM, toTs: TO });
    return parseEntsoeForecast(await (await fetch(url)).text());
  };

  /** Its series of `kind` (wind, solar, load); the document must hold a forecast. */
  const forecastSeries = async (
    base: string,
    documentType: 'A65' | 'A69',
    zone: string,
    kind: EntsoeForecastQuantity,
  ) => {
    const parsed = await forecastDocument(base, documentType, zone);
    if (parsed.kind !== 'forecast') throw new Error(`not a forecast: ${parsed.kind}`);
    return parsed.areas.get(findZone(zone)!.upstreamId)!.get(kind)!;
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
    const base = replay.baseUrls['europe-tso'];
    const wind = new Map(
      (await forecastSeries(base, 'A69', 'SE-3', 'wind')).map(({ start, mw }) => [start, mw]),
    );
    const expected = fileValues('SE-3', (history) => history.forecasts.get('wind_da_forecast_mw')!);
    for (const [ts, mw] of expected) expect(wind.get(ts), String(ts)).toBeCloseTo(mw, 1);
    expect((await forecastDocument(base, 'A69', 'DE')).kind).toBe('no-data');
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
    // A later page: the rows after those before it, of the same total.
    const page = async (offset: number) =>
      (await (await fetch(url.replace('offset=0', `offset=${offset}`))).json()) as {
        response: { total: string | number; data: unknown[] };
      };
    const [first, second] = [await page(0), await page(7)];
    expect(url).toContain('offset=0');
    expect(second.response.total).toEqual(first.response.total);
    expect(first.response.data.length).toBeGreaterThan(12);
    expect(second.response.data.slice(0, 5)).toEqual(first.response.data.slice(7, 12));
  });

  /** Files of the same format with a day-ahead load column: three days of DE and US-PJM. */
  const withLoad = (): ZoneHistory[] => {
    const header =
      'ts_utc_start,coal,gas,oil,biomass,geothermal,hydro,nuclear,solar,wind_onshore,' +
      'wind_offshore,other,load_da_forecast_mw,wind_da_forecast_mw,solar_da_forecast_mw';
    // The day-ahead columns of an hour: load, wind and solar.
    const csv = (dayAhead: (hour: number) => string) =>
      [
        header,
        ...Array.from({ length: 72 }, (_, hour) => {
          const ts = new Date((FROM + hour * H) * 1000).toISOString().slice(0, 13) + ':00:00Z';
          return `${ts},100,200,,,,50,,,,,,${dayAhead(hour)}`;
        }),
      ].join('\n');
    return [
      parseHistory(
        'DE',
        csv((hour) => `${50_000 + 10 * hour},${20_000 + hour},${hour % 24 < 6 ? 0 : 3_000 + hour}`),
      ),
      parseHistory(
        'US-PJM',
        csv((hour) => `${90_000 + 20 * hour},,`),
      ),
    ];
  };

  it('answers A65, A69 wind and solar, and EIA region-data DF with the day-ahead columns, where files have them', async () => {
    const [de, pjm] = withLoad();
    const loadReplay = await startReplay([de!, pjm!]);
    try {
      const window = { fromTs: FROM, toTs: TO };
      const base = loadReplay.baseUrls['europe-tso'];
      const load = await forecastSeries(base, 'A65', 'DE', 'load');
      expect(load).toHaveLength(72);
      for (const { start, mw } of load) expect(mw).toBe(50_000 + (10 * (start - FROM)) / H);
      // A69: wind and solar, each its own series, the night's zero solar kept as zero.
      const wind = await forecastSeries(base, 'A69', 'DE', 'wind');
      const solar = await forecastSeries(base, 'A69', 'DE', 'solar');
      expect([wind.length, solar.length]).toEqual([72, 72]);
      for (const { start, mw } of wind) expect(mw).toBe(20_000 + (start - FROM) / H);
      for (const { start, mw } of solar) {
        const hour = (start - FROM) / H;
        expect(mw).toBe(hour % 24 < 6 ? 0 : 3_000 + hour);
      }
      const page = parseRegionData(
        await (
          await fetch(
            eiaRegionDataUrl(
              {
                baseUrl: loadReplay.baseUrls['us-agency'],
                apiKey: 'replay',
                respondents: ['PJM'],
                window,
                offset: 0,
              },
              ['D', 'DF'],
            ),
          )
        ).text(),
      );
      if (page.kind !== 'region-data') throw new Error(`not region-data: ${page.kind}`);
      const demandForecast = page.respondents.get('PJM')!.get('DF')!;
      expect(demandForecast.size).toBe(72);
      for (const [ts, mwh] of demandForecast) expect(mwh).toBe(90_000 + (20 * (ts - FROM)) / H);
      // The files hold no demand (D): none is made up.
      expect(page.respondents.get('PJM')!.has('D')).toBe(false);
    } finally {
      await loadReplay.close();
    }
  });

  it('reads a folder of plain or gzipped files named by zone, SE standing in for SE-3', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gridco2-history-'));
    try {
      const csv = (zone: string) => {
        const history = histories.get(zone)!;
        const first = new Date(history.hours[0]! * 1000).toISOString().slice(0, 13);
        return `ts_utc_start,coal,gas,oil,biomass,geothermal,hydro,nuclear,solar,wind_onshore,wind_offshore,other,load_da_forecast_mw,wind_da_forecast_mw,solar_da_forecast_mw\n${first}:00:00Z,,,,,,1,2,,3,,,,4,\n`;
      };
      writeFileSync(join(dir, 'SE.csv'), csv('SE-3'));
      writeFileSync(join(dir, 'NL.csv.gz'), gzipSync(csv('NL')));
      writeFileSync(join(dir, 'NL.excluded.csv'), 'ts_utc_start,reason\n');
      const read = loadRealHistory(dir);
      expect(read.map(({ zone }) => zone)).toEqual(['NL', 'SE-3']);
      expect(read[1]!.generation.get('nuclear')![0]).toBe(2);
      expect(read[1]!.forecasts.get('wind_da_forecast_mw')![0]).toBe(4);
      writeFileSync(join(dir, 'NL.csv'), csv('NL'));
      expect(() => loadRealHistory(dir)).toThrow(/two files of NL/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
