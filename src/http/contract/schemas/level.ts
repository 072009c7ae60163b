import { Type, type Static } from '@sinclair/typebox';
import { LEVEL_HORIZON } from '../limits.js';
import { BASES } from '../../../core/factors.js';
import { LEVEL_THRESHOLDS, LEVELS } from '../../../core/level.js';
import {
  AccountingParam,
  BasisParam,
  ConsumptionMarker,
  DateTime,
  Gco2,
  MethodName,
  Unit,
  ZoneParam,
  ZonesParam,
} from './common.js';

/** /v1/intensity/level: where a value stands among the zone's last 30 days. */

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

export const LevelEntry = Type.Object(
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
