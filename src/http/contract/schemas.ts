import { Type, type Static } from '@sinclair/typebox';
import {
  FORECAST_HORIZON,
  LEVEL_HORIZON,
  limitText,
  MAX_POINTS,
  SCHEDULE_LIMITS,
} from './limits.js';
import { BASES, CATEGORIES } from '../../core/factors.js';
import { LEVEL_THRESHOLDS, LEVELS } from '../../core/level.js';
import { ACCOUNTINGS, METHODS } from '../../core/reading.js';
import { TRACED_CATEGORIES } from '../../core/consumption/trace-hour.js';
import { apiCategory } from '../transport/encode.js';
import { SOURCES } from '../../core/sources.js';
import { UNIT } from '../../core/units.js';

/**
 * The single source of truth for the wire format: these schemas drive response serialization
 * (property order included) and become the OpenAPI document. They do not validate queries: the
 * one hand-written interpreter (params.ts) does, for its error order and wording, and
 * test/contract-conformance.test.ts checks that it accepts exactly what the query schemas state. Routes whose
 * schema has nullable members (stats, level, schedule, forecast skill) and the static bodies
 * (factors, cloud zones) build their bodies in the schema's order and send JSON.stringify of
 * them: the serializer's Ajv checks of such members cost tens of ms (issue 21). Their member
 * order is then the code's: keep it in step with the schema's.
 */

const DateTime = Type.String({
  format: 'date-time',
  description: 'UTC, second precision, Z suffix, START of the interval.',
  examples: ['2026-11-21T13:00:00Z'],
});
const Unit = Type.Literal(UNIT);
const MethodName = Type.Union(
  METHODS.map((method) => Type.Literal(method)),
  { description: 'How the value was obtained; see the method table of the spec.' },
);
const SourceName = Type.Union(SOURCES.map((source) => Type.Literal(source)));
const Gco2 = Type.Number({
  description: 'Average carbon intensity of generation over the interval, 1 decimal.',
});

const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'What went wrong.' }),
    hint: Type.Optional(Type.String({ description: 'How to fix the request.' })),
  },
  { $id: 'Error', additionalProperties: false },
);
type ErrorBody = Static<typeof ErrorBody>;

const HistoryReading = Type.Object(
  { ts: DateTime, gco2eq_kwh: Gco2, method: MethodName },
  { $id: 'HistoryReading', additionalProperties: false },
);

const ZoneReading = Type.Object(
  { zone: Type.String(), ts: DateTime, gco2eq_kwh: Gco2, method: MethodName },
  { $id: 'ZoneReading', additionalProperties: false },
);

const LatestResponse = Type.Object(
  { unit: Unit, data: Type.Array(Type.Ref(ZoneReading)) },
  { $id: 'LatestResponse', additionalProperties: false },
);
type LatestResponse = Static<typeof LatestResponse>;

const HistoryResponse = Type.Object(
  {
    zone: Type.String({ description: 'Canonical code of the zone requested.' }),
    from: DateTime,
    to: DateTime,
    unit: Unit,
    count: Type.Integer({ minimum: 0 }),
    truncated: Type.Boolean({ description: `True when the ${MAX_POINTS}-point cap was hit.` }),
    note: Type.Optional(
      Type.String({ description: 'Present only when truncated: where to continue.' }),
    ),
    data: Type.Array(Type.Ref(HistoryReading), { description: 'Ascending by ts.' }),
  },
  { $id: 'HistoryResponse', additionalProperties: false },
);
type HistoryResponse = Static<typeof HistoryResponse>;

const Zone = Type.Object(
  {
    zone: Type.String(),
    name: Type.String(),
    source: SourceName,
    resolution_min: Type.Integer({ enum: [30, 60] }),
  },
  { $id: 'Zone', additionalProperties: false },
);
export const ZonesResponse = Type.Object(
  { data: Type.Array(Type.Ref(Zone)) },
  { $id: 'ZonesResponse', additionalProperties: false },
);
export type ZonesResponse = Static<typeof ZonesResponse>;

const StatusSource = Type.Object(
  {
    source: SourceName,
    zones: Type.Integer(),
    freshest_lag_hours: Type.Number(),
    stalest_lag_hours: Type.Number(),
    stale_after_hours: Type.Number(),
    ok: Type.Boolean(),
  },
  { $id: 'StatusSource', additionalProperties: false },
);
export const StatusResponse = Type.Object(
  {
    ok: Type.Boolean(),
    ts: DateTime,
    note: Type.String(),
    sources: Type.Array(Type.Ref(StatusSource)),
  },
  { $id: 'StatusResponse', additionalProperties: false },
);
export type StatusResponse = Static<typeof StatusResponse>;

