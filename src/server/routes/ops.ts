/**
 * @module
 * Operations routes, no key needed: liveness, readiness (the store answers), Prometheus metrics,
 * and the OpenAPI document.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { unavailable } from '../../common/errors.ts';
import type { Store } from '../../store/store.ts';
import type { MemoryMetrics } from '../metrics.ts';

const text = (description: string) => ({ description, content: { 'text/plain': { schema: z.string() } } });

export async function opsRoutes(app: FastifyInstance, opts: { store: Store; metrics: MemoryMetrics }) {
  const config = { public: true };
  const healthz = { summary: 'Liveness', response: { 200: z.object({ status: z.literal('ok') }) } };
  app.get('/healthz', { config, schema: healthz }, async () => ({ status: 'ok' }));
  const ready = z.object({ status: z.literal('ready'), store: z.string() });
  const readyz = { summary: 'Readiness: the store answers (503 unavailable when not)', response: { 200: ready } };
  app.get('/readyz', { config, schema: readyz }, async () => {
    try {
      await opts.store.ping();
    } catch (err) {
      throw unavailable(`store not ready: ${(err as Error).message}`, 2);
    }
    return { status: 'ready', store: opts.store.kind };
  });
  const metrics = { summary: 'Prometheus metrics', response: { 200: text('Prometheus text exposition') } };
  app.get('/metrics', { config, schema: metrics }, async (_req, reply) => {
    reply.type(opts.metrics.registry.contentType);
    return opts.metrics.registry.metrics();
  });
  const openapi = { summary: 'This document (OpenAPI 3.1)', response: { 200: z.record(z.string(), z.unknown()) } };
  app.get('/openapi.json', { config, schema: openapi }, async () => app.swagger());
}
