/**
 * @module
 * Operations routes, no key needed: liveness, readiness (the store answers), Prometheus metrics,
 * and the OpenAPI document.
 */
import type { FastifyInstance } from 'fastify';
import { unavailable } from '../../common/errors.ts';
import type { Store } from '../../store/store.ts';
import type { MemoryMetrics } from '../metrics.ts';
import { openApiDocument } from '../openapi.ts';

export async function opsRoutes(app: FastifyInstance, opts: { store: Store; metrics: MemoryMetrics }) {
  const pub = { config: { public: true } };
  app.get('/healthz', pub, async () => ({ status: 'ok' }));
  app.get('/readyz', pub, async () => {
    try {
      await opts.store.ping();
    } catch (err) {
      throw unavailable(`store not ready: ${(err as Error).message}`, 2);
    }
    return { status: 'ready', store: opts.store.kind };
  });
  app.get('/metrics', pub, async (_req, reply) => {
    reply.type(opts.metrics.registry.contentType);
    return opts.metrics.registry.metrics();
  });
  let doc: unknown;
  app.get('/openapi.json', pub, async () => {
    doc ??= openApiDocument();
    return doc;
  });
}
