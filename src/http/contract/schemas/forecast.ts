import { Type, type Static } from '@sinclair/typebox';
import { FORECAST_HORIZON } from '../limits.js';
import { BASES } from '../../../core/factors.js';
import { UNIT } from '../../../core/units.js';
import { BasisParam, DateTime, ProductionOnlyParam, Unit, ZoneParam } from './common.js';

/** /v1/intensity/forecast and the skill of its models. */

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

export const ForecastPoint = Type.Object(
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
