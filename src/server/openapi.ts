/**
 * @module
 * The OpenAPI 3.1 document, generated from the same Zod schemas the routes parse with, so the
 * document cannot drift from what the server accepts.
 */
import { z } from 'zod';
import { exportQuery } from './schemas/events.ts';
import { createKeyBody, kubernetesAuthBody } from './schemas/keys.ts';
import { forgetBody, historyQuery, recallQuery, rememberBatchBody, rememberOneBody } from './schemas/memories.ts';
import { getRegistryQuery, putRegistryBody } from './schemas/registry.ts';

interface Op {
  method: 'get' | 'post' | 'put' | 'delete' | 'patch';
  path: string;
  summary: string;
  body?: z.ZodType;
  query?: z.ZodObject;
  auth?: boolean;
}

const OPS: Op[] = [
  {
    method: 'post',
    path: '/v1/auth/kubernetes',
    summary: 'Exchange a workload token for a short-lived key',
    body: kubernetesAuthBody,
    auth: false,
  },
  { method: 'get', path: '/v1/whoami', summary: 'What this key is' },
  { method: 'post', path: '/v1/keys', summary: 'Mint a key (admin)', body: createKeyBody },
  { method: 'get', path: '/v1/keys', summary: 'List keys (admin; never secrets)' },
  { method: 'delete', path: '/v1/keys/{id}', summary: 'Revoke a key (admin)' },
  {
    method: 'post',
    path: '/v1/memories',
    summary: 'Remember one fact or a batch',
    body: z.union([rememberOneBody, rememberBatchBody]),
  },
  { method: 'get', path: '/v1/memories', summary: 'Recall by subject/predicate or text search', query: recallQuery },
  {
    method: 'get',
    path: '/v1/memories/history',
    summary: 'Events of one subject/predicate, oldest first',
    query: historyQuery,
  },
  { method: 'post', path: '/v1/memories/forget', summary: 'Retract one value or all', body: forgetBody },
  { method: 'get', path: '/v1/registry', summary: 'Predicates in force', query: getRegistryQuery },
  { method: 'put', path: '/v1/registry', summary: "Replace a tenant's predicates (admin)", body: putRegistryBody },
  { method: 'get', path: '/v1/events', summary: 'Export events as NDJSON', query: exportQuery },
  { method: 'post', path: '/v1/events/import', summary: 'Import NDJSON events (admin)' },
  { method: 'delete', path: '/v1/namespaces/{ns}', summary: 'Purge a namespace for good (admin)' },
  { method: 'post', path: '/mcp', summary: 'MCP (Streamable HTTP, stateless): memory tools' },
  { method: 'get', path: '/healthz', summary: 'Liveness', auth: false },
  { method: 'get', path: '/readyz', summary: 'Readiness', auth: false },
  { method: 'get', path: '/metrics', summary: 'Prometheus metrics', auth: false },
];

const ERROR = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    },
  },
};

function jsonSchema(schema: z.ZodType): unknown {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
}

/** Builds the document. */
export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPS) {
    const params = op.query
      ? Object.entries(op.query.shape).map(([name, s]) => ({
          name,
          in: 'query',
          required: !(s as z.ZodType).safeParse(undefined).success,
          schema: jsonSchema(s as z.ZodType),
        }))
      : [];
    for (const m of op.path.matchAll(/\{(\w+)\}/g)) {
      params.push({ name: m[1] as string, in: 'path', required: true, schema: { type: 'string' } });
    }
    paths[op.path] ??= {};
    (paths[op.path] as Record<string, unknown>)[op.method] = {
      summary: op.summary,
      ...(op.auth === false ? { security: [] } : {}),
      ...(params.length > 0 ? { parameters: params } : {}),
      ...(op.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(op.body) } } } }
        : {}),
      responses: {
        '200': { description: 'OK' },
        default: { description: 'Error', content: { 'application/json': { schema: ERROR } } },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Tether memory server', version: '0.1.0' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths,
  };
}
