/**
 * @module
 * The query string of routes that declare no query schema: an unknown parameter is 400 naming it
 * (`POST /v1/memories?nmespace=…` was ignored, and the write went to the key's own namespace), and a
 * parameter that names a field of the route's body is that field: `?namespace=` (a `POST /v1/resume?namespace=`
 * another agent's answers 403 `namespace_mismatch`), `PUT /v1/registry?tenant=`; given in both places and
 * different, 400. Routes
 * with a query schema check it themselves (strict objects). Installed once by `app.ts`, before routes.
 */
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { z } from 'zod';
import { invalidRequest } from '../common/errors.ts';

/** Paths left alone: the web console's files (a browser may add its own query). */
const EXEMPT = /^\/console(\/|$)/;

/** The fields every object of the body schema has (an object, or a union of objects: those all of them take). */
function bodyFields(schema: unknown): ReadonlySet<string> {
  if (schema instanceof z.ZodObject) return new Set(Object.keys(schema.shape));
  if (schema instanceof z.ZodUnion) {
    const sets = (schema.options as unknown[]).map(bodyFields);
    return new Set([...(sets[0] ?? [])].filter((k) => sets.every((set) => set.has(k))));
  }
  return new Set();
}

/** Applies the rules to one request of a route without a query schema. */
function checkQuery(req: FastifyRequest, fields: ReadonlySet<string>): void {
  const query = (req.query ?? {}) as Record<string, unknown>;
  const keys = Object.keys(query);
  for (const key of keys) {
    if (!fields.has(key)) throw invalidRequest(key, 'unknown query parameter');
  }
  if (keys.length === 0) return;
  const body = req.body ?? {};
  if (typeof body !== 'object' || Array.isArray(body)) return; // the body schema refuses it
  const merged: Record<string, unknown> = { ...body };
  for (const key of keys) {
    const given = merged[key];
    if (given !== undefined && given !== query[key]) {
      throw invalidRequest(key, 'differs between the query string and the body: give it once');
    }
    merged[key] = query[key];
  }
  req.body = merged;
}

/** Adds the check to every route registered from now on that declares no query schema. */
export function installQueryRules(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (EXEMPT.test(route.url)) return;
    const schema = route.schema as { querystring?: unknown; body?: unknown } | undefined;
    if (schema?.querystring !== undefined) return;
    const fields = bodyFields(schema?.body);
    const hook = async function queryRules(req: FastifyRequest) {
      checkQuery(req, fields);
    };
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? [hook] : [hook, ...[existing].flat()];
  });
}
