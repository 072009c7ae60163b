/**
 * Response serializers compiled once per process. Fastify compiles each route's response schemas
 * with fast-json-stringify at every start (about 1 CPU s for this API), and the CLI and the
 * tests start many apps with the same schemas: this factory hands each later app the serializer
 * an earlier one compiled, so that only the first start pays.
 */
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

// Fastify's own default: what it compiles is what a cached serializer does, byte for byte.
const buildSerializer = SerializerSelector();

/**
 * Compiled serializers, by what they are compiled from: the external schemas (`addSchema`), then
 * the route's response schema. Keyed by content, not identity, as fast-json-stringify
 * keys its own merged schemas: Fastify clones each added schema and every app builds its routes'
 * response objects anew, so no object is shared between two apps, while equal JSON schemas
 * (schemas are JSON documents) serialize alike. Two routes with one schema share one serializer.
 */
const compiledByContext = new Map<string, Map<string, ReturnType<ReturnType<SerializerFactory>>>>();

/** The `schemaController.compilersFactory.buildSerializer` of every app this process builds. */
export const buildSharedSerializer: SerializerFactory = (externalSchemas, options) => {
  const compile = buildSerializer(externalSchemas, options);
  // Fastify's `serializerOpts` (none here) may hold what JSON cannot tell apart (functions, RegExps).
  if (options !== undefined) return compile;
  const contextKey = JSON.stringify(externalSchemas);
  const serializers = compiledByContext.get(contextKey) ?? new Map();
  compiledByContext.set(contextKey, serializers);
  return (route) => {
    const schemaKey = JSON.stringify(route.schema);
    let serialize = serializers.get(schemaKey);
    if (serialize === undefined) {
      serialize = compile(route);
      serializers.set(schemaKey, serialize);
    }
    return serialize;
  };
};