const Liveness = Type.Object(
  { ok: Type.Boolean(), ts: DateTime },
  { $id: 'Liveness', additionalProperties: false },
);

export const IndexResponse = Type.Object(
  {
    name: Type.String(),
    description: Type.String(),
    unit: Unit,
    endpoints: Type.Object({
      health: Type.String(),
      zones: Type.String(),
      latest: Type.String(),
      intensity: Type.String(),
    }),
    other_endpoints: Type.Object({
      cloud_zones: Type.String(),
      status: Type.String(),
      openapi: Type.String(),
      mix: Type.String(),
      factors: Type.String(),
      export: Type.String(),
      stream: Type.String(),
      forecast: Type.String(),
      schedule: Type.String(),
      level: Type.String(),
      stats: Type.String(),
      subscriptions: Type.String(),
    }),
    openapi: Type.String({ description: 'Path of the OpenAPI 3.1 document.' }),
    attribution: Type.String(),
    status: Type.String({ description: 'Maturity stage.' }),
  },
  { $id: 'IndexResponse' },
);
export type IndexResponse = Static<typeof IndexResponse>;

const Category = Type.Union(
  CATEGORIES.map((category) => Type.Literal(apiCategory(category))),
  { description: 'A fuel category of the method (docs/method.md).' },
);

const MixPoint = Type.Object(
  {
    ts: DateTime,
    generation: Type.Partial(
      Type.Object(
        Object.fromEntries(CATEGORIES.map((category) => [apiCategory(category), Type.Number()])),
      ),
      {
        additionalProperties: false,
        description:
          'Generation per fuel category with a value in the interval, 1 decimal, in `unit`. ' +
          'Storage and imports are not listed.',
      },
    ),
    renewable_pct: Type.Number({
      description: 'Biomass, geothermal, hydro, solar, wind and marine over the total, in %.',
    }),
    low_carbon_pct: Type.Number({ description: 'Renewable plus nuclear over the total, in %.' }),
  },
  { $id: 'MixPoint', additionalProperties: false },
);

const ConsumptionMixPoint = Type.Object(
  {
    ts: DateTime,
    consumption: Type.Partial(
      Type.Object(
        Object.fromEntries(
          TRACED_CATEGORIES.map((category) => [apiCategory(category), Type.Number()]),
        ),
      ),
      {
        additionalProperties: false,
        description:
          'What the zone consumed in the hour, MWh, by the fuel category it was generated as ' +
          '(in the zone or by the neighbours it imported from, traced through the flows), 1 ' +
          'decimal; `imported_estimated`: imports from neighbours without an hourly mix.',
      },
    ),
    imports: Type.Record(Type.String(), Type.Number(), {
      description: 'Net flow into the zone from each neighbour that exported to it, MWh.',
    }),
    exports: Type.Record(Type.String(), Type.Number(), {
      description: 'Net flow out of the zone to each neighbour it exported to, MWh.',
    }),
    estimated_pct: Type.Number({ description: 'The share of `imported_estimated`, in %.' }),
    estimated_borders: Type.Array(Type.String(), {
      description:
        'The neighbours whose flow of the hour was not published yet: their newest flow of ' +
        'the previous 6 hours (else 0) stands in until it is.',
    }),
    renewable_pct: Type.Number({ description: 'Renewable over the consumption, in %.' }),
    low_carbon_pct: Type.Number({
      description: 'Renewable plus nuclear over the consumption, in %.',
    }),
  },
  { $id: 'ConsumptionMixPoint', additionalProperties: false },
);

const MixResponse = Type.Object(
  {
    zone: Type.String({ description: 'Canonical code of the zone requested.' }),
    from: DateTime,
    to: DateTime,
    unit: Type.Union([Type.Literal('MWh'), Type.Literal('%')], {
      description: 'MWh of energy in the interval (Europe, US), or % of generation (GB).',
    }),
    count: Type.Integer({ minimum: 0 }),
    truncated: Type.Boolean({ description: `True when the ${MAX_POINTS}-point cap was hit.` }),
    note: Type.Optional(
      Type.String({ description: 'Present only when truncated: where to continue.' }),
    ),
    data: Type.Array(Type.Union([Type.Ref(MixPoint), Type.Ref(ConsumptionMixPoint)]), {
      description:
        'The published intervals only (never an incomplete mix), ascending by ts: MixPoints, ' +
        'or with accounting=consumption, ConsumptionMixPoints (always MWh).',
    }),
  },
  { $id: 'MixResponse', additionalProperties: false },
);

