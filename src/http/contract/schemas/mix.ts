import { Type, type Static } from '@sinclair/typebox';
import { MAX_POINTS } from '../limits.js';
import { CATEGORIES } from '../../../core/factors.js';
import { TRACED_CATEGORIES } from '../../../core/consumption/trace-hour.js';
import { UNIT } from '../../../core/units.js';
import { apiCategory } from '../../transport/encode.js';
import {
  AccountingParam,
  DateTime,
  MethodName,
  SourceName,
  Unit,
  WindowParams,
  ZoneParam,
} from './common.js';

/** The generation mix and the emission factors the values are computed with. */

const Category = Type.Union(
  CATEGORIES.map((category) => Type.Literal(apiCategory(category))),
  { description: 'A fuel category of the method (docs/method.md).' },
);

export const MixPoint = Type.Object(
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

export const ConsumptionMixPoint = Type.Object(
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

export const MixResponse = Type.Object(
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
          lifecycle: Type.Number({ description: `${UNIT} with the lifecycle factors.` }),
          direct: Type.Number({ description: `${UNIT} with the direct factors.` }),
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

export const MixQuery = Type.Object(
  { zone: ZoneParam, ...WindowParams, accounting: Type.Optional(AccountingParam) },
  { required: ['zone'] },
);
