import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/http/contract/errors.js';
import {
  FORECAST_HORIZON,
  LEVEL_HORIZON,
  limitText,
  MAX_EXPORT_DAYS,
  MAX_STATS_DAYS,
  SCHEDULE_LIMITS,
} from '../src/http/contract/limits.js';
import {
  EXPORT_PARAMS,
  FORECAST_PARAMS,
  interpretExport,
  interpretForecast,
  interpretLatest,
  interpretLevel,
  LATEST_PARAMS,
  interpretStats,
  LEVEL_PARAMS,
  STATS_PARAMS,
  interpretSchedule,
  readParams,
  SCHEDULE_PARAMS,
  offeredBy,
} from '../src/http/contract/params.js';
import {
  ExportQuery,
  ForecastQuery,
  ForecastResponse,
  LatestQuery,
  LevelQuery,
  ScheduleQuery,
  ScheduleResponse,
  StatsQuery,
} from '../src/http/contract/schemas.js';

/**
 * The query interpreter (hand-written, for its error order and wording) accepts exactly what the
 * OpenAPI schemas describe, with the defaults they state: generated query strings, each value
 * either inside or outside what the schema allows.
 */

const NOW = Date.UTC(2026, 10, 21, 13, 20);
const RUNS = { numRuns: 300 };
/** A server with FLOWS=on: consumption values are offered. */
const OFFERED = offeredBy({ flows: true });
const LATEST_DEADLINE = new Date(NOW + SCHEDULE_LIMITS.maxAheadHours * 3_600_000).toISOString();

/** Whether interpreting throws the API's 400; rethrows anything else. */
function refused(interpret: () => unknown): boolean {
  try {
    interpret();
    return false;
  } catch (error) {
    if (error instanceof ApiError && error.statusCode === 400) return true;
    throw error;
  }
}

/** The literals a schema union (or literal) allows. */
const literals = (schema: { anyOf?: { const: string }[]; const?: string }): string[] =>
  schema.anyOf ? schema.anyOf.map((member) => member.const) : [schema.const!];

/** Text that is sometimes an allowed literal, sometimes a near miss. */
const aroundLiterals = (allowed: readonly string[]) =>
  fc.oneof(
    fc.constantFrom(...allowed),
    fc.constantFrom(...allowed).map((text) => text.toUpperCase()),
    fc.string({ maxLength: 8 }),
  );

/** Whole numbers around [minimum, maximum], and some text that is no whole number. */
const aroundRange = (minimum: number, maximum: number) =>
  fc.oneof(
    fc.integer({ min: minimum - 3, max: maximum + 3 }).map(String),
    fc.integer({ min: -1e6, max: 1e6 }).map(String),
    fc.constantFrom('1.5', '', ' ', '1e2', '0x10', '+5', 'NaN'),
  );

const isWhole = (text: string) => /^\d+$/.test(text.trim());

