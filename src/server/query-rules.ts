/**
 * @module
 * The query string of routes that declare no query schema: an unknown parameter is 400 naming it
 * (`POST /v1/memories?nmespace=…` was ignored, and the write went to the key's own namespace), and
 * `?namespace=` on a route whose body takes `namespace` is that field (a `POST /v1/resume?namespace=`
 * another agent's answers 403 `namespace_mismatch`; given in both places and different, 400). Routes
 * with a query schema check it themselves (strict objects). Installed once by `app.ts`, before routes.
 */
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { z } from 'zod';
import { invalidRequest } from '../common/errors.ts';

/** Paths left alone: the web console's files (a browser may add its own query). */
const EXEMPT = /^\/console(\/|$)/;

/** True when the body schema has a `namespace` field (an object, or a union of objects that all do). */
function bodyTakesNamespace(schema: unknown): boolean {
  if (schema instanceof z.ZodObject) return 'namespace' in schema.shape;
  if (schema instanceof z.ZodUnion) return (schema.options as unknown[]).every(bodyTakesNamespace);
  return false;
}

/** Applies the rules to one request of a route without a query schema. */
function checkQuery(req: FastifyRequest, namespaceInBody: boolean): void {
  const query = (req.query ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(query)) {
    if (key === 'namespace' && namespaceInBody) continue;
    throw invalidRequest(key, 'unknown query parameter');
  }
  if (!namespaceInBody || query.namespace === undefined) return;
  const fromQuery = query.namespace;
  const body = req.body ?? {};
  if (typeof body !== 'object' || Array.isArray(body)) return; // the body schema refuses it
  const given = (body as { namespace?: unknown }).namespace;
  if (given !== undefined && given !== fromQuery) {
    throw invalidRequest('namespace', 'differs between the query string and the body: give it once');
  }
  req.body = { ...body, namespace: fromQuery };
}

/** Adds the check to every route registered from now on that declares no query schema. */
export function installQueryRules(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (EXEMPT.test(route.url)) return;
    const schema = route.schema as { querystring?: unknown; body?: unknown } | undefined;
    if (schema?.querystring !== undefined) return;
    const namespaceInBody = bodyTakesNamespace(schema?.body);
    const hook = async function queryRules(req: FastifyRequest) {
      checkQuery(req, namespaceInBody);
    };
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? [hook] : [hook, ...[existing].flat()];
  });
}
