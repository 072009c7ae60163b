import { Type, type Static } from '@sinclair/typebox';
import { BASES } from '../../../core/factors.js';
import { limitText, SCHEDULE_LIMITS } from '../limits.js';
import { ConsumptionMarker, DateTime, Unit, ZoneWindowParams } from './common.js';

/** /v1/intensity/stats: the statistics of a window. */

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

export const StatsQuery = Type.Object(
  {
    ...ZoneWindowParams,
    energy_kwh: Type.Optional(
      Type.String({
        description:
          `Energy used over the window, kWh, above 0 (at most ${limitText(SCHEDULE_LIMITS.maxEnergyKwh)}): ` +
          'adds emissions_g (spread evenly over the window).',
        examples: ['12.5'],
      }),
    ),
  },
  { required: ['zone'] },
);
