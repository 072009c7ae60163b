import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

/**
 * Real hourly history in the files' format, read into columns: by default the shipped files of
 * bench/real-history/csv (README.md there: where they come from), or any folder of such files.
 * Pure apart from reading the files.
 */

const HISTORY_DIR = fileURLToPath(new URL('./csv/', import.meta.url));

/** The generation columns of the files, by the categories of docs/method.md. */
const GENERATION_COLUMNS = [
  'coal',
  'gas',
  'oil',
  'biomass',
  'geothermal',
  'hydro',
  'nuclear',
  'solar',
  'wind_onshore',
  'wind_offshore',
  'other',
] as const;
export type GenerationColumn = (typeof GENERATION_COLUMNS)[number];

const FORECAST_COLUMNS = [
  'load_da_forecast_mw',
  'wind_da_forecast_mw',
  'solar_da_forecast_mw',
] as const;
export type ForecastColumn = (typeof FORECAST_COLUMNS)[number];

export interface ZoneHistory {
  /** gridco2's zone code (the file SE.csv stands in for SE-3). */
  readonly zone: string;
  /** Hour starts, epoch seconds, ascending; hours removed from the file are absent. */
  readonly hours: Float64Array;
  /** MWh per hour; only the columns the zone reports (an empty column is never reported). */
  readonly generation: ReadonlyMap<GenerationColumn, Float64Array>;
  /** MW; only the columns with a value somewhere, NaN where none was published. */
  readonly forecasts: ReadonlyMap<ForecastColumn, Float64Array>;
}

/** The file SE.csv is whole Sweden, used as SE-3 (README.md). */
const ZONE_OF_FILE: Readonly<Record<string, string>> = { SE: 'SE-3' };

/**
 * The history files of `dir` (`<zone>.csv` or `<zone>.csv.gz`), sorted, each with the gridco2
 * zone it stands for; the `.excluded.` lists beside them are left out.
 */
function historyFiles(dir: string): { name: string; zone: string }[] {
  const files = readdirSync(dir)
    .filter((name) => /\.csv(\.gz)?$/.test(name) && !name.includes('.excluded.'))
    .sort()
    .map((name) => {
      const file = name.replace(/\.csv(\.gz)?$/, '');
      return { name, zone: ZONE_OF_FILE[file] ?? file };
    });
  const zones = files.map(({ zone }) => zone);
  const twice = zones.find((zone, i) => zones.indexOf(zone) !== i);
  if (twice) throw new Error(`${dir}: two files of ${twice}`);
  return files;
}

/** The zones the real history holds, without reading the files. */
export function realHistoryZones(dir = HISTORY_DIR): string[] {
  return historyFiles(dir).map(({ zone }) => zone);
}

export function loadRealHistory(dir = HISTORY_DIR): ZoneHistory[] {
  return historyFiles(dir).map(({ name, zone }) => {
    const bytes = readFileSync(join(dir, name));
    return parseHistory(zone, (name.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8'));
  });
}

export function parseHistory(zone: string, csv: string): ZoneHistory {
  const lines = csv.trim().split('\n');
  const header = lines[0]!.trim().split(',');
  const rows = lines.slice(1).map((line) => line.trim().split(','));
  const hours = new Float64Array(rows.length);
  rows.forEach((row, i) => {
    const ms = Date.parse(row[0]!);
    if (!Number.isFinite(ms)) throw new Error(`${zone}: unreadable hour ${row[0]}`);
    hours[i] = ms / 1000;
  });
  const column = (name: string): Float64Array | undefined => {
    const index = header.indexOf(name);
    if (index < 0) throw new Error(`${zone}: no column ${name}`);
    const values = new Float64Array(rows.length);
    let any = false;
    rows.forEach((row, i) => {
      const cell = row[index] ?? '';
      values[i] = cell === '' ? Number.NaN : Number(cell);
      if (cell !== '') any = true;
    });
    return any ? values : undefined;
  };
  const generation = new Map<GenerationColumn, Float64Array>();
  for (const name of GENERATION_COLUMNS) {
    const values = column(name);
    if (values) generation.set(name, values);
  }
  const forecasts = new Map<ForecastColumn, Float64Array>();
  for (const name of FORECAST_COLUMNS) {
    const values = column(name);
    if (values) forecasts.set(name, values);
  }
  return { zone, hours, generation, forecasts };
}

/** Index of the first hour at or after `ts` (binary search). */
export function firstHourAtOrAfter(history: ZoneHistory, ts: number): number {
  let low = 0;
  let high = history.hours.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (history.hours[middle]! < ts) low = middle + 1;
    else high = middle;
  }
  return low;
}
