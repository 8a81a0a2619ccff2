/**
 * @module
 * Registry routes: read the predicates in force, replace them (admin). A replacement is recorded as a
 * new version, so reads as of an earlier time still use the earlier rules.
 */
import type { FastifyInstance } from 'fastify';
import {
  type AuthContext,
  NAME_PATTERN,
  parseNamespace,
  reachesTenant,
  requireAdmin,
} from '../../auth/auth-context.ts';
import { invalidRequest, namespaceMismatch } from '../../common/errors.ts';
import type { RegistryBook } from '../../memory/registry-book.ts';
import { iso } from '../schemas/common.ts';
import { getRegistryQuery, predicateDefOf, putRegistryBody } from '../schemas/registry.ts';
import { parseWith } from '../validate.ts';
import { predicateJson } from '../wire.ts';

/** The tenant a registry call is about. */
function tenantFor(auth: AuthContext, tenant: string | undefined, namespace: string | undefined): string {
  if (tenant !== undefined && !NAME_PATTERN.test(tenant)) {
    throw invalidRequest('tenant', `'${tenant.slice(0, 80)}' is not a tenant name (lower-case letters, digits, . _ -)`);
  }
  const named = tenant ?? (namespace === undefined ? undefined : parseNamespace(namespace).tenant);
  if (auth.namespace !== null) {
    const own = auth.tenant;
    if (named !== undefined && named !== own) throw namespaceMismatch(auth.namespace, named);
    return own;
  }
  if (named === undefined) {
    if (auth.tenant === '*') throw invalidRequest('tenant', "an admin key of '*' must name a tenant");
    return auth.tenant;
  }
  if (!reachesTenant(auth, named)) throw namespaceMismatch(`${auth.tenant}:*`, named);
  return named;
}

export async function registryRoutes(app: FastifyInstance, opts: { registries: RegistryBook }) {
  app.get('/v1/registry', async (req) => {
    const q = parseWith(getRegistryQuery, req.query, 'query');
    const tenant = tenantFor(req.auth, q.tenant, q.namespace);
    const registry = await opts.registries.current(tenant);
    return { tenant, predicates: registry.predicates.map(predicateJson) };
  });

  app.put('/v1/registry', async (req) => {
    requireAdmin(req.auth);
    const body = parseWith(putRegistryBody, req.body);
    const tenant = tenantFor(req.auth, body.tenant, undefined);
    const predicates = body.predicates.map(predicateDefOf);
    const version = await opts.registries.replace(tenant, predicates);
    const registry = await opts.registries.current(tenant);
    return {
      tenant,
      version: { id: version.id, recorded_at: iso(version.recordedAt) },
      predicates: registry.predicates.map(predicateJson),
    };
  });
}
