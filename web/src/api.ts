/**
 * The page's only data source: the public gridco2 API of the same origin. Every failure becomes
 * an ApiProblem whose message is a sentence for people, never a blank chart.
 */

export type Basis = 'default' | 'lifecycle' | 'direct';
export const BASES: readonly Basis[] = ['lifecycle', 'direct', 'default'];
/** What a value counts: a zone's own plants (production) or what its consumers use (imports traced). */
export type Accounting = 'production' | 'consumption';
export const ACCOUNTINGS: readonly Accounting[] = ['production', 'consumption'];

export interface Zone {
  readonly zone: string;
  readonly name: string;
  readonly source: 'europe-tso' | 'us-agency' | 'uk-operator';
  readonly resolution_min: number;
}
export interface Reading {
  readonly zone: string;
  readonly ts: string;
  readonly gco2eq_kwh: number;
  readonly method: string;
}
export interface Point {
  readonly t: number;
  readonly v: number;
  readonly method: string;
}
interface SourceStatus {
  readonly source: Zone['source'];
  readonly zones: number;
  readonly freshest_lag_hours: number;
  readonly stalest_lag_hours: number;
  readonly stale_after_hours: number;
  readonly ok: boolean;
}
export interface Status {
  readonly ok: boolean;
  readonly ts: string;
  readonly note: string;
  readonly sources: readonly SourceStatus[];
}
export interface Index {
  readonly attribution?: string;
  readonly status?: string;
  readonly endpoints?: Readonly<Record<string, string>>;
  readonly other_endpoints?: Readonly<Record<string, string>>;
}
export interface MixPoint {
  readonly ts: string;
  readonly generation: Readonly<Record<string, number>>;
  readonly renewable_pct: number;
  readonly low_carbon_pct: number;
}
/** An hour of `/v1/mix?accounting=consumption`: the mix consumed, and the flows per neighbour. */
export interface TracedMixPoint {
  readonly ts: string;
  readonly consumption: Readonly<Record<string, number>>;
  readonly imports: Readonly<Record<string, number>>;
  readonly exports: Readonly<Record<string, number>>;
  readonly estimated_pct: number;
  readonly estimated_borders: readonly string[];
  readonly renewable_pct: number;
  readonly low_carbon_pct: number;
}
interface ForecastPoint {
  readonly ts: string;
  readonly gco2eq_kwh: number;
  /** Null until the server's backtest has measured the model's errors. */
  readonly p10: number | null;
  readonly p90: number | null;
}
export interface Forecast {
  readonly zone: string;
  readonly basis: string;
  readonly model: string;
  readonly generated_at: string;
  readonly count: number;
  readonly note?: string;
  readonly data: readonly ForecastPoint[];
}
export interface Window {
  readonly zone: string;
  readonly start: string;
  readonly end: string;
  readonly gco2eq_kwh: number;
}
/** The level words of extensions §11, cleanest first. */
export type Level = 'very-low' | 'low' | 'moderate' | 'high' | 'very-high';
/** Where a zone's newest reading stands within its own last 30 days (`/v1/intensity/level`). */
export interface ZoneLevel {
  readonly zone: string;
  readonly now: {
    readonly ts: string;
    readonly gco2eq_kwh: number;
    /** Null while the zone has fewer than 7 days of history. */
    readonly percentile: number | null;
    readonly level: Level | null;
  };
  /** Why there is no level: too little history. */
  readonly note?: string;
}
export interface Levels {
  readonly window_days: number;
  /** Each level holds the percentiles below its figure; very-high is at or above high's. */
  readonly thresholds: Readonly<Record<Exclude<Level, 'very-high'>, number>>;
  readonly data: readonly ZoneLevel[];
}
export interface Schedule {
  readonly best?: Window;
  readonly options?: readonly Window[];
}

class ApiProblem extends Error {
  override readonly name = 'ApiProblem';
  constructor(
    readonly status: number,
    message: string,
    /** The API's own `error`, when it sent one. */
    readonly apiError = '',
  ) {
    super(message);
  }
}

/** Whether `error` is a server's refusal of consumption values: it ingests no border flows (FLOWS=off). */
const consumptionOff = (error: unknown): boolean =>
  error instanceof ApiProblem &&
  error.status === 400 &&
  error.apiError === 'unsupported param: accounting';

export const HOUR_MS = 3_600_000;
const toSeconds = (iso: string): number => Date.parse(iso) / 1000;
const isoMinute = (ms: number): string => new Date(ms).toISOString().slice(0, 16) + 'Z';