const FactorsOfBasis = Type.Object(
  {
    method: MethodName,
    factors: Type.Record(
      Category,
      Type.Object(
        { value: Type.Number({ description: `${UNIT}.` }), source: Type.String() },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const FactorsResponse = Type.Object(
  {
    unit: Unit,
    bases: Type.Object(
      { lifecycle: FactorsOfBasis, direct: FactorsOfBasis },
      { additionalProperties: false },
    ),
    mappings: Type.Record(
      SourceName,
      Type.Record(Type.String(), Type.String(), {
        description: 'Upstream code to category, or `excluded` (storage, imports).',
      }),
      { description: "How each upstream's codes map to the categories." },
    ),
    unsolved_neighbours: Type.Array(
      Type.Object(
        {
          codes: Type.Array(Type.String(), { description: 'Its codes as a flow-graph node.' }),
          area: Type.String(),
          year: Type.Integer({ description: 'The year its mix describes.' }),
          lifecycle: Type.Number({ description: 'gCO2eq/kWh with the lifecycle factors.' }),
          direct: Type.Number({ description: 'gCO2eq/kWh with the direct factors.' }),
          source: Type.String(),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'With accounting=consumption: the annual intensities at which imports from ' +
          'neighbours that never publish an hourly mix are counted (docs/method.md).',
      },
    ),
  },
  { $id: 'FactorsResponse', additionalProperties: false },
);
export type FactorsResponse = Static<typeof FactorsResponse>;

const ScheduleSlot = Type.Object(
  {
    ts: DateTime,
    gco2eq_kwh: Type.Number({ description: 'The value planned on for this interval, 1 decimal.' }),
  },
  { additionalProperties: false },
);

const scheduleWindowFields = {
  zone: Type.String({ description: 'Canonical code of the zone.' }),
  start: Type.String({
    ...DateTime,
    description: "Start of the first interval the job runs in (on the zone's grid).",
  }),
  end: Type.String({
    ...DateTime,
    description:
      'End of the last interval it runs in: the duration rounded up to whole intervals of the ' +
      'zone (for an interruptible job, the end of its last slot).',
  }),
  gco2eq_kwh: Type.Number({
    description:
      'Mean intensity over the intervals the job runs in, 1 decimal: published values for past ' +
      'intervals, the forecast (or its p90) for the others.',
  }),
};

export const ScheduleWindow = Type.Object(scheduleWindowFields, {
  $id: 'ScheduleWindow',
  additionalProperties: false,
});

export const ScheduleResponse = Type.Object(
  {
    unit: Unit,
    basis: Type.Union([Type.Literal('default'), ...BASES.map((basis) => Type.Literal(basis))], {
      description:
        "The basis asked, or `default` without one: each zone's own value (GB: the operator's).",
    }),
    estimator: Type.Union([Type.Literal('expected'), Type.Literal('p90')]),
    duration_minutes: Type.Integer({ minimum: 1, maximum: SCHEDULE_LIMITS.maxDurationMinutes }),
    earliest: Type.String({ ...DateTime, description: 'The earliest start used.' }),
    deadline: Type.String({ ...DateTime, description: 'The deadline used (exclusive).' }),
    best: Type.Object(
      {
        ...scheduleWindowFields,
        slots: Type.Optional(
          Type.Array(ScheduleSlot, {
            description: 'Only with interruptible=true: the intervals the job runs in, by ts.',
          }),
        ),
      },
      {
        additionalProperties: false,
        description: 'The lowest mean of all: the first of `options`.',
      },
    ),
    now: Type.Union([Type.Ref(ScheduleWindow), Type.Null()], {
      description:
        'The job run in one stretch from the first interval boundary at or after `earliest`, in ' +
        'the first zone listed; null when that stretch has no values (then `note` says why).',
    }),
    savings: Type.Union(
      [
        Type.Object(
          {
            gco2eq_kwh: Type.Number({ description: '`now` minus `best`, per kWh, 1 decimal.' }),
            pct: Type.Number({ description: 'The saving over `now`, in %, 1 decimal.' }),
            grams: Type.Optional(
              Type.Number({ description: 'Only with energy_kwh: the saving times energy_kwh.' }),
            ),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'Of `best` over `now`; null when `now` is null.' },
    ),
    options: Type.Array(Type.Ref(ScheduleWindow), {
      description:
        'The best window of every zone that has one, ascending by gco2eq_kwh (ties: earlier ' +
        'start, then the zone listed first).',
    }),
    note: Type.Optional(
      Type.String({
        description: 'Only when a zone asked is left out of options, or `now` is null: why.',
      }),
    ),
  },
  { $id: 'ScheduleResponse', additionalProperties: false },
);
export type ScheduleResponse = Static<typeof ScheduleResponse>;

const ForecastBasisName = Type.Union(
  [...BASES.map((basis) => Type.Literal(basis)), Type.Literal('operator')],
  {
    description:
      'The basis forecast: `lifecycle` or `direct`, or `operator` for GB asked without a basis ' +
      "(the operator's own forecast).",
  },
);
const BandValue = Type.Union([Type.Number(), Type.Null()], {
  description:
    'From the measured out-of-sample errors of the model at this horizon (walk-forward ' +
    'backtest), 1 decimal; null until the backtest has measured them.',
});

const ForecastPoint = Type.Object(
  {
    ts: DateTime,
    gco2eq_kwh: Type.Number({ description: 'The expected value of the interval, 1 decimal.' }),
    p10: BandValue,
    p90: BandValue,
  },
  { $id: 'ForecastPoint', additionalProperties: false },
);

export const ForecastResponse = Type.Object(
  {
    zone: Type.String({ description: 'Canonical code of the zone requested.' }),
    unit: Unit,
    basis: ForecastBasisName,
    model: Type.Union([Type.String(), Type.Null()], {
      description:
        '`name@version` of the model of the first interval (each horizon bucket is served by ' +
        'the model that backtests best there; docs/forecast.md); null when count is 0.',
      examples: ['upstream-regression@1'],
    }),
    generated_at: Type.Union([DateTime, Type.Null()], {
      description: 'When this forecast was computed; null when count is 0.',
    }),
    horizon_hours: Type.Integer({ minimum: 1, maximum: FORECAST_HORIZON.max }),
    count: Type.Integer({ minimum: 0 }),
    note: Type.Optional(Type.String({ description: 'Present only when count is 0: why.' })),
    data: Type.Array(Type.Ref(ForecastPoint), {
      description:
        "Every interval after the zone's newest published reading up to now + horizon_hours, " +
        'ascending by ts (for the US, the recent hours the EIA has not published yet too).',
    }),
  },
  { $id: 'ForecastResponse', additionalProperties: false },
);
export type ForecastResponse = Static<typeof ForecastResponse>;

const Ratio = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

export const SkillRow = Type.Object(
  {
    zone: Type.String(),
    basis: ForecastBasisName,
    bucket: Type.Union(
      ['1-6', '7-24', '25-48', '49-72'].map((label) => Type.Literal(label)),
      { description: 'Hours ahead of the issue time.' },
    ),
    model: Type.String({ description: 'The model serving this zone, basis and bucket.' }),
    from: Type.Union([DateTime, Type.Null()], { description: 'First issue time evaluated.' }),
    to: Type.Union([DateTime, Type.Null()], { description: 'Last issue time evaluated.' }),
    issues: Type.Integer({ minimum: 0, description: 'Issue times evaluated, one a day.' }),
    n: Type.Integer({ minimum: 0, description: 'Intervals scored.' }),
    mae: Ratio(`Mean absolute error, ${UNIT}, 1 decimal.`),
    rmse: Ratio(`Root mean squared error, ${UNIT}, 1 decimal.`),
    mape: Ratio('Mean absolute percentage error, %, 1 decimal.'),
    skill_vs_persistence: Ratio('1 - RMSE / RMSE of the last published value held, 3 decimals.'),
    skill_vs_climatology: Ratio(
      '1 - RMSE / RMSE of the hour-of-week mean of the last 10 weeks, 3 decimals.',
    ),
    spearman: Ratio('Mean per issue of the rank correlation within the bucket, 3 decimals.'),
    p10_p90_coverage: Ratio('Share of outcomes inside the P10-P90 band, 3 decimals.'),
    savings_captured: Ratio(
      'For a 4-hour job placed in the next 24 h by the forecast: reduction achieved against ' +
        'starting at once over the reduction of the best placement in hindsight, 3 decimals.',
    ),
  },
  { $id: 'SkillRow', additionalProperties: false },
);

export const SkillResponse = Type.Object(
  {
    generated_at: Type.Union([DateTime, Type.Null()], {
      description: 'When the backtest ran; null when none has yet.',
    }),
    count: Type.Integer({ minimum: 0 }),
    note: Type.Optional(Type.String({ description: 'Present only when count is 0: why.' })),
    data: Type.Array(Type.Ref(SkillRow), {
      description: 'Per zone (in the order of /v1/zones), basis and horizon bucket.',
    }),
  },
  { $id: 'SkillResponse', additionalProperties: false },
);
export type SkillResponse = Static<typeof SkillResponse>;

const LevelName = Type.Union(
  LEVELS.map((level) => Type.Literal(level)),
  {
    description:
      'The band of the percentile (thresholds): very-low, low, moderate, high, very-high.',
  },
);
const Percentile = Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()], {
  description:
    'Mid-rank percentile of the value within the reference window, ' +
    '100 * (count(x < v) + 0.5 * count(x == v)) / n, 1 decimal; null when the window holds ' +
    'fewer than 7 days.',
});
const LevelOrNull = Type.Union([LevelName, Type.Null()]);

const LevelEntry = Type.Object(
  {
    zone: Type.String(),
    reference: Type.Object(
      {
        from: DateTime,
        to: Type.String({
          format: 'date-time',
          description: 'Exclusive: the end of the newest interval.',
        }),
        count: Type.Integer({ minimum: 0, description: 'Published values in the window.' }),
      },
      {
        additionalProperties: false,
        description:
          "The zone's published values on the basis over the 30 days (720 hours; GB 1440 half " +
          'hours) ending with its newest published reading.',
      },
    ),
    now: Type.Object(
      {
        ts: DateTime,
        gco2eq_kwh: Gco2,
        method: MethodName,
        percentile: Percentile,
        level: LevelOrNull,
      },
      { additionalProperties: false, description: 'The newest published reading.' },
    ),
    forecast: Type.Array(
      Type.Object(
        {
          ts: DateTime,
          gco2eq_kwh: Type.Number({ description: 'The forecast value, 1 decimal.' }),
          percentile: Percentile,
          level: LevelOrNull,
        },
        { additionalProperties: false },
      ),
      {
        description:
          "The served forecast's intervals (as /v1/intensity/forecast) up to now.ts + " +
          'horizon_hours; empty for horizon_hours=0 or without a forecast.',
      },
    ),
    note: Type.Optional(
      Type.String({ description: 'Present when the reference window holds fewer than 7 days.' }),
    ),
  },
  { $id: 'LevelEntry', additionalProperties: false },
);

/** Only in bodies of consumption values (extensions §15); production bodies are as before. */
const ConsumptionMarker = Type.Literal('consumption', {
  description:
    'Present with accounting=consumption: the values are consumption-based, on `basis` ' +
    '(lifecycle unless asked).',
});

export const LevelResponse = Type.Object(
  {
    unit: Unit,
    basis: Type.Union([...BASES.map((basis) => Type.Literal(basis)), Type.Literal('default')], {
      description: "The basis asked, or `default` for each zone's own value.",
    }),
    accounting: Type.Optional(ConsumptionMarker),
    window_days: Type.Literal(30),
    thresholds: Type.Object(
      {
        'very-low': Type.Literal(LEVEL_THRESHOLDS['very-low']),
        low: Type.Literal(LEVEL_THRESHOLDS.low),
        moderate: Type.Literal(LEVEL_THRESHOLDS.moderate),
        high: Type.Literal(LEVEL_THRESHOLDS.high),
      },
      {
        additionalProperties: false,
        description:
          'Each level holds the percentiles below its figure and at or above the one before; ' +
          'very-high is 90 and above.',
      },
    ),
    data: Type.Array(Type.Ref(LevelEntry), { description: 'Zones in the order of /v1/zones.' }),
  },
  { $id: 'LevelResponse', additionalProperties: false },
);
export type LevelResponse = Static<typeof LevelResponse>;

const Stat = (description: string) =>
  Type.Union([Type.Number(), Type.Null()], { description: `${description} Null when count is 0.` });

export const StatsResponse = Type.Object(
  {
    zone: Type.String({ description: 'Canonical code of the zone requested.' }),
    basis: Type.Union([...BASES.map((basis) => Type.Literal(basis)), Type.Literal('default')], {
      description: "The basis asked, or `default` for each zone's own value.",
    }),
    accounting: Type.Optional(ConsumptionMarker),
    unit: Unit,
    from: DateTime,
    to: Type.String({ format: 'date-time', description: 'Window end, exclusive.' }),
    count: Type.Integer({ minimum: 0, description: 'Published points with from <= ts < to.' }),
    coverage: Type.Number({
      minimum: 0,
      maximum: 1,
      description: 'Covered duration over window duration, 3 decimals.',
    }),
    mean: Stat('Time-weighted mean (each point weighs its resolution), 1 decimal.'),
    min: Stat('Lowest value.'),
    max: Stat('Highest value.'),
    p10: Stat('10th percentile, linear interpolation, each value weighted by its duration.'),
    p50: Stat('Median, as p10.'),
    p90: Stat('90th percentile, as p10.'),
    by_hour_utc: Type.Array(Type.Union([Type.Number(), Type.Null()]), {
      minItems: 24,
      maxItems: 24,
      description: 'Mean of the values whose ts has UTC hour h, at index h; null when none.',
    }),
    energy_kwh: Type.Optional(Type.Number({ description: 'Echoed when given.' })),
    emissions_g: Type.Optional(
      Stat('energy_kwh spread evenly over the window: energy_kwh * mean, in grams, 1 decimal.'),
    ),
  },
  { $id: 'StatsResponse', additionalProperties: false },
);
export type StatsResponse = Static<typeof StatsResponse>;

/** Every schema with an $id, registered once so routes and OpenAPI share them. */
export const SHARED_SCHEMAS = [
  LevelEntry,
  LevelResponse,
  StatsResponse,
  ForecastPoint,
  ForecastResponse,
  SkillRow,
  SkillResponse,
  ScheduleWindow,
  ScheduleResponse,
  MixPoint,
  ConsumptionMixPoint,
  MixResponse,
  FactorsResponse,
  ErrorBody,
  HistoryReading,
  ZoneReading,
  LatestResponse,
  HistoryResponse,
  Zone,
  ZonesResponse,
  StatusSource,
  StatusResponse,
  Liveness,
  IndexResponse,
];

const ZoneParam = Type.String({
  description: 'Zone code from /v1/zones, case-insensitive, given once.',
  examples: ['DE'],
});
const InstantParam = Type.String({
  description:
    'ISO 8601 / RFC 3339: 2026-11-21, 2026-11-21T13:00Z, 2026-11-21T13:00:00Z, ' +
    '2026-11-21T13:00:00.000Z or with an offset such as +01:00. Without Z or offset: UTC.',
  examples: ['2026-11-21T13:00:00Z'],
});

const BasisParam = Type.Union(
  BASES.map((basis) => Type.Literal(basis)),
  {
    description:
      'Values computed from the generation mix on one basis for every zone, GB included: ' +
      '`lifecycle` (method computed:v1) or `direct` (computed:v1:direct, combustion only). ' +
      "Without it: each zone's own value (GB: the operator's figure).",
  },
);

const AccountingParam = Type.Union(
  ACCOUNTINGS.map((accounting) => Type.Literal(accounting)),
  {
    description:
      "`production` (default): what the zone's own plants emit per kWh they generate. " +
      '`consumption`: what its consumers use, traced through the border flows from its own ' +
      "plants and its neighbours' (methods computed:v1:consumption and " +
      'computed:v1:direct:consumption; lifecycle without basis). GB has none (404); a server ' +
      'with FLOWS=off answers 400.',
  },
);

/** On the endpoints of production values only (forecasts, schedules, streams). */
const ProductionOnlyParam = Type.Literal('production', {
  description:
    'Only `production` here: there is no consumption series of forecasts, schedules or streams ' +
    '(`consumption` is 400 unsupported param).',
});

export const LatestQuery = Type.Object({
  zone: Type.Optional(ZoneParam),
  basis: Type.Optional(BasisParam),
  accounting: Type.Optional(AccountingParam),
});
export type LatestQuery = Static<typeof LatestQuery>;

const WindowParams = {
  from: Type.Optional(
    Type.String({
      ...InstantParam,
      description: `Window start, inclusive. ${InstantParam.description} Default: 24 hours before to.`,
    }),
  ),
  to: Type.Optional(
    Type.String({
      ...InstantParam,
      description: `Window end, exclusive. ${InstantParam.description} Default: the request time.`,
    }),
  ),
};

export const MixQuery = Type.Object(
  { zone: ZoneParam, ...WindowParams, accounting: Type.Optional(AccountingParam) },
  { required: ['zone'] },
);

export const HistoryQuery = Type.Object(
  {
    zone: ZoneParam,
    ...WindowParams,
    basis: Type.Optional(BasisParam),
    accounting: Type.Optional(AccountingParam),
  },
  { required: ['zone'] },
);
export type HistoryQuery = Static<typeof HistoryQuery>;

const ZONES_TEXT = 'Comma-separated zone codes from /v1/zones (case-insensitive), or `all`.';
const ZonesParam = (extra: string) =>
  Type.String({ description: `${ZONES_TEXT} ${extra}`, examples: ['DE,FR,GB', 'all'] });

export const ExportQuery = Type.Object(
  {
    zones: ZonesParam('Rows come in the order of /v1/zones, whatever the order given.'),
    ...WindowParams,
    format: Type.Optional(
      Type.Union([Type.Literal('csv'), Type.Literal('ndjson')], {
        description: '`csv` (default) or `ndjson` (one JSON object per line).',
      }),
    ),
    basis: Type.Optional(BasisParam),
    accounting: Type.Optional(AccountingParam),
    include: Type.Optional(
      Type.Literal('mix', {
        description:
          'Adds the generation per fuel category of each row: one CSV column per category ' +
          '(empty where the interval has no value for it), or a `generation` member in NDJSON.',
      }),
    ),
  },
  { required: ['zones'] },
);

export const StreamQuery = Type.Object({
  zones: Type.Optional(ZonesParam('Default: all.')),
  basis: Type.Optional(BasisParam),
  accounting: Type.Optional(ProductionOnlyParam),
});

export const ForecastQuery = Type.Object(
  {
    zone: ZoneParam,
    basis: Type.Optional(BasisParam),
    accounting: Type.Optional(ProductionOnlyParam),
    horizon_hours: Type.Optional(
      Type.String({
        description: `Hours ahead of now, a whole number from 1 to ${FORECAST_HORIZON.max}. Default: ${FORECAST_HORIZON.default}.`,
        examples: ['24'],
      }),
    ),
  },
  { required: ['zone'] },
);

export const SkillQuery = Type.Object({
  zone: Type.Optional(Type.String({ ...ZoneParam, description: 'One zone; default: every zone.' })),
});

export const LevelQuery = Type.Object({
  zone: Type.Optional(Type.String({ ...ZoneParam, description: 'One zone; give zone or zones.' })),
  zones: Type.Optional(ZonesParam('Give zone or zones. Zones come in the order of /v1/zones.')),
  basis: Type.Optional(BasisParam),
  accounting: Type.Optional(AccountingParam),
  horizon_hours: Type.Optional(
    Type.String({
      description:
        'How far the forecast part reaches past the newest reading, a whole number from 0 to ' +
        `${LEVEL_HORIZON.max}. Default: ${LEVEL_HORIZON.default}. 0: the newest reading only.`,
      examples: ['24'],
    }),
  ),
});

export const StatsQuery = Type.Object(
  {
    zone: ZoneParam,
    ...WindowParams,
    basis: Type.Optional(BasisParam),
    accounting: Type.Optional(AccountingParam),
    energy_kwh: Type.Optional(
      Type.String({
        description:
          'Energy used over the window, kWh, above 0: adds emissions_g (spread evenly over the window).',
        examples: ['12.5'],
      }),
    ),
  },
  { required: ['zone'] },
);

export const ScheduleQuery = Type.Object(
  {
    zones: ZonesParam(
      'At most 45 (a repeat counted once). The first is the home zone, where `now` runs; ties ' +
        'go to the zone listed first.',
    ),
    duration_minutes: Type.Optional(
      Type.String({
        description:
          `How long the job runs: a whole number of minutes, 1 to ${SCHEDULE_LIMITS.maxDurationMinutes}. Rounded up to whole ` +
          `intervals of each zone. Default ${SCHEDULE_LIMITS.defaultDurationMinutes}.`,
        examples: ['90'],
      }),
    ),
    earliest: Type.Optional(
      Type.String({
        ...InstantParam,
        description: `The job starts at or after this. ${InstantParam.description} Default: the request time.`,
      }),
    ),
    deadline: Type.Optional(
      Type.String({
        ...InstantParam,
        description:
          `The job ends at or before this; at most ${SCHEDULE_LIMITS.maxAheadHours} hours after the request time and after ` +
          `earliest. ${InstantParam.description} Default: earliest + ${SCHEDULE_LIMITS.defaultWindowHours} hours (at most the ` +
          `request time + ${SCHEDULE_LIMITS.maxAheadHours} hours).`,
      }),
    ),
    interruptible: Type.Optional(
      Type.Union([Type.Literal('true'), Type.Literal('false')], {
        description: '`true`: the job may run in any intervals (the lowest). Default `false`.',
      }),
    ),
    estimator: Type.Optional(
      Type.Union([Type.Literal('expected'), Type.Literal('p90')], {
        description:
          '`expected` (default): plan on the forecast; `p90`: on its pessimistic band. ' +
          'Published values count as exact either way.',
      }),
    ),
    basis: Type.Optional(BasisParam),
    accounting: Type.Optional(ProductionOnlyParam),
    energy_kwh: Type.Optional(
      Type.String({
        description: `Energy the job uses, kWh, above 0 (at most ${limitText(SCHEDULE_LIMITS.maxEnergyKwh)}): adds \`savings.grams\`.`,
        examples: ['12.5'],
      }),
    ),
  },
  { required: ['zones'] },
);

/** Response headers, as the OpenAPI document describes them. */
const HEADER = {
  'Cache-Control': {
    type: 'string',
    description: 'How long clients and shared caches may keep the response.',
  },
  ETag: {
    type: 'string',
    description:
      'Tag of this representation (it differs per Content-Encoding); send it in If-None-Match ' +
      'to get 304 while the data is unchanged.',
  },
  'RateLimit-Limit': {
    type: 'integer',
    description: 'Requests allowed per minute per client IP on the limited endpoints.',
  },
  'RateLimit-Remaining': {
    type: 'integer',
    description: 'Requests left in the current one-minute window.',
  },
  'RateLimit-Reset': {
    type: 'integer',
    description: 'Seconds until the current window ends.',
  },
  'Retry-After': { type: 'integer', description: 'Seconds to wait before trying again.' },
  'Content-Disposition': {
    type: 'string',
    description: '`attachment; filename="..."`: browsers save the export as a file.',
  },
  Link: {
    type: 'string',
    description:
      'Only on a truncated window: `<URL>; rel="next"` (RFC 8288), the same request with ' +
      '`from` set to the ts the note names, relative to the service root.',
  },
} as const;

type HeaderName = keyof typeof HEADER;
const headers = (...names: HeaderName[]) =>
  Object.fromEntries(names.map((name) => [name, HEADER[name]]));
const RATE_LIMIT_HEADERS: HeaderName[] = [
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
];

/**
 * A 200 response of a route: its body schema, what it means, and the headers it carries
 * (`limited`: the RateLimit-* headers; `etag`: a conditional response, with its 304).
 */
export function okResponses(
  body: string,
  description: string,
  options: { limited?: boolean; etag?: boolean; link?: boolean } = {},
) {
  const names: HeaderName[] = ['Cache-Control'];
  if (options.etag) names.push('ETag');
  if (options.limited) names.push(...RATE_LIMIT_HEADERS);
  if (options.link) names.push('Link');
  return {
    200: { $ref: `${body}#`, description, headers: headers(...names) },
    ...(options.etag && {
      304: {
        type: 'null',
        description: 'Not modified: the If-None-Match tag is still current. No body.',
        headers: headers('ETag', 'Cache-Control', ...(options.limited ? RATE_LIMIT_HEADERS : [])),
      },
    }),
  };
}

/**
 * The 200 of a route that streams a body which is not JSON (`/v1/export`, `/v1/stream`): one
 * media type per format, each a string, described in words; always rate-limited.
 */
export function streamedResponses(
  media: Readonly<Record<string, string>>,
  description: string,
  options: { disposition?: boolean } = {},
) {
  const names: HeaderName[] = ['Cache-Control', ...RATE_LIMIT_HEADERS];
  if (options.disposition) names.push('Content-Disposition');
  return {
    200: {
      description,
      headers: headers(...names),
      content: Object.fromEntries(
        Object.entries(media).map(([type, text]) => [
          type,
          { schema: { type: 'string', description: text } },
        ]),
      ),
    },
  };
}

/** Error responses, each an Error body with `Cache-Control: no-store` (and what else it sends). */
export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(
    [...statuses, ...TRANSPORT_ERRORS].map((status) => [
      status,
      {
        ...Type.Ref(ErrorBody),
        description: ERROR_DESCRIPTIONS[status] ?? 'Error',
        headers: headers('Cache-Control', ...(ERROR_HEADERS[status] ?? [])),
      },
    ]),
  );

/** errorResponses, some of them worded for the route (its caps, what its 404 means). */
export const errorResponsesWorded = (
  statuses: readonly number[],
  wording: Readonly<Record<number, string>>,
) =>
  Object.fromEntries(
    Object.entries(errorResponses(...statuses)).map(([status, response]) => [
      status,
      { ...response, description: wording[Number(status)] ?? response.description },
    ]),
  );

/** What any request can get, before any route sees it. */
const TRANSPORT_ERRORS = [408, 431];

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request: a parameter is missing, repeated or unparseable.',
  404: 'Unknown zone (or, for latest, a zone with no reading on the basis asked).',
  408: 'The request line and headers did not arrive in time.',
  429: 'Rate limit exceeded; retry after the seconds in retry-after.',
  431: 'The URL or the headers are larger than 16 KB.',
  503: 'The data store is unreachable; retry after the seconds in retry-after.',
};

const ERROR_HEADERS: Record<number, HeaderName[]> = {
  429: ['Retry-After', ...RATE_LIMIT_HEADERS],
  503: ['Retry-After'],
};
