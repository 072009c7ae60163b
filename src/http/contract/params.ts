import { formatTs, HOUR, isServableInstant, parseInstant, resolveWindow } from '../../core/time.js';
import { hasConsumptionSeries, type Zone } from '../../core/zones.js';
import { CONTRACT_REGISTRY, type ZoneRegistry } from '../../core/zone-registry.js';
import { type Accounting, ACCOUNTINGS, CONSUMPTION_DEFAULT_BASIS } from '../../core/reading.js';
import type { Config } from '../../config.js';
import { resolveZone } from '../../core/zone-names.js';
import { isCloudRegionForm } from '../../core/cloud-regions.js';
import { API_ERRORS } from './errors.js';
import {
  FORECAST_HORIZON,
  LEVEL_HORIZON,
  MAX_EXPORT_DAYS,
  MAX_STATS_DAYS,
  SCHEDULE_LIMITS,
} from './limits.js';
import {
  ExportQuery,
  HistoryQuery,
  LatestQuery,
  LevelQuery,
  MixQuery,
  ScheduleQuery,
  ForecastQuery,
  SkillQuery,
  StatsQuery,
  StreamQuery,
} from './schemas.js';
import { BASES, type Basis } from '../../core/factors.js';

/**
 * The one interpreter of the data endpoints' queries, used by the fast path and the framework
 * routes alike: every parameter rule, error and hint lives here. It throws ApiErrors.
 */

/** The query of a request URL: each known parameter once (repeated: 400); unknown ones ignored. */
export function readParams(url: string, known: readonly string[]): Map<string, string> {
  const params = new Map<string, string>();
  const mark = url.indexOf('?');
  if (mark < 0) return params;
  const repeated = new Set<string>();
  for (const part of url.slice(mark + 1).split('&')) {
    if (part === '') continue;
    const equals = part.indexOf('=');
    const key = decode(equals < 0 ? part : part.slice(0, equals));
    if (!known.includes(key)) continue;
    if (params.has(key)) repeated.add(key);
    params.set(key, decode(equals < 0 ? '' : part.slice(equals + 1)));
  }
  // The first of the known parameters, in their declared order, names the error.
  const first = known.find((key) => repeated.has(key));
  if (first !== undefined) throw API_ERRORS.repeatedParam(first);
  return params;
}

