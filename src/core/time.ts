/** Time helpers shared by the API and ingestion. Pure: the clock is always passed in. */

export const HOUR = 3600;

/** Wall clock and waiting, injected so tests move time instead of sleeping. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * A signal that aborts (with a `TimeoutError`) once `ms` have passed on this clock; the
   * bound of one request. `AbortSignal.timeout` when absent.
   */
  timeout?(ms: number): AbortSignal;
}

/** A half-open interval `[fromTs, toTs)` of epoch seconds. */
export interface TimeWindow {
  readonly fromTs: number;
  readonly toTs: number;
}

/** Whether `ts` lies in the half-open window `[fromTs, toTs)`. */
export function isInWindow(ts: number, window: TimeWindow): boolean {
  return ts >= window.fromTs && ts < window.toTs;
}

/** Splits a window into consecutive pieces of at most `maxSeconds` (an upstream's span limit). */
export function splitWindow(window: TimeWindow, maxSeconds: number): TimeWindow[] {
  const pieces: TimeWindow[] = [];
  for (let fromTs = window.fromTs; fromTs < window.toTs; fromTs += maxSeconds) {
    pieces.push({ fromTs, toTs: Math.min(fromTs + maxSeconds, window.toTs) });
  }
  return pieces;
}

const DAY = 24 * HOUR;
const TWO_DIGITS = Array.from({ length: 60 }, (_, n) => String(n).padStart(2, '0'));

/**
 * Formats epoch seconds the way every response does: `2026-11-21T13:00:00Z`, as
 * `toISOString` would to the second. A whole second of a four-digit year is computed here: a
 * Date and its ISO string for each were a tenth of an export's CPU. The civil date is Howard
 * Hinnant's `civil_from_days` (https://howardhinnant.github.io/date_algorithms.html), in
 * 400-year eras of 146097 days that begin on 1 March.
 */
export function formatTs(epochSeconds: number): string {
  if (!Number.isInteger(epochSeconds) || !isServableInstant(epochSeconds)) {
    return new Date(epochSeconds * 1000).toISOString().slice(0, 19) + 'Z';
  }
  const days = Math.floor(epochSeconds / DAY);
  const second = epochSeconds - days * DAY;
  const hour = Math.floor(second / HOUR);
  const minute = Math.floor((second % HOUR) / 60);
  // Days since 0000-03-01; the eras and years below are whole from there.
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear =
    dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153); // 0 = March ... 11 = February
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  const year = era * 400 + yearOfEra + (month <= 2 ? 1 : 0);
  return (
    `${String(year).padStart(4, '0')}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}` +
    `T${TWO_DIGITS[hour]}:${TWO_DIGITS[minute]}:${TWO_DIGITS[second % 60]}Z`
  );
}

export function floorToHour(epochSeconds: number): number {
  return Math.floor(epochSeconds / HOUR) * HOUR;
}

/**
 * The window a history request uses, in epoch seconds: `to` defaults to now, `from` to 24 hours
 * before `to`. Every stored ts is a whole second, so rounding both bounds up to whole seconds
 * keeps `from <= ts < to` exactly as asked.
 */
export function resolveWindow(
  fromMs: number | undefined,
  toMs: number | undefined,
  nowMs: number,
): { from: number; to: number } {
  const to = Math.ceil((toMs ?? nowMs) / 1000);
  const from = fromMs === undefined ? to - 24 * HOUR : Math.ceil(fromMs / 1000);
  return { from, to };
}

/** The first and last instants a response can echo as a four-digit year (0000-9999, UTC). */
const FIRST_SERVABLE = Date.parse('0000-01-01T00:00:00Z') / 1000;
const LAST_SERVABLE = Date.parse('9999-12-31T23:59:59Z') / 1000;

/** Whether epoch seconds format as `YYYY-MM-DDTHH:MM:SSZ` with a four-digit year. */
export function isServableInstant(epochSeconds: number): boolean {
  return epochSeconds >= FIRST_SERVABLE && epochSeconds <= LAST_SERVABLE;
}

// ISO 8601 / RFC 3339 forms accepted in `from`/`to` (decisions.md, "Timestamps accepted").
const ACCEPTED =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:\d{2})?)?$/;

export const ACCEPTED_EXAMPLE = '2026-11-21T13:00:00Z';

/**
 * Parses a `from`/`to` value into epoch milliseconds, or returns undefined when it is not one of
 * the accepted forms or names no real instant (month 13, 30 February, hour 24...).
 * A value without `Z` or an offset is read as UTC.
 */
export function parseInstant(text: string): number | undefined {
  const match = ACCEPTED.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', fraction = '', zone = 'Z'] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const offsetHours = Number(zone.slice(1, 3));
    const offsetMins = Number(zone.slice(4, 6));
    if (offsetHours > 23 || offsetMins > 59) return undefined;
    offsetMinutes = sign * (offsetHours * 60 + offsetMins);
  }
  // Sub-millisecond digits round up, so that `from` rounds up to the next whole second even from
  // 13:00:00.0001 (every stored ts is a whole second: `from <= ts` keeps its meaning).
  const millis = Number((fraction + '000').slice(0, 3)) + (/[1-9]/.test(fraction.slice(3)) ? 1 : 0);
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  // Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear keeps them as written.
  const date = new Date(utc);
  date.setUTCFullYear(year);
  return date.getTime() - offsetMinutes * 60_000;
}

function daysInMonth(year: number, month: number): number {
  // The Gregorian calendar repeats every 400 years; shifting keeps Date.UTC away from years 0-99.
  return new Date(Date.UTC(2000 + (year % 400), month, 0)).getUTCDate();
}
