import { build, type Schema } from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify';
import { z } from 'zod';

/**
 * A route's `serializerCompiler` for the read paths integrations poll: fast-json-stringify compiled
 * once from the JSON Schema of the route's zod response schema, in place of the app-wide zod
 * serializer (a `safeEncode` of every value, then JSON.stringify), which was the largest cost of a
 * listing. It writes the same JSON for data of the schema's shape: the properties in the schema's
 * order, unknown ones left out. It does not check the values: the route's query already gives them
 * their types. The OpenAPI target writes `nullable: true`, which fast-json-stringify reads without
 * the runtime schema matching an `anyOf` with null would need.
 */
export const fastJsonSerializerCompiler: FastifySerializerCompiler<unknown> = ({ schema, method, url }) => {
  if (!(schema instanceof z.ZodType)) throw new TypeError(`${method} ${url}: response schemas are zod schemas`);
  return build(z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'output' }) as Schema);
};
