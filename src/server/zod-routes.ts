/**
 * @module
 * Zod schemas on Fastify routes: the type provider (fastify-type-provider-zod) types handlers from the
 * `schema` a route declares, our validator compiler parses with `parseWith` (400 `invalid_request`
 * naming the field, the same messages as everywhere), and responses are sent with plain JSON.stringify:
 * response schemas document the contract in OpenAPI, they are not re-checked on the hot path.
 * Installed once by `app.ts`; every route module calls `app.withTypeProvider<ZodTypeProvider>()`.
 */
import type { FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify';
import type { z } from 'zod';
import { isCheckedBody } from './sliced-body.ts';
import { parseWith } from './validate.ts';

export type { ZodTypeProvider } from 'fastify-type-provider-zod';

/** How each part of a request is named in an error when the issue has no field path. */
const PART_NAME: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'headers' };

/**
 * Validates a request part with its Zod schema. A `TetherError` returned here reaches the error handler
 * as it is; the parsed value (transforms applied: times to epoch ms) replaces the raw one.
 */
export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  const where = PART_NAME[httpPart ?? 'body'] ?? 'body';
  return (data: unknown) => {
    // A body a route checked in slices (sliced-body.ts) is final.
    if (httpPart === 'body' && isCheckedBody(data)) return { value: data };
    try {
      return { value: parseWith(schema, data, where) };
    } catch (err) {
      return { error: err as Error };
    }
  };
};

/** Responses are JSON.stringify'd: their schemas are documentation (OpenAPI), not a second check. */
export const jsonSerializerCompiler: FastifySerializerCompiler<unknown> = () => (data) => JSON.stringify(data);