describe('the query interpreter and the schemas', () => {
  it('horizon_hours: a whole number within the response schema bounds, default as stated', () => {
    const { minimum, maximum } = ForecastResponse.properties.horizon_hours;
    expect([minimum, maximum]).toEqual([1, FORECAST_HORIZON.max]);
    expect(ForecastQuery.properties.horizon_hours.description).toContain(
      `Default: ${FORECAST_HORIZON.default}.`,
    );
    expect(interpretForecast(readParams('/?zone=DE', FORECAST_PARAMS), OFFERED).horizonHours).toBe(
      FORECAST_HORIZON.default,
    );
    fc.assert(
      fc.property(aroundRange(minimum!, maximum!), (text) => {
        const url = `/?zone=DE&horizon_hours=${encodeURIComponent(text)}`;
        const inRange = isWhole(text) && Number(text) >= minimum! && Number(text) <= maximum!;
        const attempt = () => interpretForecast(readParams(url, FORECAST_PARAMS), OFFERED);
        expect(refused(attempt)).toBe(!inRange);
        if (inRange) expect(attempt().horizonHours).toBe(Number(text));
      }),
      RUNS,
    );
  });

  it('level horizon_hours: a whole number from 0 to the stated maximum, default as stated', () => {
    expect(LevelQuery.properties.horizon_hours.description).toContain(
      `from 0 to ${LEVEL_HORIZON.max}. Default: ${LEVEL_HORIZON.default}.`,
    );
    expect(interpretLevel(readParams('/?zone=DE', LEVEL_PARAMS), OFFERED).horizonHours).toBe(
      LEVEL_HORIZON.default,
    );
    fc.assert(
      fc.property(aroundRange(0, LEVEL_HORIZON.max), (text) => {
        const url = `/?zone=DE&horizon_hours=${encodeURIComponent(text)}`;
        const inRange = isWhole(text) && Number(text) <= LEVEL_HORIZON.max;
        const attempt = () => interpretLevel(readParams(url, LEVEL_PARAMS), OFFERED);
        expect(refused(attempt)).toBe(!inRange);
        if (inRange) expect(attempt().horizonHours).toBe(Number(text));
      }),
      RUNS,
    );
  });

  it('stats and export windows: at most their stated number of days', () => {
    const cases = [
      {
        maxDays: MAX_STATS_DAYS,
        base: '/?zone=DE',
        run: (url: string) => interpretStats(readParams(url, STATS_PARAMS), NOW, OFFERED),
      },
      {
        maxDays: MAX_EXPORT_DAYS,
        base: '/?zones=DE',
        run: (url: string) => interpretExport(readParams(url, EXPORT_PARAMS), NOW, OFFERED),
      },
    ];
    const to = Date.UTC(2026, 10, 1);
    for (const { maxDays, base, run } of cases) {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: maxDays * 24 + 72 }), (hours) => {
          const from = new Date(to - hours * 3_600_000).toISOString();
          const url = `${base}&from=${from}&to=${new Date(to).toISOString()}`;
          expect(
            refused(() => run(url)),
            `${hours} h`,
          ).toBe(hours > maxDays * 24);
        }),
        RUNS,
      );
    }
  });

  it('duration_minutes: a whole number within the response schema bounds, default as stated', () => {
    const { minimum, maximum } = ScheduleResponse.properties.duration_minutes;
    expect([minimum, maximum]).toEqual([1, SCHEDULE_LIMITS.maxDurationMinutes]);
    expect(ScheduleQuery.properties.duration_minutes.description).toContain(
      `Default ${SCHEDULE_LIMITS.defaultDurationMinutes}.`,
    );
    fc.assert(
      fc.property(aroundRange(minimum!, maximum!), (text) => {
        // The longest window, so that every job the bounds allow fits in it.
        const url = `/?zones=DE&deadline=${LATEST_DEADLINE}&duration_minutes=${encodeURIComponent(text)}`;
        const inRange = isWhole(text) && Number(text) >= minimum! && Number(text) <= maximum!;
        const attempt = () => interpretSchedule(readParams(url, SCHEDULE_PARAMS), NOW, OFFERED);
        expect(refused(attempt)).toBe(!inRange);
        if (inRange) expect(attempt().durationMinutes).toBe(Number(text));
      }),
      RUNS,
    );
  });

  it('the enumerated parameters: exactly the literals of their schemas', () => {
    const cases = [
      {
        name: 'format',
        schema: ExportQuery.properties.format,
        base: '/?zones=DE',
        params: EXPORT_PARAMS,
        run: (url: string) => interpretExport(readParams(url, EXPORT_PARAMS), NOW, OFFERED),
      },
      {
        name: 'include',
        schema: ExportQuery.properties.include,
        base: '/?zones=DE',
        params: EXPORT_PARAMS,
        run: (url: string) => interpretExport(readParams(url, EXPORT_PARAMS), NOW, OFFERED),
      },
      {
        name: 'basis',
        schema: ForecastQuery.properties.basis,
        base: '/?zone=DE',
        params: FORECAST_PARAMS,
        run: (url: string) => interpretForecast(readParams(url, FORECAST_PARAMS), OFFERED),
      },
      {
        name: 'accounting',
        schema: LatestQuery.properties.accounting,
        base: '/?zone=DE',
        params: LATEST_PARAMS,
        run: (url: string) => interpretLatest(readParams(url, LATEST_PARAMS), OFFERED),
      },
      {
        name: 'accounting',
        schema: ForecastQuery.properties.accounting,
        base: '/?zone=DE',
        params: FORECAST_PARAMS,
        run: (url: string) => interpretForecast(readParams(url, FORECAST_PARAMS), OFFERED),
      },
      {
        name: 'estimator',
        schema: ScheduleQuery.properties.estimator,
        base: '/?zones=DE',
        params: SCHEDULE_PARAMS,
        run: (url: string) => interpretSchedule(readParams(url, SCHEDULE_PARAMS), NOW, OFFERED),
      },
      {
        name: 'interruptible',
        schema: ScheduleQuery.properties.interruptible,
        base: '/?zones=DE',
        params: SCHEDULE_PARAMS,
        run: (url: string) => interpretSchedule(readParams(url, SCHEDULE_PARAMS), NOW, OFFERED),
      },
    ];
    for (const { name, schema, base, run } of cases) {
      const allowed = literals(schema as never);
      expect(allowed.length, name).toBeGreaterThan(0);
      fc.assert(
        fc.property(aroundLiterals(allowed), (text) => {
          const url = `${base}&${name}=${encodeURIComponent(text)}`;
          expect(
            refused(() => run(url)),
            `${name}=${text}`,
          ).toBe(!allowed.includes(text.trim()));
        }),
        RUNS,
      );
    }
  });

  it('energy_kwh of the schedule and the stats: a plain decimal above 0, at most the stated maximum', () => {
    const { maxEnergyKwh } = SCHEDULE_LIMITS;
    for (const schema of [ScheduleQuery, StatsQuery]) {
      expect(schema.properties.energy_kwh.description).toContain(
        `above 0 (at most ${limitText(maxEnergyKwh)})`,
      );
    }
    const cases = [
      (url: string) =>
        interpretSchedule(readParams(`/?zones=DE&${url}`, SCHEDULE_PARAMS), NOW, OFFERED),
      (url: string) => interpretStats(readParams(`/?zone=DE&${url}`, STATS_PARAMS), NOW, OFFERED),
    ];
    const energyText = fc.oneof(
      fc.double({ min: -10, max: 2 * maxEnergyKwh, noNaN: true }).map(String),
      fc.constantFrom('0', '0.0', '.5', '5.', '1e3', '-1', '', 'abc', String(maxEnergyKwh)),
      fc.constantFrom(String(maxEnergyKwh + 1e4), '1000000000000.5', ' 12.5 '),
    );
    for (const run of cases) {
      fc.assert(
        fc.property(energyText, (text) => {
          const plain = /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(text.trim());
          const allowed = plain && Number(text) > 0 && Number(text) <= maxEnergyKwh;
          const attempt = () => run(`energy_kwh=${encodeURIComponent(text)}`);
          expect(refused(attempt), text).toBe(!allowed);
          if (allowed) expect(attempt().energyKwh).toBe(Number(text));
        }),
        RUNS,
      );
    }
  });

  it('the schedule deadline: at most the stated hours after the request time and after earliest', () => {
    const { maxAheadHours, maxWindowHours } = SCHEDULE_LIMITS;
    const description = ScheduleQuery.properties.deadline.description;
    expect(description).toContain(`at most ${maxAheadHours} hours after the request time`);
    const now = Math.floor(NOW / 1000);
    fc.assert(
      fc.property(
        fc.integer({ min: -48 * 60, max: 96 * 60 }),
        fc.integer({ min: 1, max: 100 * 60 }),
        (earliestMinutes, windowMinutes) => {
          const earliest = now + earliestMinutes * 60;
          const deadline = earliest + windowMinutes * 60;
          const url =
            `/?zones=DE&duration_minutes=1&earliest=${new Date(earliest * 1000).toISOString()}` +
            `&deadline=${new Date(deadline * 1000).toISOString()}`;
          const allowed =
            deadline <= now + maxAheadHours * 3600 && deadline - earliest <= maxWindowHours * 3600;
          const attempt = () => interpretSchedule(readParams(url, SCHEDULE_PARAMS), NOW, OFFERED);
          expect(refused(attempt)).toBe(!allowed);
          if (allowed) expect(attempt().deadline).toBe(deadline);
        },
      ),
      RUNS,
    );
  });
});
