import { Type } from '@sinclair/typebox';
import {
  AccountingParam,
  BasisParam,
  ProductionOnlyParam,
  WindowParams,
  ZonesParam,
} from './common.js';

/** The queries of the endpoints that stream a body which is not JSON: /v1/export, /v1/stream. */

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
