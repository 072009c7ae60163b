import Fastify, { type FastifyServerOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { buildSharedSerializer } from './response-serializers.js';

const SHARED: FastifyServerOptions = {
  schemaController: { compilersFactory: { buildSerializer: buildSharedSerializer } },
};

/** An external schema, as `app.addSchema` registers them: `id` names a case of this file. */
const reading = (id: string, properties: Record<string, object>) => ({
  $id: `${id}Reading`,
  type: 'object',
  properties,
  required: Object.keys(properties),
});

const DOCUMENT = { ts: '2026-11-21T13:00:00Z', value: 123.456, extra: 'not in the schema' };

/**
 * A new app with `external` added and two routes whose 200 is `{ $ref }` to it, each built anew
 * (as every app builds its routes' schemas): the serializers its routes got, and what they sent.
 */
async function startApp(options: FastifyServerOptions, external: { $id: string }) {
  const app = Fastify(options);
  app.addSchema(external);
  const serializers: Record<string, unknown> = {};
  for (const path of ['/a', '/b']) {
    const schema = { response: { 200: { $ref: `${external.$id}#`, description: 'A reading' } } };
    app.get(path, { schema }, async (_request, reply) => {
      serializers[path] = reply.getSerializationFunction('200');
      return DOCUMENT;
    });
  }
  const bodies = [];
  for (const path of ['/a', '/b']) bodies.push((await app.inject(path)).body);
  await app.close();
  return { serializers, bodies };
}

describe('buildSharedSerializer', () => {
  const properties = { ts: { type: 'string' }, value: { type: 'number' } };

  it("hands a second app the first app's serializer, which sends what Fastify's own sends", async () => {
    const first = await startApp(SHARED, reading('Reused', properties));
    const second = await startApp(SHARED, reading('Reused', properties));
    const fastifyDefault = await startApp({}, reading('Reused', properties));

    expect(first.serializers['/a']).toBeTypeOf('function');
    expect(second.serializers['/a']).toBe(first.serializers['/a']);
    // Two routes of one schema share one serializer too.
    expect(first.serializers['/b']).toBe(first.serializers['/a']);
    expect(fastifyDefault.serializers['/a']).not.toBe(first.serializers['/a']);
    expect(first.bodies).toEqual([
      '{"ts":"2026-11-21T13:00:00Z","value":123.456}',
      first.bodies[0],
    ]);
    expect(second.bodies).toEqual(first.bodies);
    expect(fastifyDefault.bodies).toEqual(first.bodies);
  });

  it('compiles anew when the external schema a route refers to says something else', async () => {
    const first = await startApp(SHARED, reading('Changed', properties));
    const changed = await startApp(SHARED, reading('Changed', { ts: { type: 'string' } }));

    expect(changed.serializers['/a']).not.toBe(first.serializers['/a']);
    expect(changed.bodies[0]).toBe('{"ts":"2026-11-21T13:00:00Z"}');
  });

  it("leaves an app with Fastify's serializerOpts to compile its own", async () => {
    const options = { ...SHARED, serializerOpts: { rounding: 'floor' as const } };
    const first = await startApp(options, reading('Optioned', properties));
    const second = await startApp(options, reading('Optioned', properties));

    expect(second.serializers['/a']).not.toBe(first.serializers['/a']);
    expect(second.bodies).toEqual(first.bodies);
  });
});