const basisQuery = (basis: Basis): string => (basis === 'default' ? '' : `&basis=${basis}`);
const accountingQuery = (accounting: Accounting): string =>
  accounting === 'production' ? '' : `&accounting=${accounting}`;

/** A failed answer, in words: what the API said, or what happened instead. */
async function problem(response: Response, what: string): Promise<ApiProblem> {
  if (response.status === 429) {
    const wait = response.headers.get('retry-after');
    return new ApiProblem(
      429,
      `The API is rate-limiting this address${wait ? `: try again in ${wait} s` : ''}.`,
    );
  }
  let said = '';
  let apiError = '';
  try {
    const body = (await response.json()) as { error?: string; hint?: string };
    apiError = body.error ?? '';
    said = [body.error, body.hint].filter(Boolean).join(': ');
  } catch {
    // Not the API's JSON error: the status says enough.
  }
  return new ApiProblem(
    response.status,
    `${what} failed: the API answered ${response.status}${said ? ` (${said})` : ''}.`,
    apiError,
  );
}

async function request(path: string, what: string, accept: number[] = [200]): Promise<Response> {
  let response: Response;
  try {
    // A plain GET, so that the page's preloaded answers are used as they are.
    response = await fetch(path);
  } catch {
    throw new ApiProblem(0, `${what} failed: the API could not be reached.`);
  }
  if (!accept.includes(response.status)) throw await problem(response, what);
  return response;
}

async function getJson<T>(path: string, what: string, accept?: number[]): Promise<T> {
  return (await (await request(path, what, accept)).json()) as T;
}

/** The target of a `Link: <...>; rel="next"` header, resolved against the page. */
function nextLink(header: string | null): string | null {
  if (!header) return null;
  for (const part of header.split(',')) {
    const match = /<([^>]*)>\s*;\s*rel="?next"?/i.exec(part);
    if (match)
      return new URL(match[1]!, location.href).pathname + new URL(match[1]!, location.href).search;
  }
  return null;
}

/** Follows `rel="next"` until the last page (at most `maxPages`). */
async function pages<T>(first: string, what: string, maxPages = 12): Promise<T[]> {
  const out: T[] = [];
  let path: string | null = first;
  for (let page = 0; path && page < maxPages; page++) {
    const response = await request(path, what);
    const body = (await response.json()) as { data: T[] };
    out.push(...body.data);
    path = nextLink(response.headers.get('link'));
  }
  return out;
}

async function mixOf<T>(
  zone: string,
  fromMs: number,
  toMs: number,
  accounting: Accounting,
  what: string,
): Promise<{ unit: string; data: T[] }> {
  const first = `/v1/mix?zone=${encodeURIComponent(zone)}&from=${isoMinute(fromMs)}&to=${isoMinute(toMs)}${accountingQuery(accounting)}`;
  const response = await request(first, what);
  const body = (await response.json()) as { unit: string; data: T[] };
  const rest = nextLink(response.headers.get('link'));
  const more = rest ? await pages<T>(rest, what) : [];
  return { unit: body.unit, data: [...body.data, ...more] };
}

