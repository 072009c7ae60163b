import { Type, type Static } from '@sinclair/typebox';
import { MAX_POINTS } from '../limits.js';
import {
  AccountingParam,
  BasisParam,
  DateTime,
  Gco2,
  MethodName,
  SourceName,
  Unit,
  ZoneParam,
  ZoneWindowParams,
} from './common.js';

/** The readings (latest, history), the zones, the status and the index of /v1. */

export const HistoryReading = Type.Object(
  { ts: DateTime, gco2eq_kwh: Gco2, method: MethodName },
  { $id: 'HistoryReading', additionalProperties: false },
);

export const ZoneReading = Type.Object(
  { zone: Type.String(), ts: DateTime, gco2eq_kwh: Gco2, method: MethodName },
  { $id: 'ZoneReading', additionalProperties: false },
);

export const LatestResponse = Type.Object(
  { unit: Unit, data: Type.Array(Type.Ref(ZoneReading)) },
  { $id: 'LatestResponse', additionalProperties: false },
);
export type LatestResponse = Static<typeof LatestResponse>;

export const HistoryResponse = Type.Object(
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
export type HistoryResponse = Static<typeof HistoryResponse>;

export const Zone = Type.Object(
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

export const StatusSource = Type.Object(
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

export const Liveness = Type.Object(
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

export const LatestQuery = Type.Object({
  zone: Type.Optional(ZoneParam),
  basis: Type.Optional(BasisParam),
  accounting: Type.Optional(AccountingParam),
});
export type LatestQuery = Static<typeof LatestQuery>;

export const HistoryQuery = Type.Object(ZoneWindowParams, { required: ['zone'] });
export type HistoryQuery = Static<typeof HistoryQuery>;
