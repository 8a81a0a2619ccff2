/**
 * @module
 * Operations routes, no key needed: liveness, readiness (the store answers), Prometheus metrics,
 * and the OpenAPI document.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { unauthenticated, unavailable } from '../../common/errors.ts';
import type { Store } from '../../store/store.ts';
import type { MemoryMetrics } from '../metrics.ts';
import { openApiDocument } from '../openapi.ts';

const digest = (text: string) => createHash('sha256').update(text).digest();

export async function opsRoutes(
  app: FastifyInstance,
  opts: { store: Store; metrics: MemoryMetrics; metricsToken?: string },
) {
  const expected = opts.metricsToken ? digest(`Bearer ${opts.metricsToken}`) : null;
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
  app.get('/metrics', pub, async (req, reply) => {
    // Hashes compared, so the check takes the same time whatever the length of what was sent.
    if (expected && !timingSafeEqual(digest(req.headers.authorization ?? ''), expected)) {
      throw unauthenticated('/metrics needs Authorization: Bearer <metrics token>');
    }
    reply.type(opts.metrics.registry.contentType);
    return opts.metrics.registry.metrics();
  });
  let doc: unknown;
  app.get('/openapi.json', pub, async () => {
    doc ??= openApiDocument();
    return doc;
  });
}
