import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { CLOUD_PROVIDERS, CLOUD_REGIONS } from '../../core/cloud-regions.js';
import { ZONES } from '../../core/zones.js';
import { CACHE_CONTROL } from '../contract/headers.js';
import { jsonRoute, type LimitHook } from './route-options.js';

/** `GET /v1/zones/cloud`: the cloud regions located in the 45 zones (extensions §9). */

const CloudRegion = Type.Object(
  {
    provider: Type.Union(
      CLOUD_PROVIDERS.map((provider) => Type.Literal(provider)),
      { description: '`aws`, `gcp` (Google Cloud) or `azure`.' },
    ),
    region: Type.String({ description: "The provider's region name.", examples: ['eu-central-1'] }),
    id: Type.String({
      description: 'The region as `zone=` takes it wherever a zone code is accepted.',
      examples: ['aws:eu-central-1'],
    }),
    location: Type.String({ description: "The provider's own name of the region's location." }),
    country: Type.String({ description: 'ISO 3166-1 alpha-2.' }),
    lat: Type.Number({ description: 'Latitude of the point the region is looked up by, WGS 84.' }),
    lon: Type.Number({ description: 'Longitude of that point.' }),
    zone: Type.Union(
      ZONES.map((zone) => Type.Literal(zone.code)),
      { description: 'The zone code (of /v1/zones) the region draws its electricity from.' },
    ),
    source: Type.String({ description: 'Where the location and the zone assignment come from.' }),
    note: Type.Optional(
      Type.String({
        description:
          'Where public mappings disagree, which was chosen and why; or what else to know.',
      }),
    ),
  },
  { $id: 'CloudRegion', additionalProperties: false },
);

const CloudZonesResponse = Type.Object(
  { data: Type.Array(Type.Ref(CloudRegion)) },
  { $id: 'CloudZonesResponse', additionalProperties: false },
);
type CloudZonesResponse = Static<typeof CloudZonesResponse>;

const BODY: CloudZonesResponse = {
  data: CLOUD_REGIONS.map((entry) => ({
    provider: entry.provider,
    region: entry.region,
    id: `${entry.provider}:${entry.region}`,
    location: entry.location,
    country: entry.country,
    lat: entry.lat,
    lon: entry.lon,
    zone: entry.zone,
    source: entry.source,
    ...(entry.note !== undefined && { note: entry.note }),
  })),
};
const BODY_JSON = JSON.stringify(BODY);

export function registerCloudZones(app: FastifyInstance, limit: LimitHook): void {
  app.addSchema(CloudRegion);
  app.addSchema(CloudZonesResponse);
  app.get(
    '/v1/zones/cloud',
    jsonRoute({
      summary: 'The AWS, Google Cloud and Azure regions located in the 45 zones',
      operationId: 'listCloudZones',
      ok: [
        'CloudZonesResponse',
        'Every cloud region of the table, by provider then region name, with its zone ' +
          'and the source of the assignment.',
      ],
      cacheControl: CACHE_CONTROL.zones,
      etag: true,
      limit,
    }),
    // Serialized once (built in the schema's member order): the schema serializer compiled Ajv
    // validators on the first response, about 100 ms of the event loop (issue 21).
    async () => BODY_JSON,
  );
}