/** As application/x-www-form-urlencoded: `+` is a space; a malformed escape is kept as written. */
function decode(text: string): string {
  const spaced = text.includes('+') ? text.replaceAll('+', ' ') : text;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/** The parameters each endpoint reads, in the order their errors are reported: its schema's. */
export const LATEST_PARAMS = Object.keys(LatestQuery.properties);
export const HISTORY_PARAMS = Object.keys(HistoryQuery.properties);
export const MIX_PARAMS = Object.keys(MixQuery.properties);
export const EXPORT_PARAMS = Object.keys(ExportQuery.properties);
export const STREAM_PARAMS = Object.keys(StreamQuery.properties);
export const SCHEDULE_PARAMS = Object.keys(ScheduleQuery.properties);
export const FORECAST_PARAMS = Object.keys(ForecastQuery.properties);
export const SKILL_PARAMS = Object.keys(SkillQuery.properties);

/**
 * What this server offers beyond the contract, as its operator configured it: consumption values
 * only where border flows are ingested (`FLOWS=on`, extensions §16); the zones served now (the 45
 * of the contract, or with `ZONES=all` the flow graphs' nodes with recent data too: §16).
 */
export interface Offered {
  readonly consumption: boolean;
  readonly zones: ZoneRegistry;
}

/** `zones`: the registry served at the time of each request (read/served-zones.ts). */
export const offeredBy = (
  config: Pick<Config, 'flows'>,
  zones: () => ZoneRegistry = () => CONTRACT_REGISTRY,
): Offered => ({
  consumption: config.flows,
  get zones() {
    return zones();
  },
});

export interface LatestRequest {
  /** Undefined: every zone. */
  readonly zone: Zone | undefined;
  /** The zone as the client wrote it (trimmed), echoed when it has no reading. */
  readonly given: string | undefined;
  /** Undefined: each zone's own value (of consumption values: lifecycle). */
  readonly basis: Basis | undefined;
  readonly accounting: Accounting;
}

export function interpretLatest(
  params: ReadonlyMap<string, string>,
  offered: Offered,
): LatestRequest {
  const given = params.get('zone')?.trim();
  const zone = given === undefined ? undefined : requireZone(given, offered.zones);
  const basis = interpretBasis(params);
  const accounting = interpretAccounting(params, offered, zone && [zone]);
  return { zone, given, basis, accounting };
}

export interface WindowRequest {
  readonly zone: Zone;
  /** The window `from <= ts < to`, epoch seconds. */
  readonly from: number;
  readonly to: number;
  /** Undefined: each zone's own value (and always for a mix, which has no basis). */
  readonly basis: Basis | undefined;
  readonly accounting: Accounting;
}

/** A zone and a window: `/v1/intensity` and `/v1/mix` (whose query has no basis). */
export function interpretWindow(
  params: ReadonlyMap<string, string>,
  nowMs: number,
  offered: Offered,
): WindowRequest {
  const {
    zones: zone,
    from,
    to,
  } = zonesAndWindow(params, nowMs, 'zone', (given) => requireZone(given, offered.zones));
  const basis = interpretBasis(params);
  return { zone, from, to, basis, accounting: interpretAccounting(params, offered, [zone]) };
}

/**
 * The zone (or zones) and the window `from <= ts < to` of a request, in the contract's error
 * order: the zones given, `from` and `to` well formed, the zones known, the window servable.
 */
function zonesAndWindow<Z>(
  params: ReadonlyMap<string, string>,
  nowMs: number,
  name: 'zone' | 'zones',
  readZones: (given: string) => Z,
): { given: string; zones: Z; from: number; to: number } {
  const given = requiredParam(params, name);
  const fromMs = instant(params, 'from');
  const toMs = instant(params, 'to');
  const zones = readZones(given);
  return { given, zones, ...servableWindow(fromMs, toMs, nowMs) };
}

/** The window `from <= ts < to` asked for, with its defaults; throws when it cannot be served. */
function servableWindow(
  fromMs: number | undefined,
  toMs: number | undefined,
  nowMs: number,
): { from: number; to: number } {
  const window = resolveWindow(fromMs, toMs, nowMs);
  // Instants outside years 0000-9999 could not be echoed in the contract's format.
  if (!isServableInstant(window.to)) throw API_ERRORS.invalidInstant('to');
  if (!isServableInstant(window.from)) {
    throw API_ERRORS.invalidInstant(fromMs === undefined ? 'to' : 'from');
  }
  if (window.from >= window.to) throw API_ERRORS.invalidWindow();
  return window;
}

type ExportFormat = 'csv' | 'ndjson';

export interface ExportRequest {
  /** In the order of /v1/zones. */
  readonly zones: readonly Zone[];
  /** The window `from <= ts < to`, epoch seconds. */
  readonly from: number;
  readonly to: number;
  readonly format: ExportFormat;
  /** Undefined: each zone's own value. */
  readonly basis: Basis | undefined;
  readonly accounting: Accounting;
  /** Whether each row carries its generation mix (`include=mix`). */
  readonly mix: boolean;
}

/** `/v1/export`: zones, a window of at most MAX_EXPORT_DAYS, a format, a basis, the mix. */
export function interpretExport(
  params: ReadonlyMap<string, string>,
  nowMs: number,
  offered: Offered,
): ExportRequest {
  const {
    given,
    zones: asked,
    ...window
  } = zonesAndWindow(params, nowMs, 'zones', (listed) => interpretZones(listed, offered.zones));
  if (window.to - window.from > MAX_EXPORT_DAYS * 24 * HOUR) {
    throw API_ERRORS.exportWindowTooLong(MAX_EXPORT_DAYS);
  }
  const format = params.get('format') ?? 'csv';
  if (format !== 'csv' && format !== 'ndjson') throw API_ERRORS.invalidFormat();
  const basis = interpretBasis(params);
  const accounting = interpretAccounting(params, offered, listedZones(given, asked));
  const zones = accounting === 'consumption' ? asked.filter(hasConsumptionSeries) : asked;
  const include = params.get('include');
  if (include !== undefined && include !== 'mix') throw API_ERRORS.invalidInclude();
  return { zones, ...window, format, basis, accounting, mix: include === 'mix' };
}

export interface StreamRequest {
  /** In the order of /v1/zones; every zone by default. */
  readonly zones: readonly Zone[];
  /** Undefined: each zone's own value. */
  readonly basis: Basis | undefined;
}

/** `/v1/stream`: zones (default all) and a basis. */
export function interpretStream(
  params: ReadonlyMap<string, string>,
  offered: Pick<Offered, 'zones'>,
): StreamRequest {
  const given = params.get('zones');
  const zones = given === undefined ? offered.zones.zones : interpretZones(given, offered.zones);
  const basis = interpretBasis(params);
  refuseConsumption(params);
  return { zones, basis };
}

/** The zones a list names one by one; none for `all` (which leaves out a zone without series). */
const listedZones = (given: string, zones: readonly Zone[]) =>
  given.trim().toLowerCase() === 'all' ? undefined : zones;

/**
 * A zone list: `all`, or comma-separated codes as `zone=` takes them (case-insensitive, spaces
 * around a code ignored, a repeated code counted once). An empty element is 400, an unknown
 * code 404 as on the other endpoints. The zones come back in the order of /v1/zones, or with
 * `listed`, in the order given (a repeat keeps its first place).
 */
function interpretZones(
  given: string,
  registry: ZoneRegistry,
  order: 'registry' | 'listed' = 'registry',
): readonly Zone[] {
  if (given.trim().toLowerCase() === 'all') return registry.zones;
  const parts = given.split(',').map((part) => part.trim());
  if (parts.some((part) => part === '' || part.toLowerCase() === 'all')) {
    throw API_ERRORS.invalidZones();
  }
  const listed = parts.map((part) => requireZone(part, registry));
  if (order === 'listed') return [...new Set(listed)];
  const wanted = new Set(listed.map((zone) => zone.code));
  return registry.zones.filter((zone) => wanted.has(zone.code));
}

type Estimator = 'expected' | 'p90';

export interface ScheduleRequest {
  /** In the order given; the first is the home zone of `now`. */
  readonly zones: readonly Zone[];
  readonly durationMinutes: number;
  /** The window the job runs inside, `[earliest, deadline)`, epoch seconds. */
  readonly earliest: number;
  readonly deadline: number;
  readonly interruptible: boolean;
  readonly estimator: Estimator;
  /** Undefined: each zone's own value. */
  readonly basis: Basis | undefined;
  readonly energyKwh: number | undefined;
}

/**
 * `/v1/schedule`: every parameter's form is checked first (400), then the zones (404 for an
 * unknown one), then the window, then `basis` last as on the other endpoints.
 */
export function interpretSchedule(
  params: ReadonlyMap<string, string>,
  nowMs: number,
  offered: Pick<Offered, 'zones'>,
): ScheduleRequest {
  const given = requiredParam(params, 'zones');
  const limits = SCHEDULE_LIMITS;
  const durationText = params.get('duration_minutes')?.trim();
  let durationMinutes: number = limits.defaultDurationMinutes;
  if (durationText !== undefined) {
    durationMinutes = /^\d+$/.test(durationText) ? Number(durationText) : 0;
    if (durationMinutes < 1 || durationMinutes > limits.maxDurationMinutes) {
      throw API_ERRORS.invalidDuration(limits.maxDurationMinutes);
    }
  }
  const earliestMs = instant(params, 'earliest');
  const deadlineMs = instant(params, 'deadline');
  const interruptibleText = params.get('interruptible');
  if (
    interruptibleText !== undefined &&
    interruptibleText !== 'true' &&
    interruptibleText !== 'false'
  ) {
    throw API_ERRORS.invalidInterruptible();
  }
  const estimator = params.get('estimator') ?? 'expected';
  if (estimator !== 'expected' && estimator !== 'p90') throw API_ERRORS.invalidEstimator();
  const energyKwh = interpretEnergy(params);
  const zones = interpretZones(given, offered.zones, 'listed');
  const now = Math.floor(nowMs / 1000);
  // The job cannot start before a given earliest (rounded up to a whole second), and must end by
  // a given deadline (rounded down). Every instant echoed is then within years 0000-9999.
  const earliest = earliestMs === undefined ? now : Math.ceil(earliestMs / 1000);
  const latest = now + limits.maxAheadHours * HOUR;
  const deadline =
    deadlineMs === undefined
      ? Math.min(earliest + limits.defaultWindowHours * HOUR, latest)
      : Math.floor(deadlineMs / 1000);
  if (deadline > latest) throw API_ERRORS.deadlineTooLate(limits.maxAheadHours);
  if (deadline - earliest > limits.maxWindowHours * HOUR) {
    throw API_ERRORS.scheduleWindowTooLong(limits.maxWindowHours);
  }
  if (deadline - earliest < durationMinutes * 60) throw API_ERRORS.jobDoesNotFit();
  const basis = interpretBasis(params);
  refuseConsumption(params);
  return {
    zones,
    durationMinutes,
    earliest,
    deadline,
    interruptible: interruptibleText === 'true',
    estimator,
    basis,
    energyKwh,
  };
}

export interface ForecastRequest {
  readonly zone: Zone;
  /** Undefined: the zone's own value (GB: the operator's forecast). */
  readonly basis: Basis | undefined;
  readonly horizonHours: number;
}

export function interpretForecast(
  params: ReadonlyMap<string, string>,
  offered: Pick<Offered, 'zones'>,
): ForecastRequest {
  const given = requiredParam(params, 'zone');
  const text = params.get('horizon_hours')?.trim();
  const horizonHours = text === undefined ? FORECAST_HORIZON.default : Number(text);
  if (
    (text !== undefined && !/^\d{1,2}$/.test(text)) ||
    horizonHours < 1 ||
    horizonHours > FORECAST_HORIZON.max
  ) {
    throw API_ERRORS.invalidHorizon(FORECAST_HORIZON.max);
  }
  const zone = requireZone(given, offered.zones);
  const basis = interpretBasis(params);
  refuseConsumption(params);
  return { zone, basis, horizonHours };
}

/** `/v1/intensity/forecast/skill`: one zone, or every zone. */
export function interpretSkill(
  params: ReadonlyMap<string, string>,
  offered: Pick<Offered, 'zones'>,
): Zone | undefined {
  const given = params.get('zone')?.trim();
  return given === undefined ? undefined : requireZone(given, offered.zones);
}

/**
 * `accounting` (extensions §15): production unless `consumption` is asked, on a server that
 * offers it, of zones that have a consumption series (`zones`: those named one by one).
 */
function interpretAccounting(
  params: ReadonlyMap<string, string>,
  offered: Offered,
  zones: readonly Zone[] | undefined,
): Accounting {
  if (accountingAsked(params) === 'production') return 'production';
  if (!offered.consumption) throw API_ERRORS.consumptionOff();
  const untraced = zones?.find((zone) => !hasConsumptionSeries(zone));
  if (untraced) throw API_ERRORS.noConsumptionSeries(untraced.code);
  return 'consumption';
}

/**
 * The `basis` member of a body (levels, statistics): the basis asked, or `default` for each
 * zone's own value; of consumption values, the basis they are on and `accounting`.
 */
export function basisOfBody(asked: {
  readonly basis: Basis | undefined;
  readonly accounting: Accounting;
}): { basis: Basis | 'default'; accounting?: 'consumption' } {
  return asked.accounting === 'consumption'
    ? { basis: asked.basis ?? CONSUMPTION_DEFAULT_BASIS, accounting: 'consumption' }
    : { basis: asked.basis ?? 'default' };
}

/** The endpoints of production values only: `accounting=consumption` is 400 there. */
function refuseConsumption(params: ReadonlyMap<string, string>): void {
  if (accountingAsked(params) === 'consumption') throw API_ERRORS.unsupportedAccounting();
}

/** `accounting` as given: production when absent; any other value than the two is 400. */
function accountingAsked(params: ReadonlyMap<string, string>): Accounting {
  const given = params.get('accounting') ?? 'production';
  const accounting = ACCOUNTINGS.find((candidate) => candidate === given);
  if (!accounting) throw API_ERRORS.invalidAccounting();
  return accounting;
}

function interpretBasis(params: ReadonlyMap<string, string>): Basis | undefined {
  const given = params.get('basis');
  if (given === undefined) return undefined;
  const basis = BASES.find((candidate) => candidate === given);
  if (!basis) throw API_ERRORS.invalidBasis();
  return basis;
}

/** A parameter every request of the endpoint gives, trimmed; absent or blank is 400. */
function requiredParam(params: ReadonlyMap<string, string>, param: 'zone' | 'zones'): string {
  const given = params.get(param)?.trim();
  if (given === undefined || given === '') throw API_ERRORS.missingParam(param);
  return given;
}

/**
 * A served zone's code, or a cloud region as `provider:region` (`aws:eu-central-1`,
 * /v1/zones/cloud); anything else is 404 (400 for a cloud region form that names none).
 */
function requireZone(given: string, registry: ZoneRegistry): Zone {
  const zone = resolveZone(given, 'v1', registry);
  if (zone) return zone;
  throw isCloudRegionForm(given)
    ? API_ERRORS.unknownCloudRegion(given)
    : API_ERRORS.unknownZone(given);
}

function instant(
  params: ReadonlyMap<string, string>,
  param: 'from' | 'to' | 'earliest' | 'deadline',
): number | undefined {
  const text = params.get(param);
  if (text === undefined) return undefined;
  const parsed = parseInstant(text.trim());
  if (parsed === undefined) throw API_ERRORS.invalidInstant(param);
  return parsed;
}

/**
 * `Link: <...>; rel="next"` of a truncated page (RFC 8288): the same request, relative to the
 * service root, with `from` set to the ts the truncation note names.
 */
export function nextPageLink(url: string, nextFrom: number): string {
  const mark = url.indexOf('?');
  const path = mark < 0 ? url : url.slice(0, mark);
  const parts = mark < 0 ? [] : url.slice(mark + 1).split('&');
  const from = `from=${formatTs(nextFrom)}`;
  const at = parts.findIndex((part) => decode(part.split('=')[0]!) === 'from');
  if (at < 0) parts.push(from);
  else parts[at] = from;
  // The raw URL may hold bytes a header value or a Link target cannot carry as they are.
  const target = `${path}?${parts.join('&')}`.replace(/[^\x21-\x7e]|[<>"]/g, (char) =>
    encodeURIComponent(char),
  );
  return `<${target}>; rel="next"`;
}

/**
 * Every value of a parameter that may be given several times (`location=a&location=b`, as the
 * Carbon Aware SDK WebAPI takes it), in order, decoded as readParams decodes; [] when absent.
 */
export function readRepeatedParam(url: string, name: string): string[] {
  const mark = url.indexOf('?');
  if (mark < 0) return [];
  const values: string[] = [];
  for (const part of url.slice(mark + 1).split('&')) {
    const equals = part.indexOf('=');
    if (decode(equals < 0 ? part : part.slice(0, equals)) !== name) continue;
    values.push(decode(equals < 0 ? '' : part.slice(equals + 1)));
  }
  return values;
}

export const LEVEL_PARAMS = Object.keys(LevelQuery.properties);

export interface LevelRequest {
  readonly zones: readonly Zone[];
  /** The one zone asked with `zone=`, as written: a zone without reading is then 404. */
  readonly single: string | undefined;
  readonly basis: Basis | undefined;
  readonly accounting: Accounting;
  readonly horizonHours: number;
}

/** `GET /v1/intensity/level` (extensions §11): one zone or a list, and the forecast's reach. */
export function interpretLevel(
  params: ReadonlyMap<string, string>,
  offered: Offered,
): LevelRequest {
  const hasZone = params.has('zone');
  const hasZones = params.has('zones');
  if (hasZone && hasZones) throw API_ERRORS.zoneOrZones();
  if (!hasZone && !hasZones) throw API_ERRORS.missingParam('zone');
  const text = params.get('horizon_hours')?.trim();
  const horizonHours = text === undefined ? LEVEL_HORIZON.default : Number(text);
  if ((text !== undefined && !/^\d{1,2}$/.test(text)) || horizonHours > LEVEL_HORIZON.max) {
    throw API_ERRORS.invalidLevelHorizon(LEVEL_HORIZON.max, LEVEL_HORIZON.default);
  }
  if (hasZone) {
    const given = params.get('zone')!.trim();
    if (given === '') throw API_ERRORS.missingParam('zone');
    const asked = interpretLatest(params, offered);
    const { basis, accounting } = asked;
    return { zones: [asked.zone!], single: given, basis, accounting, horizonHours };
  }
  const given = params.get('zones')!;
  const asked = interpretZones(given, offered.zones);
  const basis = interpretBasis(params);
  const accounting = interpretAccounting(params, offered, listedZones(given, asked));
  const zones = accounting === 'consumption' ? asked.filter(hasConsumptionSeries) : asked;
  return { zones, single: undefined, basis, accounting, horizonHours };
}

export const STATS_PARAMS = Object.keys(StatsQuery.properties);

export interface StatsRequest {
  readonly zone: Zone;
  readonly from: number;
  readonly to: number;
  readonly basis: Basis | undefined;
  readonly accounting: Accounting;
  readonly energyKwh: number | undefined;
}

/** `GET /v1/intensity/stats` (extensions §12): a window of at most MAX_STATS_DAYS, and an energy. */
export function interpretStats(
  params: ReadonlyMap<string, string>,
  nowMs: number,
  offered: Offered,
): StatsRequest {
  const window = interpretWindow(params, nowMs, offered);
  if (window.to - window.from > MAX_STATS_DAYS * 24 * HOUR) {
    throw API_ERRORS.statsWindowTooLong(MAX_STATS_DAYS);
  }
  return { ...window, energyKwh: interpretEnergy(params) };
}

/** `energy_kwh` of the schedule and the stats: a plain decimal above 0, at most maxEnergyKwh. */
function interpretEnergy(params: ReadonlyMap<string, string>): number | undefined {
  const text = params.get('energy_kwh')?.trim();
  if (text === undefined) return undefined;
  const energyKwh = /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(text) ? Number(text) : Number.NaN;
  if (!(energyKwh > 0 && energyKwh <= SCHEDULE_LIMITS.maxEnergyKwh)) {
    throw API_ERRORS.invalidEnergy();
  }
  return energyKwh;
}
