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

import { ErrorBody } from './schemas/common.js';
import { ConsumptionMixPoint, FactorsResponse, MixPoint, MixResponse } from './schemas/mix.js';
import { ForecastPoint, ForecastResponse, SkillResponse, SkillRow } from './schemas/forecast.js';
import { LevelEntry, LevelResponse } from './schemas/level.js';
import {
  HistoryReading,
  HistoryResponse,
  IndexResponse,
  LatestResponse,
  Liveness,
  StatusResponse,
  StatusSource,
  Zone,
  ZoneReading,
  ZonesResponse,
} from './schemas/readings.js';
import { ScheduleResponse, ScheduleWindow } from './schemas/schedule.js';
import { StatsResponse } from './schemas/stats.js';

export { FactorsResponse, MixQuery } from './schemas/mix.js';
export {
  ForecastQuery,
  ForecastResponse,
  SkillQuery,
  SkillResponse,
  SkillRow,
} from './schemas/forecast.js';
export { LevelQuery, LevelResponse } from './schemas/level.js';
export {
  HistoryQuery,
  IndexResponse,
  LatestQuery,
  StatusResponse,
  ZonesResponse,
} from './schemas/readings.js';
export {
  ScheduleQuery,
  ScheduleQueryOfAll,
  ScheduleResponse,
  ScheduleWindow,
} from './schemas/schedule.js';
export { StatsQuery, StatsResponse } from './schemas/stats.js';
export { ExportQuery, StreamQuery } from './schemas/streamed.js';
export {
  errorResponses,
  errorResponsesWorded,
  okResponses,
  streamedResponses,
} from './schemas/responses.js';

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
