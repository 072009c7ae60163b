import { Type, type Static } from '@sinclair/typebox';
import { BASES } from '../../../core/factors.js';
import { ACCOUNTINGS, METHODS } from '../../../core/reading.js';
import { SOURCES } from '../../../core/sources.js';
import { UNIT } from '../../../core/units.js';

/** The members and parameters that every endpoint family's schemas are made of. */

export const DateTime = Type.String({
  format: 'date-time',
  description: 'UTC, second precision, Z suffix, START of the interval.',
  examples: ['2026-11-21T13:00:00Z'],
});
export const Unit = Type.Literal(UNIT);
export const MethodName = Type.Union(
  METHODS.map((method) => Type.Literal(method)),
  { description: 'How the value was obtained; see the method table of the spec.' },
);
export const SourceName = Type.Union(SOURCES.map((source) => Type.Literal(source)));
export const Gco2 = Type.Number({
  description: 'Average carbon intensity of generation over the interval, 1 decimal.',
});

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'What went wrong.' }),
    hint: Type.Optional(Type.String({ description: 'How to fix the request.' })),
  },
  { $id: 'Error', additionalProperties: false },
);
export type ErrorBody = Static<typeof ErrorBody>;

export const ZoneParam = Type.String({
  description: 'Zone code from /v1/zones, case-insensitive, given once.',
  examples: ['DE'],
});
export const InstantParam = Type.String({
  description:
    'ISO 8601 / RFC 3339: 2026-11-21, 2026-11-21T13:00Z, 2026-11-21T13:00:00Z, ' +
    '2026-11-21T13:00:00.000Z or with an offset such as +01:00. Without Z or offset: UTC.',
  examples: ['2026-11-21T13:00:00Z'],
});

export const BasisParam = Type.Union(
  BASES.map((basis) => Type.Literal(basis)),
  {
    description:
      'Values computed from the generation mix on one basis for every zone, GB included: ' +
      '`lifecycle` (method computed:v1) or `direct` (computed:v1:direct, combustion only). ' +
      "Without it: each zone's own value (GB: the operator's figure).",
  },
);

export const AccountingParam = Type.Union(
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
export const ProductionOnlyParam = Type.Literal('production', {
  description:
    'Only `production` here: there is no consumption series of forecasts, schedules or streams ' +
    '(`consumption` is 400 unsupported param).',
});

/** Only in bodies of consumption values (extensions §15); production bodies are as before. */
export const ConsumptionMarker = Type.Literal('consumption', {
  description:
    'Present with accounting=consumption: the values are consumption-based, on `basis` ' +
    '(lifecycle unless asked).',
});

export const WindowParams = {
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

/** One zone over a window, on a basis and an accounting: the history's and the stats' query. */
export const ZoneWindowParams = {
  zone: ZoneParam,
  ...WindowParams,
  basis: Type.Optional(BasisParam),
  accounting: Type.Optional(AccountingParam),
};

const ZONES_TEXT = 'Comma-separated zone codes from /v1/zones (case-insensitive), or `all`.';
export const ZonesParam = (extra: string) =>
  Type.String({ description: `${ZONES_TEXT} ${extra}`, examples: ['DE,FR,GB', 'all'] });
