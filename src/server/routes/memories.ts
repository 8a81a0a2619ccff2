/**
 * @module
 * Memory routes: remember, recall (exact or text search, as_of), history, forget.
 * Thin: auth + parsed body -> engine -> wire shape.
 */
import type { FastifyInstance } from 'fastify';
import { resolveNamespace } from '../../auth/auth-context.ts';
import type { MemoryEngine } from '../../memory/engine.ts';
import type { MemoryReader } from '../../memory/recall.ts';
import { forgetBody, historyQuery, recallQuery, rememberBatchBody, rememberOneBody } from '../schemas/memories.ts';
import { toRecallQuery, toStatement, writeContext } from '../statements.ts';
import { parseWith } from '../validate.ts';
import { beliefJson, eventJson, rememberJson } from '../wire.ts';

/** Dependencies of the memory routes. */
export interface MemoryRoutesOptions {
  engine: MemoryEngine;
  reader: MemoryReader;
  /** Called with the number of events appended (metrics). */
  onAppend?: (n: number) => void;
}

export async function memoryRoutes(app: FastifyInstance, opts: MemoryRoutesOptions): Promise<void> {
  const { engine, reader } = opts;

  app.post('/v1/memories', async (req) => {
    const body = req.body as Record<string, unknown> | undefined;
    if (body && typeof body === 'object' && 'statements' in body) {
      const batch = parseWith(rememberBatchBody, body);
      const ctx = writeContext(req.auth, resolveNamespace(req.auth, batch.namespace));
      const results = await engine.remember(ctx, batch.statements.map(toStatement), 'statements');
      opts.onAppend?.(results.filter((r) => r.stored).length);
      return { results: results.map(rememberJson) };
    }
    const one = parseWith(rememberOneBody, body);
    const ctx = writeContext(req.auth, resolveNamespace(req.auth, one.namespace));
    const [result] = await engine.remember(ctx, [toStatement(one)]);
    if (result?.stored) opts.onAppend?.(1);
    return rememberJson(result!);
  });

  app.get('/v1/memories', async (req) => {
    const q = parseWith(recallQuery, req.query, 'query');
    const beliefs = await reader.recall(toRecallQuery(resolveNamespace(req.auth, q.namespace), q));
    return { beliefs: beliefs.map(beliefJson) };
  });

  app.get('/v1/memories/history', async (req) => {
    const q = parseWith(historyQuery, req.query, 'query');
    const namespace = resolveNamespace(req.auth, q.namespace);
    const events = await reader.history(namespace, q.subject, q.predicate);
    return { events: events.map(eventJson) };
  });

  app.post('/v1/memories/forget', async (req) => {
    const body = parseWith(forgetBody, req.body);
    const ctx = writeContext(req.auth, resolveNamespace(req.auth, body.namespace));
    const r = await engine.forget(ctx, { subject: body.subject, predicate: body.predicate, value: body.value });
    if (r.event) opts.onAppend?.(1);
    return { withdrawn: r.withdrawn };
  });
}
