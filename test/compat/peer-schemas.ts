import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

/**
 * The peers' documented responses as JSON Schema, written from their own definitions (docs/
 * compat.md cites each): Electricity Maps v3 answers as recorded in electricitymaps-contrib
 * issue #6351 and as the Carbon Aware SDK's models read them (HistoryCarbonIntensityData.cs,
 * ForecastedCarbonIntensityData.cs, ZoneData.cs); the Carbon Aware SDK WebAPI models
 * (EmissionsData, EmissionsForecastDTO, EmissionsDataDTO, CarbonIntensityDTO) and ASP.NET's
 * ValidationProblemDetails. Every shim response in the tests is checked against one of these.
 */

const EM_TIME = {
  type: 'string',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
};
const DOTNET_TIME = {
  type: 'string',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\+00:00$',
};

const emIntensity = {
  type: 'object',
  additionalProperties: false,
  required: [
    'zone',
    'carbonIntensity',
    'datetime',
    'updatedAt',
    'createdAt',
    'emissionFactorType',
    'isEstimated',
    'estimationMethod',
  ],
  properties: {
    zone: { type: 'string' },
    // The SDK reads it into an int: a fraction would fail its deserializer.
    carbonIntensity: { type: 'integer' },
    datetime: EM_TIME,
    updatedAt: EM_TIME,
    createdAt: EM_TIME,
    emissionFactorType: { enum: ['lifecycle', 'direct'] },
    isEstimated: { type: 'boolean' },
    estimationMethod: { type: ['string', 'null'] },
  },
};

const breakdown = {
  type: 'object',
  additionalProperties: { type: ['number', 'null'] },
};

const emPowerBreakdown = {
  type: 'object',
  additionalProperties: false,
  required: [
    'zone',
    'datetime',
    'updatedAt',
    'createdAt',
    'powerConsumptionBreakdown',
    'powerProductionBreakdown',
    'powerImportBreakdown',
    'powerExportBreakdown',
    'fossilFreePercentage',
    'renewablePercentage',
    'powerConsumptionTotal',
    'powerProductionTotal',
    'powerImportTotal',
    'powerExportTotal',
    'isEstimated',
    'estimationMethod',
  ],
  properties: {
    zone: { type: 'string' },
    datetime: EM_TIME,
    updatedAt: EM_TIME,
    createdAt: EM_TIME,
    powerConsumptionBreakdown: breakdown,
    powerProductionBreakdown: breakdown,
    powerImportBreakdown: breakdown,
    powerExportBreakdown: breakdown,
    fossilFreePercentage: { type: ['integer', 'null'] },
    renewablePercentage: { type: ['integer', 'null'] },
    powerConsumptionTotal: { type: ['integer', 'null'] },
    powerProductionTotal: { type: ['integer', 'null'] },
    powerImportTotal: { type: ['integer', 'null'] },
    powerExportTotal: { type: ['integer', 'null'] },
    isEstimated: { type: 'boolean' },
    estimationMethod: { type: 'null' },
  },
};

const emissionsDataDto = {
  type: 'object',
  additionalProperties: false,
  required: ['location', 'timestamp', 'duration', 'value'],
  properties: {
    location: { type: 'string' },
    timestamp: DOTNET_TIME,
    duration: { type: 'integer' },
    value: { type: 'number' },
  },
};

const PEER_SCHEMAS = {
  emLatest: emIntensity,
  emHistory: {
    type: 'object',
    additionalProperties: false,
    required: ['zone', 'history'],
    properties: { zone: { type: 'string' }, history: { type: 'array', items: emIntensity } },
  },
  emPastRange: {
    type: 'object',
    additionalProperties: false,
    required: ['zone', 'data'],
    properties: { zone: { type: 'string' }, data: { type: 'array', items: emIntensity } },
  },
  emForecast: {
    type: 'object',
    additionalProperties: false,
    required: ['zone', 'forecast', 'updatedAt'],
    properties: {
      zone: { type: 'string' },
      updatedAt: EM_TIME,
      forecast: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['carbonIntensity', 'datetime'],
          properties: { carbonIntensity: { type: 'integer' }, datetime: EM_TIME },
        },
      },
    },
  },
  emZones: {
    type: 'object',
    minProperties: 1,
    additionalProperties: {
      type: 'object',
      additionalProperties: false,
      required: ['zoneName', 'access'],
      properties: {
        zoneName: { type: 'string' },
        access: { type: 'array', items: { type: 'string' } },
      },
    },
  },
  emPowerLatest: emPowerBreakdown,
  emPowerHistory: {
    type: 'object',
    additionalProperties: false,
    required: ['zone', 'history'],
    properties: { zone: { type: 'string' }, history: { type: 'array', items: emPowerBreakdown } },
  },
  emError: {
    type: 'object',
    additionalProperties: false,
    required: ['error'],
    properties: { error: { type: 'string', minLength: 1 } },
  },
  caEmissionsData: {
    type: 'array',
    minItems: 1,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['location', 'time', 'rating', 'duration'],
      properties: {
        location: { type: 'string' },
        time: DOTNET_TIME,
        rating: { type: 'number' },
        duration: { type: 'string', pattern: '^\\d{2,}:\\d{2}:\\d{2}$' },
      },
    },
  },
  caForecasts: {
    type: 'array',
    minItems: 1,
    items: {
      type: 'object',
      additionalProperties: false,
      required: [
        'generatedAt',
        'requestedAt',
        'location',
        'dataStartAt',
        'dataEndAt',
        'windowSize',
        'optimalDataPoints',
        'forecastData',
      ],
      properties: {
        generatedAt: DOTNET_TIME,
        requestedAt: DOTNET_TIME,
        location: { type: 'string' },
        dataStartAt: DOTNET_TIME,
        dataEndAt: DOTNET_TIME,
        windowSize: { type: 'integer' },
        optimalDataPoints: { type: 'array', items: emissionsDataDto },
        forecastData: { type: 'array', items: emissionsDataDto },
      },
    },
  },
  caAverage: {
    type: 'object',
    additionalProperties: false,
    required: ['location', 'startTime', 'endTime', 'carbonIntensity'],
    properties: {
      location: { type: 'string' },
      startTime: DOTNET_TIME,
      endTime: DOTNET_TIME,
      carbonIntensity: { type: 'number' },
    },
  },
  caLocations: {
    type: 'object',
    minProperties: 1,
    additionalProperties: {
      type: 'object',
      additionalProperties: false,
      required: ['latitude', 'longitude', 'name'],
      properties: {
        latitude: { type: ['number', 'null'] },
        longitude: { type: ['number', 'null'] },
        name: { type: 'string' },
      },
    },
  },
  caProblem: {
    type: 'object',
    additionalProperties: false,
    required: ['title', 'status', 'errors'],
    properties: {
      type: { type: 'string' },
      title: { type: 'string', minLength: 1 },
      status: { type: 'integer', minimum: 400, maximum: 499 },
      detail: { type: 'string' },
      errors: {
        type: 'object',
        additionalProperties: { type: 'array', items: { type: 'string' } },
      },
    },
  },
} as const;

export type PeerSchema = keyof typeof PEER_SCHEMAS;

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
const compiled = new Map<PeerSchema, ReturnType<typeof ajv.compile>>();

/** Asserts that a body matches the peer's documented response. */
export function expectPeerShape(schema: PeerSchema, body: unknown): void {
  let validate = compiled.get(schema);
  if (!validate) compiled.set(schema, (validate = ajv.compile(PEER_SCHEMAS[schema])));
  expect(validate(body), `${schema}: ${JSON.stringify(validate.errors)}`).toBe(true);
}
