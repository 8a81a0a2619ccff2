/**
 * @module
 * Registry routes: read the predicates in force, replace them (admin). A replacement is recorded as a
 * new version, so reads as of an earlier time still use the earlier rules. The rule of which tenant a
 * key may name is the memory calls' (`registryTenant`), shared with the MCP `list_predicates` tool.
 */
import type { FastifyInstance } from 'fastify';
import type { MemoryCalls } from '../calls/memory-calls.ts';
import { getRegistryQuery, putRegistryAnswer, putRegistryBody, registryAnswer } from '../schemas/registry.ts';
import type { ZodTypeProvider } from '../zod-routes.ts';

export async function registryRoutes(app: FastifyInstance, opts: { calls: MemoryCalls }) {
  const { calls } = opts;
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/v1/registry',
    { schema: { summary: 'Predicates in force', querystring: getRegistryQuery, response: { 200: registryAnswer } } },
    async (req) => calls.registry(req.auth, req.query),
  );
  r.put(
    '/v1/registry',
    {
      config: { admin: true },
      schema: {
        summary: "Replace a tenant's predicates (admin); GET's answer is accepted as it is",
        body: putRegistryBody,
        response: { 200: putRegistryAnswer },
      },
    },
    async (req) => calls.replaceRegistry(req.auth, req.body),
  );
}
