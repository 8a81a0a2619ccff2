/**
 * @module
 * Operations routes, no key needed: liveness, readiness (the store answers), Prometheus metrics,
 * and the OpenAPI document.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { unauthenticated, unavailable } from '../../common/errors.ts';
import type { StoreLifecycle } from '../../store/store-lifecycle.ts';
import type { MemoryMetrics } from '../metrics.ts';

const text = (description: string) => ({ description, content: { 'text/plain': { schema: z.string() } } });

const digest = (text: string) => createHash('sha256').update(text).digest();

export async function opsRoutes(
  app: FastifyInstance,
  opts: { store: StoreLifecycle; metrics: MemoryMetrics; metricsToken?: string },
) {
  const expected = opts.metricsToken ? digest(`Bearer ${opts.metricsToken}`) : null;
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
  const metrics = {
    summary: 'Prometheus metrics (with --metrics-token: Authorization: Bearer <metrics token>)',
    response: { 200: text('Prometheus text exposition') },
  };
  app.get('/metrics', { config, schema: metrics }, async (req, reply) => {
    // Hashes compared, so the check takes the same time whatever the length of what was sent.
    if (expected && !timingSafeEqual(digest(req.headers.authorization ?? ''), expected)) {
      throw unauthenticated('/metrics needs Authorization: Bearer <metrics token>');
    }
    reply.type(opts.metrics.registry.contentType);
    return opts.metrics.registry.metrics();
  });
  const openapi = { summary: 'This document (OpenAPI 3.1)', response: { 200: z.record(z.string(), z.unknown()) } };
  app.get('/openapi.json', { config, schema: openapi }, async () => app.swagger());
}