export const api = {
  index: () => getJson<Index>('/v1', 'Reading the API index'),
  zones: async () => (await getJson<{ data: Zone[] }>('/v1/zones', 'Listing the zones')).data,
  latest: async (basis: Basis, accounting: Accounting = 'production') => {
    // The query as the page preloads it (`?basis=lifecycle`): the same URL uses that answer.
    const query = `${basisQuery(basis)}${accountingQuery(accounting)}`.slice(1);
    return (
      await getJson<{ data: Reading[] }>(
        `/v1/intensity/latest${query ? `?${query}` : ''}`,
        accounting === 'consumption'
          ? 'Reading the newest consumption values'
          : 'Reading the newest values',
      )
    ).data;
  },
  /** 503 is a Status body too (a source behind), not a failure. */
  status: () => getJson<Status>('/v1/status', 'Reading the status', [200, 503]),
  history: async (
    zone: string,
    fromMs: number,
    toMs: number,
    basis: Basis,
    accounting: Accounting = 'production',
  ): Promise<Point[]> =>
    (
      await pages<{ ts: string; gco2eq_kwh: number; method: string }>(
        `/v1/intensity?zone=${encodeURIComponent(zone)}&from=${isoMinute(fromMs)}&to=${isoMinute(toMs)}${basisQuery(basis)}${accountingQuery(accounting)}`,
        `Reading the history of ${zone}`,
      )
    ).map((row) => ({ t: toSeconds(row.ts), v: row.gco2eq_kwh, method: row.method })),
  mix: (zone: string, fromMs: number, toMs: number) =>
    mixOf<MixPoint>(zone, fromMs, toMs, 'production', `Reading the generation mix of ${zone}`),
  /** The mix consumed, traced through the border flows (always in MWh). */
  tracedMix: (zone: string, fromMs: number, toMs: number) =>
    mixOf<TracedMixPoint>(zone, fromMs, toMs, 'consumption', `Reading the consumed mix of ${zone}`),
  /**
   * Readings of many zones in one request (`/v1/export`, CSV): one call counts once against the
   * rate limit where 45 history calls would spend most of it.
   */
  export: async (
    zones: readonly string[],
    fromMs: number,
    basis: Basis,
    accounting: Accounting = 'production',
  ) => {
    const text = await (
      await request(
        `/v1/export?zones=${zones.join(',')}&from=${isoMinute(fromMs)}${basisQuery(basis)}${accountingQuery(accounting)}`,
        'Reading the last 24 hours of every zone',
      )
    ).text();
    const series = new Map<string, Point[]>();
    for (const line of text.split('\n').slice(1)) {
      const [zone, ts, value, method] = line.split(',');
      if (!zone || !ts || value === undefined || !method) continue;
      let list = series.get(zone);
      if (!list) series.set(zone, (list = []));
      list.push({ t: toSeconds(ts), v: Number(value), method });
    }
    return series;
  },
  forecast: (zone: string, basis: Basis, horizonHours = 48) =>
    getJson<Forecast>(
      `/v1/intensity/forecast?zone=${encodeURIComponent(zone)}&horizon_hours=${horizonHours}${basisQuery(basis)}`,
      `Reading the forecast of ${zone}`,
    ),
  /** The newest reading's level only (horizon 0): all the page shows. */
  levels: (basis: Basis, accounting: Accounting = 'production') =>
    getJson<Levels>(
      `/v1/intensity/level?zones=all&horizon_hours=0${basisQuery(basis)}${accountingQuery(accounting)}`,
      'Reading the level of every zone',
    ),
  schedule: (basis: Basis) =>
    getJson<Schedule>(
      `/v1/schedule?zones=all&duration_minutes=60${basisQuery(basis)}`,
      'Finding the greenest hour of each zone',
    ),
};

/** The newest values shown: consumption values where asked for and served, else production. */
export interface Values {
  readonly readings: Reading[];
  /** The zones whose reading is a consumption value. */
  readonly consumed: ReadonlySet<string>;
  /** Consumption was asked for and this server serves none (FLOWS=off). */
  readonly refused: boolean;
}

/** `production` and, where given, `consumption` merged: a zone's consumption entry first. */
const preferring = <T extends { zone: string }>(production: T[], consumption: T[] | null): T[] => {
  if (!consumption) return production;
  const consumed = new Set(consumption.map((entry) => entry.zone));
  return [...consumption, ...production.filter((entry) => !consumed.has(entry.zone))];
};

/** A consumption answer, or null where the server serves none; other failures stay failures. */
const orRefused = <T>(asked: Promise<T>): Promise<T | null> =>
  asked.catch((error: unknown) => {
    if (consumptionOff(error)) return null;
    throw error;
  });

export async function valuesOf(basis: Basis, accounting: Accounting): Promise<Values> {
  const production = api.latest(basis);
  if (accounting === 'production') {
    return { readings: await production, consumed: new Set(), refused: false };
  }
  const [own, consumption] = await Promise.all([
    production,
    orRefused(api.latest(basis, 'consumption')),
  ]);
  return {
    readings: preferring(own, consumption),
    consumed: new Set((consumption ?? []).map((r) => r.zone)),
    refused: consumption === null,
  };
}

export async function levelsOf(basis: Basis, accounting: Accounting): Promise<Levels> {
  const production = api.levels(basis);
  if (accounting === 'production') return production;
  const [own, consumption] = await Promise.all([
    production,
    orRefused(api.levels(basis, 'consumption')),
  ]);
  return { ...own, data: preferring([...own.data], consumption && [...consumption.data]) };
}

export interface Features {
  readonly forecast: boolean;
  readonly schedule: boolean;
  readonly level: boolean;
}

/** Which optional endpoints this server serves, read from the index (no 404 to find out). */
export function features(index: Index | null): Features {
  const listed = Object.entries({ ...index?.endpoints, ...index?.other_endpoints });
  const has = (path: string, key: string) =>
    listed.some(([name, text]) => name === key || text.includes(`GET ${path}`));
  return {
    forecast: has('/v1/intensity/forecast', 'forecast'),
    schedule: has('/v1/schedule', 'schedule'),
    level: has('/v1/intensity/level', 'level'),
  };
}
